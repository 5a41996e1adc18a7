//! What every idempotent route reads from a request before any decision: the scope (who
//! is asking), the `Idempotency-Key` (and `Repeatability-First-Sent`), and the body, each refused with a problem response
//! when it is wrong (401, 400, 413, 408); then the request is handed to the store
//! ([`IdempotentRequest::begin`]), which decides what to do with the key.
//!
//! And what every other route reads: the scope as an extractor ([`Scope`]), read before its
//! path parameters ([`PathParam`]), each refused with a problem (401 with its
//! `WWW-Authenticate` challenge, 400).

mod begin;
mod body;
mod first_sent;
mod key;
mod path;
mod scope;
mod scoped;
mod target;

use std::sync::Arc;

use axum::body::{Body, Bytes};
use http::request::Parts;
use idem_store::http::{problem_for, HttpResponse};

pub use begin::wait_through_conflicts;
pub use body::{discard_body, read_body, BodyLimits};
pub use first_sent::first_sent;
pub use key::idempotency_key;
pub use path::{invalid_path, PathParam, INVALID_PATH};
pub use scope::{
    bearer_token, BearerTenants, FromExtension, QueryTokenRefused, ScopeExtractor, ScopeRejection,
    Unscoped,
};
pub use scoped::{scope_of, Scope, Scopes};
pub use target::target_of;

/// A request an idempotent route can hand to the store.
#[derive(Debug, Clone)]
pub struct IdempotentRequest {
    /// The caller's tenant.
    pub scope: Arc<str>,
    /// The key, if the request sent one (whether the route requires it is the store's call).
    pub key: Option<String>,
    /// When the client says it first sent this operation (`Repeatability-First-Sent`, ms since
    /// the Unix epoch), for the store's expired-key guard; `None` without the header.
    pub first_sent: Option<u64>,
    /// The whole body, within the limits.
    pub body: Bytes,
    /// For a layer in front of many routes: what the request asks for besides its body
    /// (method, matched route, path parameters, query, media type), which its fingerprint
    /// binds; `None` for a route that is one operation ([`idem_store::RouteConfig::operation`]).
    pub target: Option<idem_store::RequestTarget>,
}

impl IdempotentRequest {
    /// Read scope, key and body, in that order, so an unauthenticated caller learns nothing
    /// about keys and a bad key is never parsed as parameters. A request refused before its
    /// body is read still has its body drained (within the limits, nothing kept): hyper closes
    /// a connection whose request body was left unread, and a client still writing that body
    /// would get a reset or a broken pipe instead of the 401 or 400.
    pub async fn read(
        parts: &Parts,
        body: Body,
        scopes: &dyn ScopeExtractor,
        limits: BodyLimits,
    ) -> Result<Self, HttpResponse> {
        let checked = scope_of(scopes, parts)
            .map_err(|refused| refused.response())
            .and_then(|scope| {
                let key = idempotency_key(&parts.headers).map_err(|e| problem_for(&e))?;
                let first_sent = first_sent(&parts.headers).map_err(|e| problem_for(&e))?;
                Ok((scope, key, first_sent))
            });
        let (scope, key, first_sent) = match checked {
            Ok(checked) => checked,
            Err(refusal) => {
                discard_body(&parts.headers, body, limits).await;
                return Err(refusal);
            }
        };
        let body = read_body(&parts.headers, body, limits).await?;
        Ok(Self {
            scope,
            key,
            first_sent,
            body,
            target: None,
        })
    }
}
