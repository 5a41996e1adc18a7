//! Demo mode's routes, each scoped to the caller's tenant: `GET /api/demo` (the session),
//! `GET`/`PUT /api/demo/faults` (what is armed), `GET /api/demo/ledger` (PayCo's ledger rows
//! of this tenant's orders); and the `access_token` query parameter for `EventSource`.

use std::collections::HashSet;

use axum::{
    body::{Body, Bytes},
    extract::{FromRef, Request, State},
    middleware::Next,
    response::Response,
    routing::get,
    Router,
};
use http::{header::AUTHORIZATION, HeaderValue, Method};
use serde::Serialize;

use super::{tenants::is_demo_token, Demo};
use crate::{
    checkout::{
        checkpoint::faults::{ArmError, ArmedFault, FaultRequest, DEFAULT_HOLD_MS},
        orders,
    },
    payco::wire::LedgerEntry,
    problems,
    request::{QueryTokenRefused, Scope, Scopes},
    storage_error,
    wire::{json, to_response},
};

/// The demo routes, with their state.
pub fn routes<S>(demo: Demo) -> Router<S> {
    Router::new()
        .route("/api/demo", get(session))
        .route("/api/demo/faults", get(list_faults).put(set_faults))
        .route("/api/demo/ledger", get(ledger))
        .with_state(demo)
}

/// `GET /api/demo`'s body.
#[derive(Serialize)]
struct Session {
    tenant: String,
    lock_ms: u64,
    default_hold_ms: u64,
    faults: Vec<ArmedFault>,
}

/// Demo mode's routes read the tenant as the checkout does (demo sessions included).
impl FromRef<Demo> for Scopes {
    fn from_ref(demo: &Demo) -> Scopes {
        Scopes(demo.tenants.clone())
    }
}

/// `GET /api/demo`: the caller's tenant, the claims' lease and its armed faults.
async fn session(State(demo): State<Demo>, Scope(tenant): Scope) -> Response {
    to_response(json(
        200,
        &Session {
            faults: demo.faults.list(&tenant),
            tenant: tenant.to_string(),
            lock_ms: demo.lock_ms,
            default_hold_ms: DEFAULT_HOLD_MS,
        },
        &[],
    ))
}

/// `GET /api/demo/faults`: the caller's armed faults.
async fn list_faults(State(demo): State<Demo>, Scope(tenant): Scope) -> Response {
    to_response(json(200, &demo.faults.list(&tenant), &[]))
}

/// `PUT /api/demo/faults` with a JSON array of faults: replaces the caller's armed faults
/// (`[]` disarms them all) and answers what is armed now.
async fn set_faults(State(demo): State<Demo>, Scope(tenant): Scope, body: Body) -> Response {
    // A fault list is a few hundred bytes; 16 KiB is plenty.
    let body = match axum::body::to_bytes(body, 16 * 1024).await {
        Ok(body) => body,
        Err(_) => return to_response(problems::invalid_parameters("body over 16 KiB")),
    };
    to_response(match parse_faults(&body) {
        Ok(faults) => match demo.faults.set(&tenant, faults) {
            Ok(()) => json(200, &demo.faults.list(&tenant), &[]),
            Err(e @ ArmError::TooMany) => problems::invalid_parameters(&e.to_string()),
            Err(e @ ArmError::Full) => idem_store::http::problem(
                503,
                idem_store::http::problem::UNAVAILABLE,
                "Service unavailable",
                &e.to_string(),
                Some(60),
            ),
        },
        Err(detail) => problems::invalid_parameters(&detail),
    })
}

fn parse_faults(body: &Bytes) -> Result<Vec<ArmedFault>, String> {
    let requests: Vec<FaultRequest> =
        serde_json::from_slice(body).map_err(|e| format!("faults: {e}"))?;
    requests.iter().map(FaultRequest::arm).collect()
}

/// `GET /api/demo/ledger`: PayCo's ledger rows of the caller's orders (its last 500), oldest
/// first, as PayCo's own `GET /ledger` lists them. Read from PayCo at each call: PayCo's
/// database is the truth about what was charged, whatever the checkout recorded (a worker
/// that crashed after the charge recorded nothing). 502 when PayCo cannot be read.
async fn ledger(State(demo): State<Demo>, Scope(tenant): Scope) -> Response {
    let orders = match orders::list(&demo.db, &tenant, 500).await {
        Ok(orders) => orders,
        Err(e) => return to_response(storage_error(&e.into())),
    };
    let Some(first) = orders.iter().map(|o| o.id).min() else {
        return to_response(json(200, &Vec::<LedgerEntry>::new(), &[]));
    };
    to_response(match demo.payco.ledger(first).await {
        Ok(rows) => {
            let ids: HashSet<i64> = orders.iter().map(|o| o.id).collect();
            let mine: Vec<LedgerEntry> = rows
                .into_iter()
                .filter(|row| {
                    ids.contains(&row.order) && row.key == idem_checkout::charge_key(row.order)
                })
                .collect();
            json(200, &mine, &[])
        }
        Err(e) => idem_store::http::bad_gateway(&format!("PayCo's ledger: {e}"), 1),
    })
}

/// Middleware: a GET without `Authorization` whose query has `access_token=demo-<uuid>` is
/// read as `Authorization: Bearer demo-<uuid>` (RFC 6750's URI query parameter), because an
/// `EventSource` cannot send headers. Demo tokens only: any other value is not taken, so no
/// real tenant's credential is ever accepted from a URL; it is marked
/// ([`QueryTokenRefused`]), and a scoped route answers 401 with `error="invalid_token"`. (The
/// request log span is opened before this runs, so such requests log `scope="-"`.)
pub async fn access_token(mut request: Request, next: Next) -> Response {
    if request.method() == Method::GET && !request.headers().contains_key(AUTHORIZATION) {
        let given = request
            .uri()
            .query()
            .unwrap_or("")
            .split('&')
            .find_map(|pair| pair.strip_prefix("access_token="));
        let header = given
            .filter(|token| is_demo_token(token))
            .and_then(|token| HeaderValue::from_str(&format!("Bearer {token}")).ok());
        match (given, header) {
            (_, Some(value)) => {
                request.headers_mut().insert(AUTHORIZATION, value);
            }
            (Some(_), None) => {
                request.extensions_mut().insert(QueryTokenRefused);
            }
            (None, None) => {}
        }
    }
    next.run(request).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fault_lists_parse_or_say_why_not() {
        let ok = parse_faults(&Bytes::from_static(
            br#"[{"fault":"drop-response"},{"fault":"unavailable","probability":0.5}]"#,
        ))
        .unwrap();
        assert_eq!(ok.len(), 2);
        assert!(parse_faults(&Bytes::from_static(b"[]")).unwrap().is_empty());
        for bad in [
            &b"{}"[..],
            b"not json",
            br#"[{"fault":"drop-response","probability":7}]"#,
            br#"["drop-response"]"#,
        ] {
            assert!(parse_faults(&Bytes::copy_from_slice(bad)).is_err());
        }
    }
}
