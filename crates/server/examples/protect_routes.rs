//! idem in front of an application's own axum routes: the program idem-axum's README
//! ("Protecting your own routes") walks through. Four routes of a shop behind its own
//! authentication, each made idempotent by one layer:
//!
//! - `POST /v1/customers/{customer}/charges`, a Stripe-shaped form body, and
//!   `POST /v1/payment_intents/{intent}/confirm`, no body at all: one layer in front of both
//!   (a key is bound to its route, path parameters, query and body, so it is never another
//!   route's answer), in wait mode (a duplicate waits for the first answer instead of a 409);
//! - `POST /v1/notes`, whose rows (a note and its audit line) commit with the saved answer in
//!   one transaction (atomic mode);
//! - `POST /v1/orders/{order}/shipments`, which books a parcel with a carrier, another
//!   system: it records the booking's label (the carrier's idempotency key) as its recovery
//!   point before the call, so a retry after a lost answer asks the carrier the same
//!   question again instead of booking a second parcel (phases).
//!
//! The tenant is the account the application's auth layer authenticated (`FromExtension`).
//! The carrier is a stand-in on a port of its own ([`carrier`]), started by `main`.
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
    two_step::{Recovery, TwoStepLayer, Writes},
    with_tx,
};
use idem_store::{ErrorPolicy, RouteConfig};
use serde::{Deserialize, Serialize};

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

/// How far a shipment got: the label it is booked under, the carrier's idempotency key.
#[derive(Serialize, Deserialize)]
struct Booking {
    label: String,
}

/// The shipments route's state: the carrier's address and a client that gives up on it.
#[derive(Clone)]
pub struct Shipping {
    carrier: String,
    http: reqwest::Client,
}

impl Shipping {
    /// The carrier at `carrier` (its base URL), given `timeout` to answer.
    pub fn new(carrier: String, timeout: Duration) -> Self {
        let http = reqwest::Client::builder()
            .timeout(timeout)
            .build()
            .unwrap_or_default();
        Self { carrier, http }
    }
}

async fn ship(
    axum::extract::State(shipping): axum::extract::State<Shipping>,
    PathParam(order): PathParam<String>,
    recovery: Recovery,
) -> Result<(StatusCode, String), (StatusCode, String)> {
    let failed =
        |e: idem_server::two_step::RecoveryError| (StatusCode::SERVICE_UNAVAILABLE, e.to_string());
    // An earlier worker of this same request chose the label: use it again. Else choose one
    // and record it, durably, before the carrier hears of it.
    let booking = match recovery.get::<Booking>().map_err(failed)? {
        Some(booking) => booking,
        None => {
            let label = format!("lbl_{}", uuid::Uuid::new_v4().simple());
            let booking = Booking { label };
            recovery.save(&booking).await.map_err(failed)?;
            booking
        }
    };
    // The foreign call, under the label: asked again, the carrier answers what it booked.
    let lost = |_| {
        (
            StatusCode::BAD_GATEWAY,
            "the carrier did not answer".to_owned(),
        )
    };
    let tracking = shipping
        .http
        .post(format!("{}/bookings", shipping.carrier))
        .header("Idempotency-Key", format!("\"{}\"", booking.label))
        .send()
        .await
        .map_err(lost)?
        .error_for_status()
        .map_err(lost)?
        .text()
        .await
        .map_err(lost)?;
    let label = booking.label;
    Ok((
        StatusCode::CREATED,
        format!("{{\"order\":\"{order}\",\"label\":\"{label}\",\"tracking\":\"{tracking}\"}}"),
    ))
}

/// The carrier, a stand-in for another company's service: it books one parcel per
/// idempotency key and answers the booking's tracking number, the same one when asked again.
pub mod carrier {
    use std::{
        collections::HashMap,
        sync::{
            atomic::{AtomicBool, Ordering},
            Arc, Mutex,
        },
        time::Duration,
    };

    use axum::{extract::State, http::HeaderMap, routing::post, Router};

    /// What the carrier booked, and a fault a test can arm.
    #[derive(Clone, Default)]
    pub struct Carrier {
        /// Label → tracking number.
        pub booked: Arc<Mutex<HashMap<String, String>>>,
        /// How many times it was asked.
        pub asked: Arc<Mutex<Vec<String>>>,
        /// Book the next parcel, then answer too late for the shop (its answer is lost).
        pub lose_next_answer: Arc<AtomicBool>,
    }

    async fn book(State(carrier): State<Carrier>, headers: HeaderMap) -> String {
        let label = headers
            .get("idempotency-key")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .trim_matches('"')
            .to_owned();
        carrier.asked.lock().unwrap().push(label.clone());
        let tracking = {
            let mut booked = carrier.booked.lock().unwrap();
            let next = booked.len() + 1;
            booked
                .entry(label)
                .or_insert_with(|| format!("TRK{next:04}"))
                .clone()
        };
        if carrier.lose_next_answer.swap(false, Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_secs(2)).await;
        }
        tracking
    }

    /// The carrier's routes.
    pub fn routes(carrier: Carrier) -> Router {
        Router::new()
            .route("/bookings", post(book))
            .with_state(carrier)
    }
}

/// The shop's routes, each behind idem, all behind the application's authentication.
pub async fn app(db: Db, shipping: Shipping) -> Result<Router, idem_server::db::DbError> {
    db.migrate(&NOTES).await?;
    let layer = |name, on_error| {
        let tenant = FromExtension::new(|account: &Account| Arc::from(account.0.as_str()));
        let route = RouteConfig::required(name, on_error);
        TwoStepLayer::new(db.clone(), route, tenant, BodyLimits::default())
    };
    let idempotent = |name| layer(name, ErrorPolicy::SaveResponse);
    let payments = Router::new()
        .route("/v1/customers/{customer}/charges", post(charge))
        .route("/v1/payment_intents/{intent}/confirm", post(confirm))
        .layer(idempotent("payments").wait_for_first(Duration::from_secs(5)));
    let notes = Router::new()
        .route("/v1/notes", post(add_note))
        .layer(idempotent("notes").atomic());
    // A failure releases the claim (the carrier's answer was lost: nothing to save), so the
    // retry runs again and resumes the booking.
    let shipments = Router::new()
        .route("/v1/orders/{order}/shipments", post(ship))
        .with_state(shipping)
        .layer(layer("shipments", ErrorPolicy::ReleaseClaim));
    // Outermost, so it covers the whole request: each handler runs to completion as a task of
    // its own, so a client that goes away mid-work drops only its answer (its retry then gets
    // the replay, not a 409 for a whole lease).
    Ok(payments
        .merge(notes)
        .merge(shipments)
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
    let carrier = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let shipping = Shipping::new(
        format!("http://{}", carrier.local_addr()?),
        Duration::from_secs(1),
    );
    let routes = carrier::routes(carrier::Carrier::default());
    tokio::spawn(serve(carrier, routes, ConnLimits::default()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    println!("the shop on http://{}", listener.local_addr()?);
    serve(listener, app(db, shipping).await?, ConnLimits::default()).await;
    Ok(())
}
