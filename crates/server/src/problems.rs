//! The problem types this application sends: idem-axum's (re-exported here), the example's
//! own business error, 402 for a declined card, and the receipts service's refusals of a
//! delivery it cannot process (400, 422), served beside them at `GET /problems/{name}`
//! (every service passes [`TYPES`] as `OpsConfig::problems`).

use idem_store::http::{problem, HttpResponse};

pub use idem_axum::problems::{invalid_parameters, kind, routes, ProblemType};

/// 402: the card was declined. Final for this idempotency key (the checkout's answer is
/// idem-checkout's; PayCo sends the same type).
pub use idem_checkout::answer::PAYMENT_DECLINED;

/// 400: a delivery to the receipts service that is not one (malformed JSON, a missing or
/// mistyped field, an empty message id or one over 255 bytes).
pub const INVALID_DELIVERY: &str = "/problems/invalid-delivery";

/// 422: a delivery of a message kind the receipts service does not process.
pub const UNKNOWN_MESSAGE_KIND: &str = "/problems/unknown-message-kind";

/// The example's own problem types.
pub const TYPES: &[ProblemType] = &[
    ProblemType {
        uri: PAYMENT_DECLINED,
        status: 402,
        title: "Payment declined",
        description: "The card was declined. Final for this idempotency key: a retry gets the \
            same answer; a new attempt needs a new key.",
    },
    ProblemType {
        uri: INVALID_DELIVERY,
        status: 400,
        title: "Invalid delivery",
        description: "The receipts service could not read this delivery (malformed JSON, a \
            missing or mistyped field, an empty message id or one over 255 bytes). Nothing was \
            recorded; sending it again as it is gets the same answer.",
    },
    ProblemType {
        uri: UNKNOWN_MESSAGE_KIND,
        status: 422,
        title: "Unknown message kind",
        description: "The receipts service processes order.paid messages only. Nothing was \
            recorded; the outbox's relay leaves the message unsent and logs it.",
    },
];

/// 402 for a declined card.
pub fn payment_declined(detail: &str) -> HttpResponse {
    problem(402, PAYMENT_DECLINED, "Payment declined", detail, None)
}

/// Every problem type the application's services send: idem-axum's, then its own.
pub fn all() -> impl Iterator<Item = &'static ProblemType> {
    idem_axum::problems::TYPES.iter().chain(TYPES)
}

/// The problem type of `uri`, if a service of this application sends it.
pub fn describe(uri: &str) -> Option<&'static ProblemType> {
    all().find(|t| t.uri == uri)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_declined_card_is_described_as_it_is_sent() {
        let sent: idem_store::http::Problem =
            serde_json::from_slice(&payment_declined("x").body).unwrap();
        let t = describe(&sent.kind).expect("described");
        assert_eq!((t.status, t.title), (sent.status, sent.title.as_str()));
        assert!(
            describe("/problems/invalid-parameters").is_some(),
            "idem-axum's too"
        );
        assert_eq!(all().count(), idem_axum::problems::TYPES.len() + 3);
    }
}
