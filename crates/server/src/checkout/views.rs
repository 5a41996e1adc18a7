//! The read-only views, each scoped to the caller's tenant: orders and the claim table.

use axum::{
    extract::{Path, Request, State},
    response::Response,
};
use http::request::Parts;
use idem_store::http::HttpResponse;

use super::{orders, Checkout};
use crate::{
    sql::now_ms,
    storage_error,
    wire::{json, to_response},
};

/// Most rows a listing returns.
const LIST_LIMIT: u32 = 500;

/// `GET /api/orders`: the tenant's orders, newest first.
pub async fn list_orders(State(app): State<Checkout>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    to_response(match scope(&app, &parts) {
        Ok(scope) => match orders::list(&app.db, &scope, i64::from(LIST_LIMIT)).await {
            Ok(orders) => json(200, &orders, &[]),
            Err(e) => storage_error(&e.into()),
        },
        Err(refused) => refused,
    })
}

/// `GET /api/orders/{id}`.
pub async fn get_order(
    State(app): State<Checkout>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let (parts, _) = request.into_parts();
    to_response(match (scope(&app, &parts), id.parse::<i64>()) {
        (Err(refused), _) => refused,
        (Ok(_), Err(_)) => idem_store::http::not_found("no such order"),
        (Ok(scope), Ok(id)) => match orders::get(&app.db, &scope, id).await {
            Ok(Some(order)) => json(200, &order, &[]),
            Ok(None) => idem_store::http::not_found("no such order"),
            Err(e) => storage_error(&e.into()),
        },
    })
}

/// `GET /api/claims`: the tenant's rows of the claim table, in key order (the first 500).
pub async fn list_claims(State(app): State<Checkout>, request: Request) -> Response {
    let (parts, _) = request.into_parts();
    to_response(match scope(&app, &parts) {
        Ok(scope) => match app.db.rows(now_ms(), &scope, "", LIST_LIMIT).await {
            Ok(rows) => json(200, &rows, &[]),
            Err(e) => storage_error(&e),
        },
        Err(refused) => refused,
    })
}

/// `GET /api/claims/{key}`: one key's row.
pub async fn get_claim(
    State(app): State<Checkout>,
    Path(key): Path<String>,
    request: Request,
) -> Response {
    let (parts, _) = request.into_parts();
    to_response(match scope(&app, &parts) {
        Ok(scope) => match app.db.row(now_ms(), &scope, &key).await {
            Ok(Some(row)) => json(200, &row, &[]),
            Ok(None) => idem_store::http::not_found("no claim for this key"),
            Err(e) => storage_error(&e),
        },
        Err(refused) => refused,
    })
}

pub(super) fn scope(app: &Checkout, parts: &Parts) -> Result<std::sync::Arc<str>, HttpResponse> {
    app.tenants
        .scope(&parts.headers)
        .map_err(|e| idem_store::http::unauthorized(&e.to_string()))
}
