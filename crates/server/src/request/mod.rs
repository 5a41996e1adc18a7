//! What every idempotent route reads from a request before any decision: the scope (who
//! is asking), the `Idempotency-Key`, and the body, each refused with a problem response
//! when it is wrong (401, 400, 413, 408); then the request is handed to the store
//! ([`IdempotentRequest::begin`]), which decides what to do with the key.

mod begin;
mod body;
mod key;
mod scope;

use std::sync::Arc;

use axum::body::{Body, Bytes};
use http::request::Parts;
use idem_store::http::{problem_for, HttpResponse};

pub use body::{read_body, BodyLimits};
pub use key::idempotency_key;
pub use scope::{bearer_token, BearerTenants, ScopeExtractor, ScopeRejection, Unscoped};

/// A request an idempotent route can hand to the store.
#[derive(Debug, Clone)]
pub struct IdempotentRequest {
    /// The caller's tenant.
    pub scope: Arc<str>,
    /// The key, if the request sent one (whether the route requires it is the store's call).
    pub key: Option<String>,
    /// The whole body, within the limits.
    pub body: Bytes,
}

impl IdempotentRequest {
    /// Read scope, key and body, in that order, so an unauthenticated caller learns nothing
    /// about keys and a bad key costs no body read.
    pub async fn read(
        parts: &Parts,
        body: Body,
        scopes: &dyn ScopeExtractor,
        limits: BodyLimits,
    ) -> Result<Self, HttpResponse> {
        let scope = scopes
            .scope(&parts.headers)
            .map_err(|e| idem_store::http::unauthorized(&e.to_string()))?;
        let key = idempotency_key(&parts.headers).map_err(|e| problem_for(&e))?;
        let body = read_body(&parts.headers, body, limits).await?;
        Ok(Self { scope, key, body })
    }
}
