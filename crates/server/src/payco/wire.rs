//! PayCo's wire, shared by PayCo and by the checkout that calls it: one definition of the
//! charge request and answer.

use serde::{Deserialize, Serialize};

/// The route template PayCo's charges are fingerprinted under.
pub const CHARGE_ROUTE: &str = "POST /charges";

/// The test card token that always declines (402), as Stripe's `tok_chargeDeclined`.
/// Every other token charges.
pub const DECLINING_CARD: &str = "tok_decline";

/// The card token the examples use; it always charges.
pub const GOOD_CARD: &str = "tok_visa";

/// `POST /charges` body. Sent with `Idempotency-Key: charge:<order>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChargeRequest {
    /// The merchant's order id (for the ledger; the key is what deduplicates).
    pub order: i64,
    /// Amount in cents, 1..=100 000 000.
    pub amount: i64,
    /// A card token.
    pub card: String,
}

/// `201` body: the charge PayCo recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Charge {
    /// PayCo's id for the charge, `ch_<n>`.
    pub charge: String,
    /// The order it pays.
    pub order: i64,
    /// Amount in cents.
    pub amount: i64,
}

/// One ledger row, as `GET /ledger` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LedgerEntry {
    /// Row id.
    pub id: i64,
    /// The merchant (PayCo's scope).
    pub merchant: String,
    /// The idempotency key the charge came with.
    pub key: String,
    /// The order.
    pub order: i64,
    /// Amount in cents.
    pub amount: i64,
    /// `charged` or `declined`.
    pub outcome: String,
}

/// The largest amount PayCo accepts, in cents.
pub const MAX_AMOUNT: i64 = 100_000_000;
