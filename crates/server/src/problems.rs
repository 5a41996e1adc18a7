//! The example services' own problem responses: 400 for JSON that is not a route's parameters
//! and 402 for a declined card. Every other problem (400, 401, 404, 405, 408, 409, 413, 422,
//! 500, 502, 503) is one of `idem_store::http`'s builders; these two are written by its one
//! `problem` function too, so every body has the same shape.

use idem_store::http::{problem, HttpResponse};

/// Problem `type` URIs of the example's business errors.
pub mod kind {
    /// 400: the body is JSON, but not the parameters the route takes.
    pub const INVALID_PARAMETERS: &str = "https://idem.dev/problems/invalid-parameters";
    /// 402: the card was declined. Final for this idempotency key.
    pub const PAYMENT_DECLINED: &str = "https://idem.dev/problems/payment-declined";
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
