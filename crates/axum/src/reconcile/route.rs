//! `GET /api/keys/{key}`: [`super::key_state`] over HTTP, scoped by the serving
//! route's own scope extractor (the checkout's: the same bearer tenant as
//! `POST /api/checkout`). A service's state hands over its table ([`KeyStates`]) and its
//! scope extractor ([`Scopes`](crate::request::Scopes)) through axum's `FromRef`. The scope
//! is read before the key in the path, so a caller without a tenant is told 401 whatever
//! path it sent. The answer names the operation whose requests the table's fingerprints bind
//! (`"operation": "POST /api/checkout"`) beside the holder's `fingerprint`: with both, a
//! client computes its own request's fingerprint by the same rule
//! ([`Fingerprint::of_canonical`](idem_store::Fingerprint::of_canonical)) and compares.

use std::borrow::Cow;

use axum::{extract::State, response::Response};
use serde::Serialize;

use super::{key_state, KeyState, KeyStateError};
use crate::{
    db::Db,
    request::{PathParam, Scope},
    sql::now_ms,
    storage_error, wire,
};

/// What `GET /api/keys/{key}` reads: the claim table, and the operation its keys are claimed
/// for.
#[derive(Clone)]
pub struct KeyStates {
    /// The claim table.
    pub db: Db,
    /// The route's operation (its [`RouteConfig::operation`](idem_store::RouteConfig::operation),
    /// e.g. `POST /api/checkout`): what a client fingerprints its request under. A key claimed
    /// on another operation of the same table has a fingerprint no request to this one shares,
    /// so its state is never taken for this operation's.
    pub operation: Cow<'static, str>,
}

/// The answer: the key's state and the operation the fingerprint binds.
#[derive(Serialize)]
struct Answer<'a> {
    #[serde(flatten)]
    state: &'a KeyState,
    operation: &'a str,
}

/// 200 with the [`super::KeyState`], 404 (no live row for this tenant), 400 (not
/// a valid key, or a path that is not UTF-8), 401 (no tenant, checked first).
pub async fn get_key_state(
    State(app): State<KeyStates>,
    Scope(scope): Scope,
    PathParam(key): PathParam<String>,
) -> Response {
    wire::to_response(match key_state(&app.db, now_ms(), &scope, &key).await {
        Ok(Some(state)) => wire::json(
            200,
            &Answer {
                state: &state,
                operation: &app.operation,
            },
            &[],
        ),
        Ok(None) => {
            idem_store::http::not_found("no live idempotency key of this tenant by that name")
        }
        Err(KeyStateError::InvalidKey(e)) => idem_store::http::problem_for(&e),
        Err(KeyStateError::Db(e)) => storage_error(&e),
    })
}
