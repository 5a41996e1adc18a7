//! Metrics in Prometheus text format, derived from the claim table's event stream
//! ([`Db::subscribe`], caught up from [`Db::events_since`] before each scrape), so the request
//! path keeps no counter of its own: every decision is counted where it is logged, once.
//! Latency is the one thing the events do not carry; [`observe_latency`] measures it per
//! matched route.

use std::{
    sync::{Arc, Mutex, PoisonError},
    time::Instant,
};

use axum::{
    extract::{MatchedPath, Request, State},
    middleware::Next,
    response::{IntoResponse, Response},
};
use idem_store::{Event, EventKind};
use prometheus_client::{
    encoding::{text::encode, EncodeLabelSet},
    metrics::{counter::Counter, family::Family, histogram::Histogram},
    registry::Registry,
};
use tokio::sync::broadcast::error::RecvError;

use crate::completer::CompleterStats;
use crate::db::Db;

/// Label of a refused request: its HTTP status (`400`, `409`, `413`, `422`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabel {
    status: u16,
}

/// Labels of an HTTP request: the matched route template and the answer's status.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
    status: u16,
}

/// The counters and histograms of one service, and the cursor into its db's events.
#[derive(Clone)]
pub struct Metrics(Arc<Inner>);

struct Inner {
    db: Db,
    registry: Registry,
    counts: Counts,
    latency: Family<RouteLabels, Histogram>,
    /// The next event seq to count (events below it were counted already).
    cursor: Mutex<u64>,
}

struct Counts {
    claims: Counter,
    replays: Counter,
    rejections: Family<StatusLabel, Counter>,
    takeovers: Counter,
    fenced: Counter,
    saved: Counter,
    released: Counter,
    pruned: Counter,
    /// Events dropped from the bounded log before they were counted.
    lost: Counter,
}

/// Latency buckets in seconds: 0.5 ms to 10 s (a claim on SQLite is well under 1 ms; a
/// request waiting on PayCo or a busy database can take seconds).
const BUCKETS: [f64; 14] = [
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

impl Metrics {
    /// The metrics of the service whose claim table is `db`, counting from the db's next
    /// event. Call [`spawn_follower`](Self::spawn_follower) to count as events happen.
    pub fn new(db: &Db) -> Self {
        Self::with_completer(db, None)
    }

    /// [`new`](Self::new), with a completer's counters (`idem_completer_completed`,
    /// `idem_completer_failed`, `idem_completer_age_seconds`) when the service runs one.
    pub fn with_completer(db: &Db, completer: Option<&CompleterStats>) -> Self {
        let counts = Counts {
            claims: Counter::default(),
            replays: Counter::default(),
            rejections: Family::default(),
            takeovers: Counter::default(),
            fenced: Counter::default(),
            saved: Counter::default(),
            released: Counter::default(),
            pruned: Counter::default(),
            lost: Counter::default(),
        };
        let latency =
            Family::<RouteLabels, Histogram>::new_with_constructor(|| Histogram::new(BUCKETS));
        let mut registry = Registry::with_prefix("idem");
        let c = &counts;
        registry.register("claims", "New claims (the work ran)", c.claims.clone());
        registry.register("replays", "Saved responses replayed", c.replays.clone());
        registry.register(
            "rejections",
            "Requests refused by the rules, by status (400, 409 in flight, 413, 422 mismatch)",
            c.rejections.clone(),
        );
        registry.register("takeovers", "Stale claims taken over", c.takeovers.clone());
        registry.register(
            "fenced_writes",
            "Writes refused because the lease was lost",
            c.fenced.clone(),
        );
        registry.register("saved", "Responses saved for replay", c.saved.clone());
        registry.register(
            "released",
            "Claims released after a work error",
            c.released.clone(),
        );
        registry.register("pruned", "Rows pruned after retention", c.pruned.clone());
        registry.register(
            "db_connections_cleaned",
            "PostgreSQL connections that came back to the pool inside a transaction and were \
             rolled back before reuse (a cancelled request whose guard missed; 0 when healthy)",
            db.cleaned_counter().clone(),
        );
        registry.register(
            "events_lost",
            "Events dropped from the bounded log before the metrics counted them",
            c.lost.clone(),
        );
        if let Some(stats) = completer {
            registry.register(
                "completer_completed",
                "Abandoned claims taken over and finished by the completer",
                stats.completed.clone(),
            );
            registry.register(
                "completer_failed",
                "Abandoned claims the completer took over but could not finish",
                stats.failed.clone(),
            );
            registry.register(
                "completer_age_seconds",
                "Age of a claim's lease when the completer finished its work",
                stats.age_seconds.clone(),
            );
        }
        registry.register(
            "http_request_duration_seconds",
            "HTTP request latency by method, matched route and status",
            latency.clone(),
        );
        Self(Arc::new(Inner {
            cursor: Mutex::new(db.next_event_seq()),
            db: db.clone(),
            registry,
            counts,
            latency,
        }))
    }

    /// Count events as the db publishes them, until the db's event channel closes.
    pub fn spawn_follower(&self) -> tokio::task::JoinHandle<()> {
        let metrics = self.clone();
        let mut events = self.0.db.subscribe();
        tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(event) => metrics.count(std::slice::from_ref(&event)),
                    // Fell behind the channel: the log still holds what we missed.
                    Err(RecvError::Lagged(_)) => metrics.catch_up(),
                    Err(RecvError::Closed) => return,
                }
            }
        })
    }

    /// Count every event the log holds past the cursor.
    fn catch_up(&self) {
        let cursor = *self.0.cursor.lock().unwrap_or_else(PoisonError::into_inner);
        let events = self.0.db.events_since(cursor);
        self.count(&events);
    }

    /// Count `events` not counted yet (by seq, so the follower and a scrape's catch-up
    /// never count one twice), and the gap before them as lost.
    fn count(&self, events: &[Event]) {
        let mut cursor = self.0.cursor.lock().unwrap_or_else(PoisonError::into_inner);
        for event in events {
            if event.seq() < *cursor {
                continue;
            }
            self.0.counts.lost.inc_by(event.seq() - *cursor);
            *cursor = event.seq() + 1;
            self.count_one(event.kind());
        }
    }

    fn count_one(&self, kind: &EventKind) {
        let c = &self.0.counts;
        match kind {
            EventKind::Claimed { .. } => c.claims.inc(),
            EventKind::Replayed { .. } => c.replays.inc(),
            EventKind::Rejected { status, .. } => c
                .rejections
                .get_or_create(&StatusLabel { status: *status })
                .inc(),
            EventKind::TakenOver { .. } => c.takeovers.inc(),
            EventKind::Fenced { .. } => c.fenced.inc(),
            EventKind::Saved { .. } => c.saved.inc(),
            EventKind::Released { .. } => c.released.inc(),
            EventKind::Pruned => c.pruned.inc(),
            EventKind::Note { .. } => return,
        };
    }

    /// The text exposition (OpenMetrics text, which Prometheus scrapes).
    pub fn render(&self) -> String {
        self.catch_up();
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = encode(&mut out, &self.0.registry);
        out
    }

    fn observe(&self, method: &str, route: &str, status: u16, seconds: f64) {
        self.0
            .latency
            .get_or_create(&RouteLabels {
                method: method.to_owned(),
                route: route.to_owned(),
                status,
            })
            .observe(seconds);
    }
}

/// `GET /metrics`.
pub async fn metrics(State(metrics): State<Metrics>) -> Response {
    (
        [(
            http::header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        metrics.render(),
    )
        .into_response()
}

/// Middleware: the request's latency into the histogram, labelled with the matched route
/// template (`/api/claims/{key}`, never the raw path, so labels stay few) or `unmatched`.
pub async fn observe_latency(
    State(metrics): State<Metrics>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let method = request.method().as_str().to_owned();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_owned();
    let response = next.run(request).await;
    metrics.observe(
        &method,
        &route,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}
