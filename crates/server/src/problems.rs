//! The example services' own problem responses: 400 for JSON that is not a route's parameters
//! and 402 for a declined card. Every other problem (400, 401, 404, 405, 408, 409, 413, 422,
//! 500, 502, 503) is one of `idem_store::http`'s builders; these two are written by its one
//! `problem` function too, so every body has the same shape.

use idem_store::http::{problem, HttpResponse};

/// Problem `type` URIs of the example's business errors.
pub mod kind {
    /// 400: the body is JSON, but not the parameters the route takes.
    pub const INVALID_PARAMETERS: &str = "/problems/invalid-parameters";
    /// 402: the card was declined. Final for this idempotency key.
    pub const PAYMENT_DECLINED: &str = "/problems/payment-declined";
}

/// 400 for a JSON body that is not the route's parameters.
pub fn invalid_parameters(detail: &str) -> HttpResponse {
    problem(
        400,
        kind::INVALID_PARAMETERS,
        "Invalid parameters",
        detail,
        None,
    )
}

/// 402 for a declined card.
pub fn payment_declined(detail: &str) -> HttpResponse {
    problem(
        402,
        kind::PAYMENT_DECLINED,
        "Payment declined",
        detail,
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example's problem types follow the store's scheme: relative references under
    /// `/problems/`, which the deployer's origin resolves (crates/store/README.md).
    #[test]
    fn problem_types_are_relative_references() {
        for (r, kind) in [
            (invalid_parameters("x"), kind::INVALID_PARAMETERS),
            (payment_declined("x"), kind::PAYMENT_DECLINED),
        ] {
            let p: idem_store::http::Problem = serde_json::from_slice(&r.body).unwrap();
            assert_eq!(p.kind, kind);
            assert!(kind.starts_with("/problems/"), "{kind}");
        }
    }
}
