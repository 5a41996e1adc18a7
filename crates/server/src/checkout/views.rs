//! The read-only views, each scoped to the caller's tenant: orders and the claim table. The
//! scope is read before the path ([`Scope`] first), so a caller without a tenant learns
//! nothing from its path.

use axum::{extract::State, response::Response};

use super::{orders, Checkout};
use crate::{
    request::{PathParam, Scope},
    sql::now_ms,
    storage_error,
    wire::{json, to_response},
};

/// Most rows a listing returns.
const LIST_LIMIT: u32 = 500;

/// `GET /api/orders`: the tenant's orders, newest first.
pub async fn list_orders(State(app): State<Checkout>, Scope(scope): Scope) -> Response {
    to_response(
        match orders::list(&app.db, &scope, i64::from(LIST_LIMIT)).await {
            Ok(orders) => json(200, &orders, &[]),
            Err(e) => storage_error(&e.into()),
        },
    )
}

/// `GET /api/orders/{id}`.
pub async fn get_order(
    State(app): State<Checkout>,
    Scope(scope): Scope,
    PathParam(id): PathParam<String>,
) -> Response {
    let Ok(id) = id.parse::<i64>() else {
        return to_response(idem_store::http::not_found("no such order"));
    };
    to_response(match orders::get(&app.db, &scope, id).await {
        Ok(Some(order)) => json(200, &order, &[]),
        Ok(None) => idem_store::http::not_found("no such order"),
        Err(e) => storage_error(&e.into()),
    })
}

/// `GET /api/claims`: the tenant's rows of the claim table, in key order (the first 500).
pub async fn list_claims(State(app): State<Checkout>, Scope(scope): Scope) -> Response {
    to_response(match app.db.rows(now_ms(), &scope, "", LIST_LIMIT).await {
        Ok(rows) => json(200, &rows, &[]),
        Err(e) => storage_error(&e),
    })
}

/// `GET /api/claims/{key}`: one key's row.
pub async fn get_claim(
    State(app): State<Checkout>,
    Scope(scope): Scope,
    PathParam(key): PathParam<String>,
) -> Response {
    to_response(match app.db.row(now_ms(), &scope, &key).await {
        Ok(Some(row)) => json(200, &row, &[]),
        Ok(None) => idem_store::http::not_found("no claim for this key"),
        Err(e) => storage_error(&e),
    })
}
