//! The caller's scope as an axum extractor, for the routes that are not idempotent (the
//! views, the key state, the event stream, demo mode's switches, PayCo's ledger).
//!
//! [`Scope`] comes first in a handler's arguments (axum runs extractors in order), so a
//! caller without a tenant is refused, 401 with its challenge, before any other part of the
//! request is read: a path parameter it sent is never interpreted for it. The idempotent
//! routes read the scope in [`IdempotentRequest::read`](super::IdempotentRequest::read),
//! which also drains a refused body; both go through [`scope_of`].

use std::sync::Arc;

use axum::{
    extract::{FromRef, FromRequestParts},
    response::Response,
};
use http::request::Parts;

use super::{QueryTokenRefused, ScopeExtractor, ScopeRejection};
use crate::wire::to_response;

/// A service's scope extractor, as its state hands it to [`Scope`] (through `FromRef`).
#[derive(Clone)]
pub struct Scopes(pub Arc<dyn ScopeExtractor>);

/// The caller's scope (tenant). Rejected with [`ScopeRejection::response`]: the 401 problem
/// and its `WWW-Authenticate` challenge.
#[derive(Debug, Clone)]
pub struct Scope(pub Arc<str>);

impl<S> FromRequestParts<S> for Scope
where
    Scopes: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        let Scopes(scopes) = Scopes::from_ref(state);
        scope_of(&*scopes, parts)
            .map(Self)
            .map_err(|refused| to_response(refused.response()))
    }
}

/// The scope of the request `parts` are of. Without an `Authorization` header, a token a
/// middleware refused to take from the URL ([`QueryTokenRefused`]) makes it a refused token,
/// not a request without credentials.
pub fn scope_of(scopes: &dyn ScopeExtractor, parts: &Parts) -> Result<Arc<str>, ScopeRejection> {
    match scopes.scope_of_request(parts) {
        Err(ScopeRejection::MissingToken)
            if parts.extensions.get::<QueryTokenRefused>().is_some() =>
        {
            Err(ScopeRejection::QueryTokenRefused)
        }
        other => other,
    }
}
