//! The problem types this application sends: idem-axum's (re-exported here) and the example's
//! own business error, 402 for a declined card, served beside them at `GET /problems/{name}`
//! (every service passes [`TYPES`] as `OpsConfig::problems`).

use idem_store::http::{problem, HttpResponse};

pub use idem_axum::problems::{invalid_parameters, kind, routes, ProblemType};

/// 402: the card was declined. Final for this idempotency key (the checkout's answer is
/// idem-checkout's; PayCo sends the same type).
pub use idem_checkout::answer::PAYMENT_DECLINED;

/// The example's own problem types.
pub const TYPES: &[ProblemType] = &[ProblemType {
    uri: PAYMENT_DECLINED,
    status: 402,
    title: "Payment declined",
    description: "The card was declined. Final for this idempotency key: a retry gets the \
        same answer; a new attempt needs a new key.",
}];

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
        assert_eq!(all().count(), idem_axum::problems::TYPES.len() + 1);
    }
}
