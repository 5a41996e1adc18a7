//! What the relay sends and the consumer answers: one definition, shared by the checkout's
//! relay and the `receipts` service, as PayCo's wire is by PayCo and its client.

use serde::{Deserialize, Serialize};

/// The kind of the one message the checkout writes: an order was paid.
pub const ORDER_PAID: &str = "order.paid";

/// The path, under the consumer's base URL, the relay posts each message to.
pub const DELIVERIES_PATH: &str = "/deliveries";

/// `POST /deliveries` body: one outbox message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Delivery {
    /// The message's id, unique and stable across resends: the consumer's dedupe key.
    pub id: String,
    /// What happened ([`ORDER_PAID`]).
    pub kind: String,
    /// The tenant whose order it is.
    pub scope: String,
    /// The kind's fields ([`OrderPaid`] for [`ORDER_PAID`]).
    pub payload: serde_json::Value,
}

/// The payload of an [`ORDER_PAID`] message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrderPaid {
    /// The order.
    pub order: i64,
    /// Amount charged, in cents.
    pub amount: i64,
    /// PayCo's charge id.
    pub charge: String,
}

/// What the consumer did with a delivery (`200` body, both ways: acknowledge either).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Handled {
    /// First delivery: the effect ran and committed with the message id.
    Applied,
    /// Delivered before: nothing ran.
    Duplicate,
}

/// `200` body of `POST /deliveries`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ack {
    /// The message id acknowledged.
    pub message: String,
    /// What the consumer did.
    pub handled: Handled,
}
