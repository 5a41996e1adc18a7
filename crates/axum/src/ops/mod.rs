//! Running a service in production: probes ([`health`]: `/healthz`, `/readyz`), metrics in
//! Prometheus text format ([`metrics`]: `/metrics`, from the claim table's events), the
//! problem types' descriptions (`/problems/{name}`, [`crate::problems`]), request logs with
//! scope and key on every line ([`trace`]), the background pruner
//! ([`crate::retention::pruner`]) and the application's own ([`crate::periodic::Periodic`]),
//! graceful shutdown ([`shutdown`]), and handlers that run to
//! completion when their client goes away ([`detach`]).
//!
//! [`serve_service`] wires them around a service's routes; the checkout and PayCo both run
//! through it. It decides nothing about requests: the rules stay in idem-store and `db`.

pub mod detach;
pub mod health;
pub mod metrics;
pub mod shutdown;
pub mod trace;

use std::time::{Duration, Instant};

use axum::{middleware::from_fn_with_state, routing::get, Extension, Router};
use tokio::{net::TcpListener, sync::watch};
use tower_http::cors::CorsLayer;

use crate::{
    completer::Completer,
    consumer::Consumer,
    db::Db,
    layers::with_common_layers,
    periodic::Periodic,
    retention::pruner::{self, PrunerConfig},
    serve::{serve_until, ConnLimits},
};
use detach::Detached;
use health::Health;
use metrics::Metrics;
use trace::SharedScope;

/// Operations settings of a service.
///
/// ## Default values
/// - `drain`: 10 s for in-flight requests to finish after SIGTERM (keep it under the
///   orchestrator's kill grace period, 30 s on Kubernetes).
/// - `pruner`: [`PrunerConfig::default`] (every 60 s, 1,000 rows per statement).
/// - `retention_ms`: 86,400,000 (24 h), the service's retention for routes that declare
///   none of their own ([`idem_store::StoreConfig::retention_ms`]).
/// - `first_sent_tolerance_ms`: `Some(300_000)` (5 min): the expired-key guard is on
///   ([`idem_store::first_sent`], [`idem_store::StoreConfig::first_sent_tolerance_ms`]);
///   `None` turns it off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpsConfig {
    /// The shutdown deadline.
    pub drain: Duration,
    /// The pruner's interval and batch.
    pub pruner: PrunerConfig,
    /// How long a key's row is kept after its last write, unless its route says otherwise.
    pub retention_ms: u64,
    /// The expired-key guard's tolerance for client clocks behind the server's (`None`: off).
    pub first_sent_tolerance_ms: Option<u64>,
    /// The application's own problem types, described at `GET /problems/{name}` beside this
    /// crate's ([`crate::problems`]).
    pub problems: &'static [crate::problems::ProblemType],
}

impl OpsConfig {
    /// The default drain deadline.
    pub const DEFAULT_DRAIN: Duration = Duration::from_secs(10);
}

impl Default for OpsConfig {
    fn default() -> Self {
        Self {
            drain: Self::DEFAULT_DRAIN,
            pruner: PrunerConfig::default(),
            retention_ms: idem_store::StoreConfig::DEFAULT_RETENTION_MS,
            first_sent_tolerance_ms: Some(idem_store::first_sent::DEFAULT_TOLERANCE_MS),
            problems: &[],
        }
    }
}

/// What [`serve_service`] wraps a service's routes with.
pub struct Service {
    /// The service's own routes (state applied).
    pub routes: Router,
    /// Its claim table.
    pub db: Db,
    /// Its message-id table, pruned with the claims, if it consumes messages.
    pub consumer: Option<Consumer>,
    /// Who a request belongs to, for the log lines (`None`: every line logs `scope="-"`).
    pub scopes: Option<SharedScope>,
    /// CORS for the configured origins (`None`: no CORS headers at all).
    pub cors: Option<CorsLayer>,
    /// Connection limits.
    pub conn: ConnLimits,
    /// Drain deadline and pruner.
    pub ops: OpsConfig,
    /// A completer of abandoned work, run beside the pruner (`None`: none).
    pub completer: Option<Completer>,
    /// The application's own background passes (an outbox relay), run beside the pruner and
    /// stopped with it.
    pub periodic: Vec<Periodic>,
}

/// The probe and metrics routes, and the problem types' descriptions (this crate's and the
/// application's `problems`: [`crate::problems`], `GET /problems/{name}`).
pub fn routes(
    health: Health,
    metrics: Metrics,
    problems: &'static [crate::problems::ProblemType],
) -> Router {
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz).with_state(health))
        .route("/metrics", get(metrics::metrics).with_state(metrics))
        .merge(crate::problems::routes(problems))
}

/// Serve `service` on `listener` with the probes, metrics, request logs and pruner, until
/// SIGTERM or Ctrl-C; then drain (see [`shutdown`]) and close the pool.
pub async fn serve_service(listener: TcpListener, service: Service) {
    serve_service_until(listener, service, shutdown::signal()).await;
}

/// [`serve_service`] with the shutdown trigger given (tests, embedding).
pub async fn serve_service_until(
    listener: TcpListener,
    service: Service,
    shutdown: impl std::future::Future<Output = ()>,
) {
    let Service {
        routes: app_routes,
        db,
        consumer,
        scopes,
        cors,
        conn,
        ops,
        completer,
        periodic,
    } = service;
    let metrics = Metrics::with_completer(&db, completer.as_ref().map(Completer::stats));
    let follower = metrics.spawn_follower();
    let health = Health::new(&db);
    let detached = Detached::default();
    let router = with_common_layers(
        app_routes.merge(routes(health.clone(), metrics.clone(), ops.problems)),
        cors,
    )
    .layer(from_fn_with_state(detached.clone(), detach::detach))
    .layer(from_fn_with_state(metrics, metrics::observe_latency))
    .layer(from_fn_with_state(scopes, trace::request_span))
    .layer(Extension(health.draining()));
    let (stop, stopped) = watch::channel(false);
    let completing = completer.map(|c| c.spawn(stopped.clone()));
    let passes: Vec<_> = periodic
        .into_iter()
        .map(|p| p.spawn(stopped.clone()))
        .collect();
    let pruning = pruner::spawn(db.clone(), consumer, ops.pruner, stopped);
    let draining = health.clone();
    let shutdown = async move {
        shutdown.await;
        draining.start_draining();
    };
    let drain_started = std::sync::Arc::new(std::sync::OnceLock::new());
    let started = std::sync::Arc::clone(&drain_started);
    let shutdown = async move {
        shutdown.await;
        let _ = started.set(Instant::now());
    };
    let connections_drained = serve_until(listener, router, conn, shutdown, ops.drain).await;
    // Handlers whose clients went away run on (see `detach`): they get what is left of
    // the same deadline.
    let since = drain_started.get().map_or(Duration::ZERO, Instant::elapsed);
    let work_drained = tokio::time::timeout(ops.drain.saturating_sub(since), detached.idle())
        .await
        .is_ok();
    if connections_drained && work_drained {
        tracing::info!("drained: every in-flight request finished");
    } else {
        tracing::warn!(
            deadline_ms = ops.drain.as_millis() as u64,
            "drain deadline passed; unfinished claims will be taken over after lock_ms"
        );
    }
    let _ = stop.send(true);
    let _ = pruning.await;
    if let Some(completing) = completing {
        let _ = completing.await;
    }
    for pass in passes {
        let _ = pass.await;
    }
    follower.abort();
    db.close().await;
}
