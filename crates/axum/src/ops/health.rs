//! `/healthz` (the process answers) and `/readyz` (it can serve: the database answers a
//! query within [`READY_TIMEOUT`], and the service is not draining for shutdown).

use std::{
    sync::{
        atomic::{AtomicBool, Ordering},
        Arc,
    },
    time::Duration,
};

use axum::{extract::State, response::Response};
use serde_json::json;
use tokio::sync::watch;

use idem_store::http::{self, problem, HttpResponse};

use crate::{db::Db, wire, with_pool};

/// How long `/readyz` waits for the database before it says not ready.
pub const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// What the probes look at.
#[derive(Clone)]
pub struct Health {
    db: Db,
    draining: Arc<AtomicBool>,
    drain: Arc<watch::Sender<bool>>,
}

impl Health {
    /// Probes of the service whose database is `db`.
    pub fn new(db: &Db) -> Self {
        Self {
            db: db.clone(),
            draining: Arc::new(AtomicBool::new(false)),
            drain: Arc::new(watch::Sender::new(false)),
        }
    }

    /// From now on `/readyz` answers 503: the service is shutting down, so a load balancer
    /// stops sending it new requests while in-flight ones finish. Every [`Draining`]
    /// handed out resolves.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
        self.drain.send_replace(true);
    }

    /// A signal that resolves once draining starts, for responses that would otherwise
    /// never end (the event stream).
    pub fn draining(&self) -> Draining {
        Draining(Some(self.drain.subscribe()))
    }

    /// One round trip to the database (`SELECT 1`), within [`READY_TIMEOUT`].
    pub async fn database_reachable(&self) -> Result<(), String> {
        let ping = async {
            with_pool!(self.db, |pool| {
                sqlx::query_scalar::<_, i32>("SELECT 1")
                    .fetch_one(pool)
                    .await
            })
        };
        match tokio::time::timeout(READY_TIMEOUT, ping).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {READY_TIMEOUT:?}")),
        }
    }
}

/// `GET /healthz`: 200 while the process serves HTTP at all (liveness: restart it if not).
pub async fn healthz() -> Response {
    wire::to_response(wire::json(200, &json!({ "status": "ok" }), &[]))
}

/// `GET /readyz`: 200 `{"status":"ready"}` when the database answers; otherwise 503 with
/// a problem body saying why (the database, or draining) and `Retry-After`.
pub async fn readyz(State(health): State<Health>) -> Response {
    if health.draining.load(Ordering::SeqCst) {
        return wire::to_response(not_ready("shutting down"));
    }
    wire::to_response(match health.database_reachable().await {
        Ok(()) => wire::json(200, &json!({ "status": "ready" }), &[]),
        Err(why) => {
            tracing::warn!(error = %why, "not ready: database unreachable");
            not_ready(&format!("database unreachable: {why}"))
        }
    })
}

/// 503 with the reason and `Retry-After: 1`, in the store's one problem shape.
fn not_ready(detail: &str) -> HttpResponse {
    http::problem(503, problem::UNAVAILABLE, "Not ready", detail, Some(1))
}

/// Resolves when the service starts draining for shutdown ([`Health::start_draining`]).
/// Every request of a service run by [`crate::ops::serve_service`] carries one as an
/// extension: a response that streams until the client leaves (`GET /api/events`) ends
/// on it, so an open stream does not hold the shutdown for the whole drain deadline while
/// in-flight work still gets it to commit.
#[derive(Debug, Clone)]
pub struct Draining(Option<watch::Receiver<bool>>);

impl Draining {
    /// A signal that never fires (a router served without [`crate::ops::serve_service`]).
    pub fn never() -> Self {
        Self(None)
    }

    /// Wait until draining starts (at once if it has).
    pub async fn started(&mut self) {
        match &mut self.0 {
            // A dropped sender (the service is gone) counts as draining too.
            Some(rx) => {
                let _ = rx.wait_for(|draining| *draining).await;
            }
            None => std::future::pending().await,
        }
    }
}
