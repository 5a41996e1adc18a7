//! Cross-origin use, configured rather than left to luck: a browser SDK served from another
//! origin may send `Idempotency-Key`, `Repeatability-First-Sent`, `Content-Type`,
//! `Authorization` and `Last-Event-ID` (with
//! GET, POST, and PUT for demo mode's fault switches), and may read
//! `Retry-After`, `Idempotent-Replayed` and a 401's `WWW-Authenticate` (without
//! `Access-Control-Expose-Headers` a script sees none of them, and could not tell a replay,
//! wait as told, or tell a refused token from a missing one). Only the configured origins
//! are allowed; with none configured no CORS headers are sent at all.

use http::{header, HeaderName, HeaderValue, Method};
use tower_http::cors::{AllowOrigin, CorsLayer};

/// A CORS layer for `origins` (exact origins such as `http://127.0.0.1:8080`), or `None` for
/// no origins (no CORS headers at all). Origins that are not valid header values are an
/// error, so a typo fails at start-up.
pub fn cors_layer(origins: &[String]) -> Result<Option<CorsLayer>, InvalidOrigin> {
    if origins.is_empty() {
        return Ok(None);
    }
    let origins = origins
        .iter()
        .map(|o| HeaderValue::from_str(o).map_err(|_| InvalidOrigin(o.clone())))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Some(
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(origins))
            // PUT: demo mode's fault switches; Last-Event-ID: an EventSource resuming.
            .allow_methods([Method::GET, Method::POST, Method::PUT])
            .allow_headers([
                HeaderName::from_static("idempotency-key"),
                // The SDK's first-sent time, for the expired-key guard.
                HeaderName::from_static("repeatability-first-sent"),
                header::CONTENT_TYPE,
                header::AUTHORIZATION,
                HeaderName::from_static("last-event-id"),
            ])
            .expose_headers([
                header::RETRY_AFTER,
                HeaderName::from_static("idempotent-replayed"),
                header::LOCATION,
                header::WWW_AUTHENTICATE,
            ])
            .max_age(std::time::Duration::from_secs(600)),
    ))
}

/// An origin that is not a valid header value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid CORS origin {0:?}")]
pub struct InvalidOrigin(pub String);
