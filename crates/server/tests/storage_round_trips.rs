//! A replay costs one round trip, on SQLite and on PostgreSQL: the statements sqlx sends
//! (its `sqlx::query` log events, one per statement) are counted around each call.

#[path = "../../store/tests/shared/mod.rs"]
mod shared;
mod support;
mod tables;

use std::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc,
};

use idem_server::db::{Begin, Db, DbOptions, Request};
use idem_store::{ErrorPolicy, RouteConfig, SavedResponse};
use tracing_subscriber::{layer::SubscriberExt, Layer};

use tables::Kind;

static ROUTE: RouteConfig = RouteConfig::required("POST /api/checkout", ErrorPolicy::SaveResponse);
const BODY: &[u8] = br#"{"cart":"c-1","amount":4200}"#;

/// Counts the statements sqlx logs.
struct Statements(Arc<AtomicUsize>);

impl<S: tracing::Subscriber> Layer<S> for Statements {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() == "sqlx::query" {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

async fn statements_of<F: std::future::Future>(count: &AtomicUsize, f: F) -> (F::Output, usize) {
    let before = count.load(Ordering::SeqCst);
    let out = f.await;
    (out, count.load(Ordering::SeqCst) - before)
}

fn request(key: &str) -> Request<'_> {
    Request {
        scope: "tenant-a",
        key: Some(key),
        body: BODY,
        route: &ROUTE,
    }
}

/// Statements of a claim (begin + commit) and of a replay.
async fn check(db: &Db, count: &AtomicUsize) -> (usize, usize) {
    // Warm the pool: connection set-up statements are not the request's.
    let _ = db.row(0, "tenant-a", "warm-up").await.unwrap();
    let (begun, claim_statements) = statements_of(count, db.begin(0, request("k"))).await;
    let Begin::Execute(claim) = begun.unwrap() else {
        panic!("claim")
    };
    let (claim, commit_statements) = statements_of(count, claim.commit()).await;
    let claim = claim.unwrap();
    db.save(1, &claim, SavedResponse::json(201, b"{}".to_vec()))
        .await
        .unwrap();
    let (replay, replay_statements) = statements_of(count, db.begin(2, request("k"))).await;
    assert!(
        matches!(replay.unwrap(), Begin::Answer(idem_store::Begin::Replay(_))),
        "a replay"
    );
    (claim_statements + commit_statements, replay_statements)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_is_one_round_trip() {
    let count = Arc::new(AtomicUsize::new(0));
    let subscriber = tracing_subscriber::registry().with(
        Statements(Arc::clone(&count)).with_filter(tracing_subscriber::filter::LevelFilter::TRACE),
    );
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
    for kind in [Kind::Sqlite, Kind::Postgres] {
        let db = tables::fresh(kind, DbOptions::default()).await;
        let (claim, replay) = check(&db, &count).await;
        assert_eq!(
            replay, 1,
            "{kind:?}: a replay reads the row once and writes nothing"
        );
        // The claim: the read, then in its transaction (SQLite: bump the token counter),
        // INSERT, read the recovery point; the counter does see them.
        assert!(
            claim >= 3,
            "{kind:?}: {claim} statements: is the counter counting?"
        );
        println!("{kind:?}: claim {claim} statements, replay {replay}");
    }
}
