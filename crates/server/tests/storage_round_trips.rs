//! Statements per request, counted, on SQLite and on PostgreSQL: the statements sqlx sends
//! (its `sqlx::query` log events, one per statement) are counted around each step of the
//! example checkout's storage sequence, and pinned, so a statement added to a request turns
//! this red. Why each one is there: crates/server/README.md, "Statements per request".
//!
//! `BEGIN` is not a `sqlx::query` event on either backend (sqlx's transaction managers send
//! it themselves), so each transaction's `BEGIN` is counted by hand in the README; `COMMIT`
//! is an event on PostgreSQL only.

#[path = "../../store/tests/shared/mod.rs"]
mod shared;
mod support;
mod tables;

use std::sync::{
    atomic::{AtomicUsize, Ordering},
    Arc,
};

use idem_server::{
    checkout::{self, orders, params::CheckoutRequest},
    db::{Begin, Db, DbOptions, Request},
};
use idem_store::{ErrorPolicy, RouteConfig, SavedResponse};
use tracing_subscriber::{layer::SubscriberExt, Layer};

use tables::Kind;

static ROUTE: RouteConfig = RouteConfig::required("POST /api/checkout", ErrorPolicy::SaveResponse);
const BODY: &[u8] = br#"{"cart":"c-1","amount":4200,"card":"tok_visa"}"#;

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

/// Statements of each step of one keyed first request, as the checkout makes it, then of a
/// replay and of a 409.
#[derive(Debug, PartialEq, Eq)]
struct Counted {
    /// The read and the claim (`Db::begin`).
    begin: usize,
    /// The route's order and the recovery point, then the claim's commit.
    phase_one: usize,
    /// The fenced commit with the order's settlement (`Db::commit_with`).
    commit: usize,
    replay: usize,
    conflict: usize,
}

async fn count_steps(db: &Db, count: &AtomicUsize) -> Counted {
    db.migrate(&checkout::SCHEMA).await.expect("orders table");
    // Warm the pool: connection set-up statements are not the request's.
    let _ = db.row(0, "tenant-a", "warm-up").await.unwrap();
    let (begun, begin) = statements_of(count, db.begin(0, request("k"))).await;
    let Begin::Execute(mut claim) = begun.unwrap() else {
        panic!("claim")
    };
    let params = CheckoutRequest::parse(BODY).expect("parameters");
    let (claim, phase_one) = statements_of(count, async {
        let order = orders::create(claim.tx(), "tenant-a", "k", &params)
            .await
            .expect("order");
        claim
            .set_recovery(order.id.to_string().as_bytes())
            .await
            .expect("recovery point");
        (claim.commit().await.expect("commit the claim"), order)
    })
    .await;
    let (claim, order) = claim;
    let settled = orders::settlement(order.id, "paid", Some("ch_1"));
    let saved = SavedResponse::json(201, b"{}".to_vec());
    let (done, commit) = statements_of(count, db.commit_with(1, &claim, saved, &settled)).await;
    done.expect("fenced commit");
    let (replay, replay_statements) = statements_of(count, db.begin(2, request("k"))).await;
    assert!(
        matches!(replay.unwrap(), Begin::Answer(idem_store::Begin::Replay(_))),
        "a replay"
    );
    let Begin::Execute(held) = db.begin(3, request("held")).await.unwrap() else {
        panic!("claim")
    };
    held.commit().await.unwrap();
    let (conflict, conflict_statements) = statements_of(count, db.begin(4, request("held"))).await;
    assert!(
        matches!(
            conflict.unwrap(),
            Begin::Answer(idem_store::Begin::InFlight { .. })
        ),
        "a 409"
    );
    Counted {
        begin,
        phase_one,
        commit,
        replay: replay_statements,
        conflict: conflict_statements,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_per_request_are_pinned() {
    let count = Arc::new(AtomicUsize::new(0));
    let subscriber = tracing_subscriber::registry().with(
        Statements(Arc::clone(&count)).with_filter(tracing_subscriber::filter::LevelFilter::TRACE),
    );
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
    for (kind, expected) in [
        (
            Kind::Sqlite,
            // begin: read, token bump, claim (returning the recovery point); phase one:
            // order, recovery point; commit: fenced update, order update.
            Counted {
                begin: 3,
                phase_one: 2,
                commit: 2,
                replay: 1,
                conflict: 1,
            },
        ),
        (
            Kind::Postgres,
            // begin: read, claim (returning the recovery point); phase one: order,
            // recovery point, COMMIT; commit: one statement (fence + order update).
            Counted {
                begin: 2,
                phase_one: 3,
                commit: 1,
                replay: 1,
                conflict: 1,
            },
        ),
    ] {
        let db = tables::fresh(kind, DbOptions::default()).await;
        let counted = count_steps(&db, &count).await;
        println!("{kind:?}: {counted:?}");
        assert_eq!(counted, expected, "{kind:?}");
    }
}
