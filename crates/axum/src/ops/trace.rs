//! Structured request logs: every line a request logs (this crate's, tower-http's, sqlx's)
//! is written inside one `request` span carrying the request's `scope` (tenant) and
//! idempotency `key`, so an operator greps one key's whole story.
//!
//! The scope comes from the service's own [`ScopeExtractor`] (the same one the routes use:
//! no second reading of credentials), the key from the one header parser
//! ([`crate::request::idempotency_key`]). A request without them logs `scope="-"` or
//! `key="-"`; an unparsable key logs `key="invalid"` (the route answers 400 for it).

use std::sync::Arc;

use axum::{
    extract::{Request, State},
    middleware::Next,
    response::Response,
};
use tracing::Instrument;

use crate::request::{idempotency_key, ScopeExtractor};

/// The scope extractor the span reads, shared with the routes.
pub type SharedScope = Arc<dyn ScopeExtractor>;

/// Middleware: run the request inside `request{method, path, scope, key}`.
pub async fn request_span(
    State(scopes): State<Option<SharedScope>>,
    request: Request,
    next: Next,
) -> Response {
    let headers = request.headers();
    let scope = scopes
        .as_ref()
        .and_then(|s| s.scope(headers).ok())
        .map_or_else(|| "-".to_owned(), |s| s.to_string());
    let key = match idempotency_key(headers) {
        Ok(Some(key)) => key,
        Ok(None) => "-".to_owned(),
        Err(_) => "invalid".to_owned(),
    };
    // ERROR level: a span's level only decides whether it exists, and it must exist at any
    // verbosity (RUST_LOG=warn included), or the lines inside lose their scope and key.
    let span = tracing::error_span!(
        "request",
        method = %request.method(),
        path = %request.uri().path(),
        scope = %scope,
        key = %key,
    );
    next.run(request).instrument(span).await
}
