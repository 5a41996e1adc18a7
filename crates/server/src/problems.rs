//! The server's own problem responses (400 for bad parameters, 401, 402, 404, 405, 408, 500,
//! 502, 503), next to idem-store's
//! (400, 409, 413, 422 in `idem_store::http`).
//!
//! Every body here is an `idem_store::http::Problem`, serialised the one way the store does,
//! with `application/problem+json`; only the statuses the store has no builder for are made
//! here, so the wire stays in one shape. (Requested from the store as public builders; when
//! they land these become one-line calls.)

use idem_store::http::{HttpResponse, Problem, CONTENT_TYPE, PROBLEM_JSON, RETRY_AFTER};

/// Problem `type` URIs of the server's own errors.
pub mod kind {
    /// 401: no bearer token, or one no tenant holds.
    pub const UNAUTHORIZED: &str = "https://idem.dev/problems/unauthorized";
    /// 400: the body is JSON, but not the parameters the route takes.
    pub const INVALID_PARAMETERS: &str = "https://idem.dev/problems/invalid-parameters";
    /// 402: the card was declined. Final for this idempotency key.
    pub const PAYMENT_DECLINED: &str = "https://idem.dev/problems/payment-declined";
    /// 405: the route exists, the method does not.
    pub const METHOD_NOT_ALLOWED: &str = "https://idem.dev/problems/method-not-allowed";
    /// 404: no such route or resource.
    pub const NOT_FOUND: &str = "https://idem.dev/problems/not-found";
    /// 408: the client did not send its request body in time.
    pub const REQUEST_TIMEOUT: &str = "https://idem.dev/problems/request-timeout";
    /// 500: the handler failed unexpectedly (a panic, caught).
    pub const INTERNAL: &str = "https://idem.dev/problems/internal-error";
    /// 502: the payment provider could not be reached or answered nonsense; retry.
    pub const BAD_GATEWAY: &str = "https://idem.dev/problems/payment-provider-unavailable";
    /// 503: the database is unreachable; retry after `Retry-After`.
    pub const UNAVAILABLE: &str = "https://idem.dev/problems/storage-unavailable";
}

/// 401 for a request without a known bearer token.
pub fn unauthorized(detail: &str) -> HttpResponse {
    problem(401, kind::UNAUTHORIZED, "Unauthorized", detail, None)
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

/// 405 for a known route called with another method.
pub fn method_not_allowed() -> HttpResponse {
    problem(
        405,
        kind::METHOD_NOT_ALLOWED,
        "Method not allowed",
        "this route does not take that method",
        None,
    )
}

/// 404 for an unknown route or resource.
pub fn not_found(detail: &str) -> HttpResponse {
    problem(404, kind::NOT_FOUND, "Not found", detail, None)
}

/// 408 for a body that did not arrive within the read timeout.
pub fn request_timeout() -> HttpResponse {
    problem(
        408,
        kind::REQUEST_TIMEOUT,
        "Request timeout",
        "the request body did not arrive in time",
        None,
    )
}

/// 500 for a handler that panicked.
pub fn internal() -> HttpResponse {
    problem(
        500,
        kind::INTERNAL,
        "Internal error",
        "the request failed unexpectedly; retry with the same idempotency key",
        None,
    )
}

/// 502 when the payment provider failed; the claim was released, so a retry resumes.
pub fn bad_gateway(detail: &str) -> HttpResponse {
    problem(
        502,
        kind::BAD_GATEWAY,
        "Payment provider unavailable",
        detail,
        Some(1),
    )
}

/// 503 when the database is unreachable.
pub fn unavailable(detail: &str) -> HttpResponse {
    problem(
        503,
        kind::UNAVAILABLE,
        "Storage unavailable",
        detail,
        Some(1),
    )
}

fn problem(
    status: u16,
    kind: &str,
    title: &str,
    detail: &str,
    retry_after: Option<u64>,
) -> HttpResponse {
    let body = Problem {
        kind: kind.to_owned(),
        title: title.to_owned(),
        status,
        detail: detail.to_owned(),
    };
    // A struct of strings and an integer always serialises.
    let body = serde_json::to_vec(&body).unwrap_or_default();
    let mut headers = vec![(CONTENT_TYPE.to_owned(), PROBLEM_JSON.to_owned())];
    if let Some(secs) = retry_after {
        headers.push((RETRY_AFTER.to_owned(), secs.to_string()));
    }
    HttpResponse {
        status,
        headers,
        body,
    }
}
