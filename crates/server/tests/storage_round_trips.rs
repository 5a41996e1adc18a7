//! Statements per request, counted, on SQLite and on PostgreSQL: the statements sqlx sends
//! (its `sqlx::query` log events, one per statement) are counted around each step of the
//! example checkout's storage sequence, and pinned, so a statement added to a request turns
//! this red. Why each one is there: crates/server/README.md, "Statements per request".
//!
//! SQLite's `BEGIN` and `COMMIT` are not `sqlx::query` events (sqlx's transaction manager
//! sends them itself). So on PostgreSQL the round trips are counted too, on the wire: a proxy
//! between the pool and the server counts the messages after which the client waits for the
//! server (`Sync`, `Query`), sqlx's ping of a connection coming back to its pool included.

#[path = "../../store/tests/shared/mod.rs"]
mod shared;
mod support;
mod tables;

use idem_server::db::Finish;
use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Duration,
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

use idem_server::{
    checkout::{self, orders, outbox, params::CheckoutRequest},
    db::{Begin, BeginWith, Claim, Db, DbOptions, Request, RouteWrite},
};
use idem_store::{ErrorPolicy, RouteConfig, SavedResponse};
use tracing_subscriber::{layer::SubscriberExt, Layer};

use tables::Kind;

static ROUTE: RouteConfig = RouteConfig::required("POST /api/checkout", ErrorPolicy::SaveResponse);
const BODY: &[u8] = br#"{"cart":"c-1","amount":4200,"card":"tok_visa"}"#;

/// Counts the statements sqlx logs, but the pool's release probe (`db/pool.rs`), which runs
/// as a connection goes back to the pool, off the request's path, like sqlx's own ping.
struct Statements(Arc<AtomicUsize>);

impl<S: tracing::Subscriber> Layer<S> for Statements {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if event.metadata().target() != "sqlx::query" {
            return;
        }
        let mut text = Text(String::new());
        event.record(&mut text);
        if !text.0.contains(RELEASE_PROBE) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

/// What the release probe's SQL contains.
const RELEASE_PROBE: &str = "transaction_timestamp()";

/// An event's fields, as text.
struct Text(String);

impl tracing::field::Visit for Text {
    fn record_debug(&mut self, _: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.0.push_str(&format!("{value:?} "));
    }
}

async fn statements_of<F: std::future::Future>(count: &AtomicUsize, f: F) -> (F::Output, usize) {
    let before = count.load(Ordering::SeqCst);
    let out = f.await;
    (out, count.load(Ordering::SeqCst) - before)
}

fn request(key: &str) -> Request<'_> {
    Request {
        first_sent: None,
        scope: "tenant-a",
        key: Some(key),
        body: BODY,
        route: &ROUTE,
        target: None,
    }
}

/// Statements of each step of one keyed first request, as the checkout makes it, then of a
/// replay, of a 409, and of a claim again over a released key by the same request.
#[derive(Debug, PartialEq, Eq)]
struct Counted {
    /// The read, and the claim with the order and its recovery point (`Db::begin_with`).
    begin_with: usize,
    /// The fenced commit with the order's settlement and its outbox message
    /// (`Db::finish_with`).
    commit: usize,
    replay: usize,
    conflict: usize,
    /// The read, and the claim again (the takeover's statement) in its transaction.
    reclaim: usize,
}

/// The writes a paid checkout's fenced commit carries: the order paid and its outbox message.
fn paid_writes(id: i64, message: &outbox::table::Message) -> [RouteWrite<'_>; 2] {
    [
        orders::settlement(id, "paid", Some("ch_1")).into(),
        message.insert().into(),
    ]
}

/// The checkout's storage sequence for one keyed first request on `key`: the claim with the
/// order, then the fenced commit with the order paid and its outbox message.
async fn keyed_first(db: &Db, key: &str) -> (BeginWith, Option<Claim>) {
    let params = CheckoutRequest::parse(BODY).expect("parameters");
    let first = orders::insert("tenant-a", key, &params, 0);
    let begun = db.begin_with(0, request(key), &first).await.unwrap();
    let BeginWith::Created { claim, id } = &begun else {
        return (begun, None);
    };
    let claim = claim.clone();
    let message = outbox::table::paid("tenant-a", *id, 4200, "ch_1", 1);
    let settled = paid_writes(*id, &message);
    let saved = SavedResponse::json(201, b"{}".to_vec());
    db.finish_with(1, &claim, Finish::Commit(saved), &settled)
        .await
        .unwrap();
    (begun, Some(claim))
}

async fn count_steps(db: &Db, count: &AtomicUsize) -> Counted {
    db.migrate(&checkout::SCHEMA).await.expect("orders table");
    // Open the pool's connection: its set-up statements are not the request's.
    let _ = db.row(0, "tenant-a", "warm-up").await.unwrap();
    let params = CheckoutRequest::parse(BODY).expect("parameters");
    let first = orders::insert("tenant-a", "k", &params, 0);
    let (begun, begin_with) = statements_of(count, db.begin_with(0, request("k"), &first)).await;
    let BeginWith::Created { claim, id } = begun.unwrap() else {
        panic!("claim")
    };
    let message = outbox::table::paid("tenant-a", id, 4200, "ch_1", 1);
    let settled = paid_writes(id, &message);
    let saved = SavedResponse::json(201, b"{}".to_vec());
    let (done, commit) = statements_of(
        count,
        db.finish_with(1, &claim, Finish::Commit(saved), &settled),
    )
    .await;
    done.expect("fenced commit");
    let (replay, replay_statements) = statements_of(count, db.begin(2, request("k"))).await;
    assert!(
        matches!(replay.unwrap(), Begin::Answer(idem_store::Begin::Replay(_))),
        "a replay"
    );
    let Begin::Execute(held) = db.begin(3, request("held")).await.unwrap() else {
        panic!("claim")
    };
    let held = held.commit().await.unwrap();
    let (conflict, conflict_statements) = statements_of(count, db.begin(4, request("held"))).await;
    assert!(
        matches!(
            conflict.unwrap(),
            Begin::Answer(idem_store::Begin::InFlight { .. })
        ),
        "a 409"
    );
    db.finish(5, &held, Finish::Release).await.expect("release");
    let (again, reclaim) = statements_of(count, db.begin(6, request("held"))).await;
    let Begin::Execute(again) = again.unwrap() else {
        panic!("the same request claims a released key again")
    };
    again.commit().await.unwrap();
    Counted {
        begin_with,
        commit,
        replay: replay_statements,
        conflict: conflict_statements,
        reclaim,
    }
}

/// One test, so the statement counter (a global subscriber) sees one table at a time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn statements_and_round_trips_per_request_are_pinned() {
    let count = Arc::new(AtomicUsize::new(0));
    let subscriber = tracing_subscriber::registry().with(
        Statements(Arc::clone(&count)).with_filter(tracing_subscriber::filter::LevelFilter::TRACE),
    );
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");
    for (kind, expected) in [
        (
            Kind::Sqlite,
            // begin_with: read, token bump, claim (returning the recovery point), order,
            // recovery point; commit: fenced update, order update, outbox message.
            // reclaim: read, token bump, the takeover's statement.
            Counted {
                begin_with: 5,
                commit: 3,
                replay: 1,
                conflict: 1,
                reclaim: 3,
            },
        ),
        (
            Kind::Postgres,
            // begin_with: read, then one statement (claim, order, recovery point); commit:
            // one statement (fence + order update + outbox message).
            // reclaim: read, `BEGIN` (the claim's transaction on the read's connection), the
            // takeover's statement; its `COMMIT` comes with the route's writes.
            Counted {
                begin_with: 2,
                commit: 1,
                replay: 1,
                conflict: 1,
                reclaim: 3,
            },
        ),
    ] {
        // One connection: a pool that opens another mid-request would log that connection's
        // set-up statements (SQLite's PRAGMAs) inside a step, which are not the request's
        // (with 8, 1 run in 3 counted one more). The request's own statements do not depend on
        // the pool's size: every step acquires one connection at a time.
        let options = DbOptions {
            max_connections: 1,
            ..DbOptions::default()
        };
        let db = tables::fresh(kind, options).await;
        let counted = count_steps(&db, &count).await;
        println!("{kind:?}: {counted:?}");
        assert_eq!(counted, expected, "{kind:?}");
    }
    round_trips_on_postgres().await;
}

/// Round trips seen by [`counting_proxy`].
#[derive(Default)]
struct Waits {
    /// Exchanges that carry a statement (`BEGIN` and `COMMIT` included).
    statements: AtomicUsize,
    /// Bare `Sync`s: sqlx's ping of a connection coming back to its pool.
    pings: AtomicUsize,
    /// The pool's release probe (a `Query` of [`RELEASE_PROBE`]), as a connection comes
    /// back: is it inside a transaction?
    probes: AtomicUsize,
}

impl Waits {
    fn now(&self) -> (usize, usize, usize) {
        (
            self.statements.load(Ordering::SeqCst),
            self.pings.load(Ordering::SeqCst),
            self.probes.load(Ordering::SeqCst),
        )
    }
}

/// A TCP proxy to `upstream` counting the client's messages that end an exchange (the
/// client then waits for the server's `ReadyForQuery`): `Sync` (`S`) for the extended
/// protocol, `Query` (`Q`) for the simple one; one each per round trip. A `Sync` with no
/// other message since the last exchange is a ping.
async fn counting_proxy(upstream: String, waits: Arc<Waits>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let (upstream, waits) = (upstream.clone(), waits.clone());
            tokio::spawn(async move {
                let server = TcpStream::connect(&upstream).await.expect("upstream");
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                tokio::spawn(async move { tokio::io::copy(&mut sr, &mut cw).await });
                let mut pending = Vec::new();
                // Untyped start-up messages first (SSLRequest, then StartupMessage).
                let mut untyped = true;
                let mut bare = true;
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let n = match cr.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    if sw.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                    pending.extend_from_slice(&buf[..n]);
                    loop {
                        let head = if untyped { 4 } else { 5 };
                        if pending.len() < head {
                            break;
                        }
                        let at = head - 4;
                        let len = u32::from_be_bytes(pending[at..at + 4].try_into().unwrap());
                        let total = at + len as usize;
                        if pending.len() < total {
                            break;
                        }
                        if untyped {
                            // 80877103 is SSLRequest: the StartupMessage follows, untyped too.
                            let code = u32::from_be_bytes(pending[4..8].try_into().unwrap());
                            untyped = code == 80_877_103;
                        } else {
                            let probe = pending[0] == b'Q'
                                && String::from_utf8_lossy(&pending[5..total])
                                    .contains(RELEASE_PROBE);
                            match pending[0] {
                                b'Q' if probe => &waits.probes,
                                b'S' if bare => &waits.pings,
                                b'S' | b'Q' => &waits.statements,
                                _ => {
                                    bare = false;
                                    pending.drain(..total);
                                    continue;
                                }
                            }
                            .fetch_add(1, Ordering::SeqCst);
                            bare = true;
                        }
                        pending.drain(..total);
                    }
                }
            });
        }
    });
    addr.to_string()
}

/// Round trips of `f` carrying statements, and sqlx's pings and the pool's release probes
/// of the connections it took, once they are back in the pool.
async fn round_trips_of<F: std::future::Future>(
    waits: &Waits,
    f: F,
) -> (F::Output, (usize, usize, usize)) {
    let (statements, pings, probes) = waits.now();
    let out = f.await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let (s, p, r) = waits.now();
    (out, (s - statements, p - pings, r - probes))
}

/// Round trips on PostgreSQL, on the wire.
async fn round_trips_on_postgres() {
    let url = tables::fresh_url(Kind::Postgres).await;
    let (head, rest) = url.split_once('@').expect("postgres://user@host:port/db");
    let (upstream, database) = rest.split_once('/').expect("a database");
    let waits = Arc::new(Waits::default());
    let proxy = counting_proxy(upstream.to_owned(), waits.clone()).await;
    // One connection, so every statement is prepared on it by the warm-up below and the
    // counts are the steady state.
    let options = DbOptions {
        max_connections: 1,
        ..DbOptions::default()
    };
    let db = Db::open(&format!("{head}@{proxy}/{database}"), options)
        .await
        .expect("open through the proxy");
    db.migrate(&checkout::SCHEMA).await.expect("orders table");
    let first = |key: &'static str| {
        let db = db.clone();
        async move {
            let (begun, claim) = keyed_first(&db, key).await;
            assert!(claim.is_some(), "{begun:?}");
        }
    };
    // Warm-up: every statement prepared once.
    first("warm").await;
    let _ = db.begin(2, request("warm")).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;

    let ((), first) = round_trips_of(&waits, first("k")).await;
    let (replay, replayed) = round_trips_of(&waits, db.begin(2, request("k"))).await;
    assert!(matches!(
        replay.unwrap(),
        Begin::Answer(idem_store::Begin::Replay(_))
    ));
    println!(
        "PostgreSQL round trips (statements, pings, release probes): keyed first {first:?}, \
         replay {replayed:?}"
    );
    // The first request: the read; the claim with the order and its recovery point (one
    // statement); the fenced commit with the order's update (one statement): 3. Each of the
    // two connections it took from the pool (the read and the claim share one) is probed by
    // the pool's release net and pinged by sqlx as it comes back (off the request's path, in
    // a task of its own).
    assert_eq!(first, (3, 2, 2));
    // A replay: the read; the probe and the ping of its connection.
    assert_eq!(replayed, (1, 1, 1));
}
