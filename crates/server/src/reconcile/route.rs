//! `GET /api/keys/{key}`: [`key_state`](super::key_state) over HTTP, scoped by the serving
//! route's own scope extractor (the checkout's: the same bearer tenant as
//! `POST /api/checkout`). A service's state hands over its table and extractor through
//! axum's `FromRef` ([`KeyStates`]).

use std::sync::Arc;

use axum::{
    extract::{Path, Request, State},
    response::Response,
};

use super::{key_state, KeyStateError};
use crate::{db::Db, request::ScopeExtractor, sql::now_ms, storage_error, wire};

/// What `GET /api/keys/{key}` reads: the claim table, and who is asking.
#[derive(Clone)]
pub struct KeyStates {
    /// The claim table.
    pub db: Db,
    /// The same scope extractor as the idempotent route whose keys these are.
    pub tenants: Arc<dyn ScopeExtractor>,
}

/// 200 with the [`KeyState`](super::KeyState), 404 (no live row for this tenant), 400 (not
/// a valid key), 401 (no tenant).
pub async fn get_key_state(
    State(app): State<KeyStates>,
    Path(key): Path<String>,
    request: Request,
) -> Response {
    let scope = match app.tenants.scope(request.headers()) {
        Ok(scope) => scope,
        Err(e) => return wire::to_response(idem_store::http::unauthorized(&e.to_string())),
    };
    wire::to_response(match key_state(&app.db, now_ms(), &scope, &key).await {
        Ok(Some(state)) => wire::json(200, &state, &[]),
        Ok(None) => {
            idem_store::http::not_found("no live idempotency key of this tenant by that name")
        }
        Err(KeyStateError::InvalidKey(e)) => idem_store::http::problem_for(&e),
        Err(KeyStateError::Db(e)) => storage_error(&e),
    })
}
