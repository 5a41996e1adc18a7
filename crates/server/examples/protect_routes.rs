//! idem in front of an application's own axum routes: the program the server README's
//! "Protecting your own routes" walks through. Three routes of a shop behind its own
//! authentication, each made idempotent by one layer:
//!
//! - `POST /v1/customers/{customer}/charges`, a Stripe-shaped form body, and
//!   `POST /v1/payment_intents/{intent}/confirm`, no body at all: one layer in front of both
//!   (a key is bound to its route, path parameters, query and body, so it is never another
//!   route's answer), in wait mode (a duplicate waits for the first answer instead of a 409);
//! - `POST /v1/notes`, whose rows (a note and its audit line) commit with the saved answer in
//!   one transaction (atomic mode).
//!
//! The tenant is the account the application's auth layer authenticated (`FromExtension`).
//! Run it: `cargo run -p idem-server --example protect_routes -- sqlite:/tmp/shop.db`, then
//! `curl -X POST -H 'Authorization: Bearer acct_1' -H 'Idempotency-Key: "k-1"' \
//!   -d amount=2590 -d currency=usd http://127.0.0.1:<port>/v1/customers/cus_1/charges`.

use std::{sync::Arc, time::Duration};

use axum::{
    extract::Request,
    http::{header, StatusCode},
    middleware::{self, Next},
    response::{IntoResponse, Response},
    routing::post,
    Router,
};
use idem_server::{
    db::{AppMigrations, Db, DbOptions, Tx},
    ops::detach::{self, Detached},
    request::{BodyLimits, FromExtension, PathParam},
    serve::{serve, ConnLimits},
    two_step::{TwoStepLayer, Writes},
    with_tx,
};
use idem_store::{ErrorPolicy, RouteConfig};

/// Who the application's authentication says is asking.
#[derive(Clone)]
pub struct Account(pub String);

/// The application's authentication (a stand-in: the bearer token is the account's name). It
/// answers its own refusals; idem never sees an unauthenticated request.
pub async fn authenticate(mut request: Request, next: Next) -> Response {
    let token = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match token.map(str::to_owned) {
        Some(account) => {
            request.extensions_mut().insert(Account(account));
            next.run(request).await
        }
        None => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, r#"Bearer realm="shop""#)],
            "sign in first",
        )
            .into_response(),
    }
}

/// The notes route's own tables.
pub const NOTES: AppMigrations = AppMigrations {
    name: "shop",
    sqlite: &[(
        1,
        "notes",
        "CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, text TEXT NOT NULL); \
         CREATE TABLE audit (note INTEGER NOT NULL, what TEXT NOT NULL)",
    )],
    postgres: &[(
        1,
        "notes",
        "CREATE TABLE notes (id BIGSERIAL PRIMARY KEY, text TEXT NOT NULL); \
         CREATE TABLE audit (note BIGINT NOT NULL, what TEXT NOT NULL)",
    )],
};

async fn charge(PathParam(customer): PathParam<String>, form: String) -> impl IntoResponse {
    // The card network would be called here, under its own idempotency key.
    (
        StatusCode::CREATED,
        format!("{{\"customer\":\"{customer}\",\"charged\":\"{form}\"}}"),
    )
}

async fn confirm(PathParam(intent): PathParam<String>) -> impl IntoResponse {
    tokio::time::sleep(Duration::from_millis(200)).await;
    format!("{{\"intent\":\"{intent}\",\"status\":\"succeeded\"}}")
}

async fn add_note(writes: Writes, text: String) -> Result<(StatusCode, String), StatusCode> {
    let mut tx = writes
        .lock()
        .await
        .map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
    let id = insert_note(&mut tx, &text)
        .await
        .map_err(|_| StatusCode::SERVICE_UNAVAILABLE)?;
    Ok((StatusCode::CREATED, format!("{{\"note\":{id}}}")))
}

/// The note and its audit line, in the claim's transaction. Both backends: `with_tx!`; an
/// application on one backend writes `tx.postgres()` or `tx.sqlite()` instead, a plain sqlx
/// connection.
async fn insert_note(tx: &mut Tx, text: &str) -> Result<i64, sqlx::Error> {
    with_tx!(tx, |conn| {
        let id: i64 = sqlx::query_scalar("INSERT INTO notes (text) VALUES ($1) RETURNING id")
            .bind(text)
            .fetch_one(&mut *conn)
            .await?;
        sqlx::query("INSERT INTO audit (note, what) VALUES ($1, 'created')")
            .bind(id)
            .execute(&mut *conn)
            .await?;
        Ok(id)
    })
}

/// The shop's routes, each behind idem, all behind the application's authentication.
pub async fn app(db: Db) -> Result<Router, idem_server::db::DbError> {
    db.migrate(&NOTES).await?;
    let idempotent = |name| {
        let tenant = FromExtension::new(|account: &Account| Arc::from(account.0.as_str()));
        let route = RouteConfig::required(name, ErrorPolicy::SaveResponse);
        TwoStepLayer::new(db.clone(), route, tenant, BodyLimits::default())
    };
    let payments = Router::new()
        .route("/v1/customers/{customer}/charges", post(charge))
        .route("/v1/payment_intents/{intent}/confirm", post(confirm))
        .layer(idempotent("payments").wait_for_first(Duration::from_secs(5)));
    let notes = Router::new()
        .route("/v1/notes", post(add_note))
        .layer(idempotent("notes").atomic());
    // Outermost, so it covers the whole request: each handler runs to completion as a task of
    // its own, so a client that goes away mid-work drops only its answer (its retry then gets
    // the replay, not a 409 for a whole lease).
    Ok(payments
        .merge(notes)
        .layer(middleware::from_fn(authenticate))
        .layer(middleware::from_fn_with_state(
            Detached::default(),
            detach::detach,
        )))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "sqlite:shop.db".to_owned());
    let db = Db::open(&url, DbOptions::default()).await?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("the shop on http://{}", listener.local_addr()?);
    serve(listener, app(db).await?, ConnLimits::default()).await;
    Ok(())
}
