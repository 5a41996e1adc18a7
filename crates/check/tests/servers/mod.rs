//! The servers the tool is tried on, each a real HTTP server on a free port of 127.0.0.1:
//! one built with idem-axum (every case should pass) and three with a classic bug of the
//! lesson (the tool must find it): one that ignores keys (every attempt is a new operation,
//! as a page minting a key per attempt makes it), one that looks a key up and inserts it
//! later (SELECT then INSERT, no fingerprint check, no 409), and one that forgets keys after
//! a retention shorter than the clients' retry window.
//!
//! Each records its effects (a charge per run of its work) and lists them at
//! `GET /effects`, `[{"amount": …}]`, the field the tool attributes them by.

#![allow(dead_code)]

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{
    body::Bytes,
    extract::State,
    http::{HeaderMap, StatusCode},
    response::{IntoResponse, Response},
    routing::{get, post},
    Json, Router,
};
use idem_check::config::Config;
use serde_json::{json, Value};

/// The effects a server recorded.
#[derive(Clone, Default)]
pub struct Ledger(Arc<Mutex<Vec<Value>>>);

impl Ledger {
    fn charge(&self, body: &[u8]) -> Value {
        let amount = serde_json::from_slice::<Value>(body)
            .ok()
            .and_then(|v| v.get("amount").cloned())
            .unwrap_or(Value::Null);
        let mut rows = self.0.lock().unwrap();
        let row = json!({"charge": format!("ch_{}", rows.len() + 1), "amount": amount});
        rows.push(row.clone());
        row
    }

    pub fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }
}

async fn effects(State(ledger): State<Ledger>) -> Json<Value> {
    Json(Value::Array(ledger.0.lock().unwrap().clone()))
}

/// Serve `app` on a free port; its base URL.
pub async fn spawn(app: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    base
}

/// A configuration for a server with `POST /pay` and `GET /effects`, its chaos phase small
/// and quick.
pub fn config(base: &str, seed: u64) -> Config {
    let mut config: Config = serde_json::from_value(json!({
        "target": base,
        "request": {
            "path": "/pay",
            "headers": {"Authorization": "Bearer token-a", "Content-Type": "application/json"},
            "body": r#"{"cart":"{{fresh}}","amount":{{n}}}"#
        },
        "second_tenant": {"Authorization": "Bearer token-b"},
        "slow": {"headers": {"X-Delay-Ms": "600"}},
        "effects": {"url": "/effects", "list": "", "field": "amount"},
        "key_state": {"path": "/keys/{key}"},
        "chaos": {
            "operations": 16, "concurrency": 8, "attempt_timeout_ms": 700,
            "retry_window_ms": 12000, "max_ms": 60000
        }
    }))
    .unwrap();
    config.chaos.seed = Some(seed);
    config
}

/// How long the request asks the work to take (`X-Delay-Ms`).
fn delay(headers: &HeaderMap) -> Duration {
    let ms = headers
        .get("x-delay-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    Duration::from_millis(ms)
}

/// Slowness armed by a request (`PUT /slow` with a number of ms): the next `/pay` takes that
/// long, as a fault switch of a test server does.
#[derive(Clone, Default)]
pub struct Armed(Arc<Mutex<Option<Duration>>>);

impl Armed {
    fn take(&self) -> Duration {
        self.0.lock().unwrap().take().unwrap_or_default()
    }
}

async fn arm(State(armed): State<Armed>, body: String) -> StatusCode {
    match body.trim().parse() {
        Ok(ms) => {
            *armed.0.lock().unwrap() = Some(Duration::from_millis(ms));
            StatusCode::NO_CONTENT
        }
        Err(_) => StatusCode::BAD_REQUEST,
    }
}

/// The key as sent, if any.
fn key_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get("idempotency-key")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
}

/// A charge, answered 201 with its row.
fn charged(row: Value) -> Response {
    (StatusCode::CREATED, Json(row)).into_response()
}

/// Ignores keys: every request runs.
pub fn forgetful(ledger: Ledger) -> Router {
    async fn pay(State(ledger): State<Ledger>, headers: HeaderMap, body: Bytes) -> Response {
        tokio::time::sleep(delay(&headers)).await;
        charged(ledger.charge(&body))
    }
    Router::new()
        .route("/pay", post(pay))
        .route("/effects", get(effects))
        .with_state(ledger)
}

/// What the key-keeping naive servers remember of a key: its answer and when it was saved.
#[derive(Clone, Default)]
struct Keys(Arc<Mutex<HashMap<String, (Instant, Value)>>>);

#[derive(Clone)]
struct Naive {
    ledger: Ledger,
    keys: Keys,
    /// How long a key is kept (`None`: for ever).
    retention: Option<Duration>,
}

/// Looks the key up, runs the work, then stores the key: two requests under one key that
/// both look before either stores both run. Replays whatever was stored under the key,
/// whatever the body. Refuses a request without a key.
pub fn select_then_insert(ledger: Ledger) -> Router {
    naive(ledger, None)
}

/// As [`select_then_insert`], and a key is forgotten `retention` after it was stored.
pub fn short_retention(ledger: Ledger, retention: Duration) -> Router {
    naive(ledger, Some(retention))
}

fn naive(ledger: Ledger, retention: Option<Duration>) -> Router {
    async fn pay(State(naive): State<Naive>, headers: HeaderMap, body: Bytes) -> Response {
        let Some(key) = key_of(&headers) else {
            return (StatusCode::BAD_REQUEST, "key missing").into_response();
        };
        let found = {
            let mut keys = naive.keys.0.lock().unwrap();
            if let Some(retention) = naive.retention {
                keys.retain(|_, (at, _)| at.elapsed() < retention);
            }
            keys.get(&key).map(|(_, row)| row.clone())
        };
        if let Some(row) = found {
            let mut replay = charged(row);
            replay
                .headers_mut()
                .insert("idempotent-replayed", "true".parse().unwrap());
            return replay;
        }
        tokio::time::sleep(delay(&headers) + Duration::from_millis(30)).await;
        let row = naive.ledger.charge(&body);
        let stored = (Instant::now(), row.clone());
        naive.keys.0.lock().unwrap().insert(key, stored);
        charged(row)
    }
    Router::new()
        .route("/pay", post(pay))
        .route("/effects", get(effects).with_state(ledger.clone()))
        .with_state(Naive {
            ledger,
            keys: Keys::default(),
            retention,
        })
}

/// The page's origin the idem-axum server allows.
pub const ORIGIN: &str = "http://127.0.0.1:9";

/// Built with idem-axum: `POST /pay` and `POST /pay/again` behind one `TwoStepLayer` on
/// SQLite in `dir`, tenants from bearer tokens, every work run to its end (`detach`), CORS
/// for [`ORIGIN`]; `PUT /slow` arms slowness for the next payment; `GET /keys/{key}` the key
/// state, naming `POST /pay` as the README says.
pub async fn with_idem(ledger: Ledger, dir: &std::path::Path) -> Router {
    with_idem_naming(ledger, dir, "POST /pay").await
}

/// [`with_idem`] whose key-state endpoint names `operation`.
pub async fn with_idem_naming(
    ledger: Ledger,
    dir: &std::path::Path,
    operation: &'static str,
) -> Router {
    use axum::extract::FromRef;
    use idem_axum::{
        db::{Db, DbOptions},
        ops::detach::{self, Detached},
        reconcile::route::{get_key_state, KeyStates},
        request::{BearerTenants, BodyLimits, Scopes},
        two_step::TwoStepLayer,
    };

    /// What `GET /keys/{key}` reads: the table and the tenants, as the layer reads them.
    #[derive(Clone)]
    struct Reconcile {
        states: KeyStates,
        scopes: Scopes,
    }
    impl FromRef<Reconcile> for KeyStates {
        fn from_ref(r: &Reconcile) -> Self {
            r.states.clone()
        }
    }
    impl FromRef<Reconcile> for Scopes {
        fn from_ref(r: &Reconcile) -> Self {
            r.scopes.clone()
        }
    }
    use idem_store::{ErrorPolicy, RouteConfig};

    async fn pay(
        State((ledger, armed)): State<(Ledger, Armed)>,
        headers: HeaderMap,
        body: Bytes,
    ) -> Response {
        tokio::time::sleep(delay(&headers) + armed.take()).await;
        charged(ledger.charge(&body))
    }
    let armed = Armed::default();
    let url = format!("sqlite:{}", dir.join("idem.db").display());
    let db = Db::open(&url, DbOptions::default()).await.unwrap();
    let tenants = BearerTenants::new()
        .with("token-a", "tenant-a")
        .with("token-b", "tenant-b");
    let route = RouteConfig::required("pay", ErrorPolicy::SaveResponse);
    let reconcile = Reconcile {
        states: KeyStates {
            db: db.clone(),
            operation: operation.into(),
        },
        scopes: Scopes(Arc::new(tenants.clone())),
    };
    let paying = Router::new()
        .route("/pay", post(pay))
        .route("/pay/again", post(pay))
        .with_state((ledger.clone(), armed.clone()))
        .layer(TwoStepLayer::new(db, route, tenants, BodyLimits::default()));
    Router::new()
        .route("/effects", get(effects))
        .with_state(ledger)
        .route("/slow", axum::routing::put(arm).with_state(armed))
        .route("/keys/{key}", get(get_key_state).with_state(reconcile))
        .merge(paying)
        .layer(axum::middleware::from_fn_with_state(
            Detached::default(),
            detach::detach,
        ))
        .layer(
            idem_axum::cors::cors_layer(&[ORIGIN.to_owned()])
                .unwrap()
                .unwrap(),
        )
}
