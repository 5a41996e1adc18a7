//! Every `.await` of the storage code is a place where it may stop for good: hyper drops a
//! handler's future when its client goes away. Each storage operation here (claim, takeover,
//! `begin_with`, `finish_with` with an update and an insert, `finish_tx`, release, `save_recovery`, `process_once`, prune) is run again and
//! again, its future dropped after its 1st, 2nd, … Nth poll, until a run completes; after each
//! cut, written once for SQLite and PostgreSQL (`cancellation_sqlite.rs`,
//! `cancellation_postgres.rs`):
//! - no connection of the pool is left inside a transaction (PostgreSQL: no session of the
//!   test database `idle in transaction` in `pg_stat_activity`), and the transaction guards,
//!   not the pool's release net, did the cleaning ([`Db::connections_cleaned`] stays 0);
//! - what the operation writes is either all there or absent, read through a second pool (an
//!   observer no cut can poison);
//! - the next request on the cut table is decided as that state says (a 409 for a committed
//!   claim, a claim for an absent one, a replay for a saved answer), and a new key's one
//!   statement claim (`begin_with`) is durable at once: the observer sees it.
//!
//! The table under test has one connection, so a connection a cut left inside a transaction
//! is the one every next statement runs on. On PostgreSQL it reaches the server through a
//! latency proxy (1 ms on every answer), so every round trip is an await that is really
//! pending, and a cut lands at each of them in every run.

#![allow(dead_code)]

use idem_server::db::Finish;
use std::{
    future::Future,
    pin::Pin,
    task::{Context, Poll},
};

use idem_server::{
    consumer::{Consumer, ConsumerConfig, Processed},
    db::{
        AppMigrations, Backend, Begin, BeginWith, Claim, Db, DbOptions, Request, RouteInsert,
        RouteUpdate, RouteWrite,
    },
    with_tx,
};
use idem_store::{
    Begin as StoreBegin, ErrorPolicy, RouteConfig, RowState, SavedResponse, StoreConfig,
};

use crate::{
    support::latency::LatencyProxy,
    tables::{self, Kind},
};

pub static ROUTE: RouteConfig =
    RouteConfig::required("POST /api/checkout", ErrorPolicy::ReleaseClaim);
const BODY: &[u8] = br#"{"cart":"c-1","amount":4200}"#;
const LOCK_MS: u64 = 1_000;
const SCOPE: &str = "tenant-a";
/// No operation here has anywhere near this many awaits; a run that never completes is a bug.
const MAX_POLLS: u32 = 200;

/// The route's own table: an autoincrement id on either backend.
const ORDERS: AppMigrations = AppMigrations {
    name: "cut_orders",
    sqlite: &[
        (
            1,
            "orders",
            "CREATE TABLE orders (id INTEGER PRIMARY KEY AUTOINCREMENT, status TEXT NOT NULL)",
        ),
        (
            2,
            "outbox",
            "CREATE TABLE outbox (id INTEGER PRIMARY KEY AUTOINCREMENT, order_id INTEGER NOT NULL)",
        ),
    ],
    postgres: &[
        (
            1,
            "orders",
            "CREATE TABLE orders (id BIGSERIAL PRIMARY KEY, status TEXT NOT NULL)",
        ),
        (
            2,
            "outbox",
            "CREATE TABLE outbox (id BIGSERIAL PRIMARY KEY, order_id BIGINT NOT NULL)",
        ),
    ],
};

/// A message consumer's effect table.
const EFFECTS: AppMigrations = AppMigrations {
    name: "cut_effects",
    sqlite: &[(
        1,
        "effects",
        "CREATE TABLE effects (message_id TEXT PRIMARY KEY)",
    )],
    postgres: &[(
        1,
        "effects",
        "CREATE TABLE effects (message_id TEXT PRIMARY KEY)",
    )],
};

/// Polls the future at most `polls` times (each time it is woken), then drops it: the
/// output if it completed within them.
struct PollLimit<F> {
    future: Pin<Box<F>>,
    left: u32,
}

impl<F: Future> Future for PollLimit<F> {
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Poll::Ready(output) = self.future.as_mut().poll(cx) {
            return Poll::Ready(Some(output));
        }
        self.left -= 1;
        if self.left == 0 {
            Poll::Ready(None)
        } else {
            Poll::Pending
        }
    }
}

/// Drops `future` after its `polls`th poll; its output if it completed first.
async fn cut_after<F: Future>(polls: u32, future: F) -> Option<F::Output> {
    PollLimit {
        future: Box::pin(future),
        left: polls,
    }
    .await
}

/// The table under test (one connection), an observer on the same database (its own pool),
/// and the backend.
pub struct Bench {
    kind: Kind,
    url: String,
    pub db: Db,
    observer: Db,
    fresh_keys: u32,
    /// PostgreSQL: the table under test's way to the server.
    _latency: Option<LatencyProxy>,
}

fn options() -> DbOptions {
    DbOptions {
        store: StoreConfig {
            first_sent_tolerance_ms: None,
            lock_ms: LOCK_MS,
            retention_ms: 60_000,
            max_body_bytes: 1_024,
            event_capacity: 1_024,
        },
        max_connections: 1,
        prune_batch: 2,
        ..DbOptions::default()
    }
}

impl Bench {
    pub async fn new(kind: Kind) -> Bench {
        let url = tables::fresh_url(kind).await;
        let (latency, cut_url) = match kind {
            Kind::Sqlite => (None, url.clone()),
            Kind::Postgres => {
                let server = url
                    .split_once('@')
                    .and_then(|(_, rest)| rest.split_once('/'))
                    .map(|(addr, _)| addr.parse().expect("host:port"))
                    .expect("the test cluster's address");
                let proxy = LatencyProxy::start(server, std::time::Duration::from_millis(1)).await;
                let through = proxy.url_through(&url);
                (Some(proxy), through)
            }
        };
        let db = Db::open(&cut_url, options()).await.expect("open the table");
        db.migrate(&ORDERS).await.expect("orders");
        db.migrate(&EFFECTS).await.expect("effects");
        let observer = Db::open(
            &url,
            DbOptions {
                max_connections: 2,
                ..options()
            },
        )
        .await
        .expect("open the observer");
        Bench {
            kind,
            url,
            db,
            observer,
            fresh_keys: 0,
            _latency: latency,
        }
    }

    /// Cut `op` after its 1st, 2nd, … poll until a run completes; after each run, wait for
    /// the pool to settle and `check(n, completed)`, then the pool-wide checks. The number of
    /// polls the complete run took.
    async fn at_every_poll(
        &mut self,
        what: &str,
        mut op: impl AsyncFnMut(&Db, u32),
        mut check: impl AsyncFnMut(&Bench, u32, bool),
    ) -> u32 {
        for n in 1..=MAX_POLLS {
            let completed = cut_after(n, op(&self.db, n)).await.is_some();
            self.settle().await;
            self.assert_no_open_transaction(what, n).await;
            check(self, n, completed).await;
            self.assert_next_claim_is_durable(what, n).await;
            if completed {
                assert_eq!(
                    self.db.connections_cleaned(),
                    0,
                    "{what}: the pool had to clean a connection a guard left inside a transaction"
                );
                assert!(n > 1, "{what} completed at its first poll: nothing was cut");
                eprintln!(
                    "{what}: cut after each of its first {} polls; completed at {n}",
                    n - 1
                );
                return n;
            }
        }
        panic!("{what} never completed within {MAX_POLLS} polls");
    }

    /// Wait until every connection is back in the pool (a dropped transaction's rollback
    /// runs in a task of its own).
    async fn settle(&self) {
        let pool_idle = || match (self.db.sqlite_pool(), self.db.postgres_pool()) {
            (Some(p), _) => p.num_idle() == p.size() as usize,
            (_, Some(p)) => p.num_idle() == p.size() as usize,
            _ => unreachable!("a Db has one pool"),
        };
        for _ in 0..500 {
            tokio::task::yield_now().await;
            if pool_idle() {
                tokio::time::sleep(std::time::Duration::from_millis(2)).await;
                if pool_idle() {
                    return;
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        panic!("the pool's connections did not come back within 5 s");
    }

    /// PostgreSQL: no session on the test database is `idle in transaction`.
    async fn assert_no_open_transaction(&self, what: &str, n: u32) {
        if self.kind != Kind::Postgres {
            return;
        }
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&self.url)
            .await
            .expect("an outside connection");
        let open: Vec<(i32, String, String)> = sqlx::query_as(
            "SELECT pid, state, coalesce(query, '') FROM pg_stat_activity \
             WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
        )
        .fetch_all(&mut conn)
        .await
        .expect("pg_stat_activity");
        assert!(
            open.is_empty(),
            "{what} cut after poll {n}: sessions left inside a transaction: {open:?}"
        );
    }

    /// A new key's claim with its first row, through the cut table: the observer sees it at
    /// once (a connection left inside a transaction would hide it).
    async fn assert_next_claim_is_durable(&mut self, what: &str, n: u32) {
        self.fresh_keys += 1;
        let key = format!("next-{}", self.fresh_keys);
        match self
            .db
            .begin_with(0, request(&key), &first_order())
            .await
            .expect("the next request")
        {
            BeginWith::Created { .. } => {}
            other => panic!("{what} cut after poll {n}: a new key was not claimed: {other:?}"),
        }
        assert!(
            self.observed(&key).await.is_some(),
            "{what} cut after poll {n}: a new key's committed claim is invisible to others"
        );
    }

    /// The row of `key` as another pool sees it.
    async fn observed(&self, key: &str) -> Option<Seen> {
        let row = self
            .observer
            .row(0, SCOPE, key)
            .await
            .expect("the observer reads")?;
        Some(match row.state {
            RowState::InFlight | RowState::Stale => Seen::InFlight {
                token: row.token.expect("an in-flight row has a lease"),
            },
            RowState::Released => Seen::Released,
            RowState::Done => Seen::Done,
        })
    }

    async fn count(&self, sql: &'static str) -> i64 {
        if let Some(pool) = self.observer.sqlite_pool() {
            sqlx::query_scalar(sql).fetch_one(pool).await.expect(sql)
        } else {
            let pool = self.observer.postgres_pool().expect("a pool");
            sqlx::query_scalar(sql).fetch_one(pool).await.expect(sql)
        }
    }

    /// The outbox messages of order `id`.
    async fn messages_of(&self, id: i64) -> i64 {
        let sql = "SELECT count(*) FROM outbox WHERE order_id = $1";
        if let Some(pool) = self.observer.sqlite_pool() {
            sqlx::query_scalar(sql).bind(id).fetch_one(pool).await
        } else {
            let pool = self.observer.postgres_pool().expect("a pool");
            sqlx::query_scalar(sql).bind(id).fetch_one(pool).await
        }
        .expect("outbox")
    }

    async fn orders_with_status(&self, id: i64) -> Option<String> {
        let sql = "SELECT status FROM orders WHERE id = $1";
        if let Some(pool) = self.observer.sqlite_pool() {
            sqlx::query_scalar(sql)
                .bind(id)
                .fetch_optional(pool)
                .await
                .expect("orders")
        } else {
            let pool = self.observer.postgres_pool().expect("a pool");
            sqlx::query_scalar(sql)
                .bind(id)
                .fetch_optional(pool)
                .await
                .expect("orders")
        }
    }

    /// A committed claim of `key` at `now` (not cut).
    async fn claimed(&self, now: u64, key: &str) -> Claim {
        match self.db.begin(now, request(key)).await.expect("claim") {
            Begin::Execute(claim) => claim.commit().await.expect("commit the claim"),
            other => panic!("expected a claim of {key}, got {other:?}"),
        }
    }

    /// What the next request for `key` at `now` is told, through the cut table: `None` if
    /// it claims (the claim is then committed), else the answer.
    async fn next_request(&self, now: u64, key: &str) -> Option<StoreBegin> {
        match self
            .db
            .begin(now, request(key))
            .await
            .expect("next request")
        {
            Begin::Execute(claim) => {
                claim.commit().await.expect("commit");
                None
            }
            Begin::Answer(answer) => Some(answer),
            Begin::Unkeyed => panic!("the route requires a key"),
        }
    }
}

/// A row as the observer sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    /// Claimed, under the lease whose token this is.
    InFlight { token: u64 },
    /// Released: the lease is over, the key still bound to its first request.
    Released,
    /// Its answer saved.
    Done,
}

fn request(key: &str) -> Request<'_> {
    Request {
        first_sent: None,
        scope: SCOPE,
        key: Some(key),
        body: BODY,
        route: &ROUTE,
        target: None,
    }
}

fn first_order() -> RouteInsert<'static> {
    RouteInsert::new("orders").value("status", "pending")
}

fn paid(order: i64) -> RouteUpdate<'static> {
    RouteUpdate::new("orders")
        .set("status", "paid")
        .filter("id", order)
}

/// The order paid and its outbox message: the checkout's writes with a paid commit.
fn paid_with_message(order: i64) -> [RouteWrite<'static>; 2] {
    [
        paid(order).into(),
        RouteInsert::new("outbox").value("order_id", order).into(),
    ]
}

fn created() -> SavedResponse {
    SavedResponse::json(201, br#"{"order":1}"#.to_vec())
}

fn is_in_flight(answer: &Option<StoreBegin>) -> bool {
    matches!(answer, Some(StoreBegin::InFlight { .. }))
}

/// The claim's transaction (read, `BEGIN`, conditional insert, `COMMIT`): cut anywhere, the
/// claim is absent (the next request claims) or committed (the next request gets 409).
pub async fn a_cut_claim_is_absent_or_committed(kind: Kind) {
    let mut bench = Bench::new(kind).await;
    bench
        .at_every_poll(
            "claim",
            async |db, n| {
                let key = format!("claim-{n}");
                if let Begin::Execute(claim) = db.begin(0, request(&key)).await.expect("begin") {
                    claim.commit().await.expect("commit");
                }
            },
            async |bench, n, completed| {
                let key = format!("claim-{n}");
                let seen = bench.observed(&key).await;
                assert!(
                    !completed || seen.is_some(),
                    "a completed claim is committed"
                );
                let next = bench.next_request(1, &key).await;
                match seen {
                    None => assert_eq!(next, None, "claim-{n} absent: the next request claims"),
                    Some(Seen::InFlight { .. }) => {
                        assert!(
                            is_in_flight(&next),
                            "claim-{n} committed: 409, got {next:?}"
                        )
                    }
                    Some(other) => panic!("claim-{n}: unexpected row {other:?}"),
                }
            },
        )
        .await;
}

/// A takeover of a stale claim (read, `BEGIN`, compare-and-set, `COMMIT`): cut anywhere, the
/// row keeps the old lease (the next request takes over) or has the new one (409).
pub async fn a_cut_takeover_keeps_the_old_lease_or_commits_the_new(kind: Kind) {
    let mut bench = Bench::new(kind).await;
    let mut stale = Vec::new();
    for n in 1..=MAX_POLLS.min(60) {
        stale.push(bench.claimed(0, &format!("over-{n}")).await.lease().token);
    }
    let stale = &stale;
    bench
        .at_every_poll(
            "takeover",
            async |db, n| {
                let key = format!("over-{n}");
                if let Begin::Execute(claim) =
                    db.begin(LOCK_MS, request(&key)).await.expect("begin")
                {
                    assert!(claim.claim().taken_over());
                    claim.commit().await.expect("commit");
                }
            },
            async |bench, n, completed| {
                let key = format!("over-{n}");
                let old = stale[n as usize - 1];
                let Some(Seen::InFlight { token }) = bench.observed(&key).await else {
                    panic!("over-{n}: the claim must stay in flight");
                };
                assert!(
                    !completed || token != old,
                    "a completed takeover is committed"
                );
                let next = bench.next_request(LOCK_MS + 1, &key).await;
                if token == old {
                    assert_eq!(next, None, "over-{n} not taken over: the next request does");
                } else {
                    assert!(
                        is_in_flight(&next),
                        "over-{n} taken over: 409, got {next:?}"
                    );
                }
            },
        )
        .await;
}

/// `begin_with`: the claim, the route's first row and the recovery point, all or none (one
/// statement on PostgreSQL, one transaction on SQLite).
pub async fn a_cut_begin_with_writes_all_three_rows_or_none(kind: Kind) {
    let mut bench = Bench::new(kind).await;
    bench
        .at_every_poll(
            "begin_with",
            async |db, n| {
                let key = format!("with-{n}");
                let _ = db
                    .begin_with(0, request(&key), &first_order())
                    .await
                    .expect("begin_with");
            },
            async |bench, n, completed| {
                let key = format!("with-{n}");
                let claims = bench.observed(&key).await;
                let points = bench
                    .observer
                    .row(0, SCOPE, &key)
                    .await
                    .expect("row")
                    .is_some();
                assert_eq!(claims.is_some(), points);
                assert!(
                    !completed || claims.is_some(),
                    "a completed begin_with committed"
                );
                let next = bench.next_request(1, &key).await;
                match claims {
                    None => assert_eq!(next, None, "with-{n} absent: the next request claims"),
                    Some(_) => assert!(is_in_flight(&next), "with-{n} written: 409, got {next:?}"),
                }
            },
        )
        .await;
    // Every route row has its claim (the fresh keys' and the committed cuts'): no orphan.
    let orders = bench.count("SELECT count(*) FROM orders").await;
    let points = bench.count("SELECT count(*) FROM idem_recovery").await;
    assert_eq!(orders, points, "an order without its recovery point");
}

/// `finish_with` (the fenced commit, the route's update and its outbox insert, one statement
/// on PostgreSQL): all or none; the next request gets the replay or 409.
pub async fn a_cut_commit_with_saves_and_updates_together_or_not_at_all(kind: Kind) {
    let mut bench = Bench::new(kind).await;
    let mut claims = Vec::new();
    for n in 1..=60 {
        let key = format!("commit-{n}");
        match bench
            .db
            .begin_with(0, request(&key), &first_order())
            .await
            .expect("begin_with")
        {
            BeginWith::Created { claim, id } => claims.push((claim, id)),
            other => panic!("{other:?}"),
        }
    }
    let claims = &claims;
    bench
        .at_every_poll(
            "finish_with",
            async |db, n| {
                let (claim, order) = &claims[n as usize - 1];
                let writes = paid_with_message(*order);
                db.finish_with(1, claim, Finish::Commit(created()), &writes)
                    .await
                    .expect("finish_with");
            },
            async |bench, n, completed| {
                let (claim, order) = &claims[n as usize - 1];
                let key = claim.id().key().as_str();
                let done = matches!(bench.observed(key).await, Some(Seen::Done));
                let status = bench.orders_with_status(*order).await;
                assert_eq!(
                    status.as_deref(),
                    Some(if done { "paid" } else { "pending" }),
                    "commit-{n}: the order's update goes with the saved answer"
                );
                assert_eq!(
                    bench.messages_of(*order).await,
                    i64::from(done),
                    "commit-{n}: the outbox message goes with the saved answer"
                );
                assert!(!completed || done, "a completed commit is saved");
                let next = bench.next_request(2, key).await;
                if done {
                    assert_eq!(next, Some(StoreBegin::Replay(created())));
                } else {
                    assert!(
                        is_in_flight(&next),
                        "commit-{n} not saved: 409, got {next:?}"
                    );
                }
            },
        )
        .await;
}

/// `finish_tx` (the fenced transaction with the route's own writes): both or neither.
pub async fn a_cut_commit_tx_saves_and_writes_together_or_not_at_all(kind: Kind) {
    let mut bench = Bench::new(kind).await;
    let mut claims = Vec::new();
    for n in 1..=60 {
        claims.push(bench.claimed(0, &format!("tx-{n}")).await);
    }
    let claims = &claims;
    bench
        .at_every_poll(
            "finish_tx",
            async |db, n| {
                let claim = &claims[n as usize - 1];
                let mut tx = db.finish_tx(claim).await.expect("finish_tx");
                with_tx!(tx.tx(), |conn| {
                    sqlx::query("INSERT INTO effects (message_id) VALUES ($1)")
                        .bind(format!("tx-{n}"))
                        .execute(conn)
                        .await
                        .map(|_| ())
                })
                .expect("the route's write");
                tx.finish(1, Finish::Commit(created()))
                    .await
                    .expect("commit");
            },
            async |bench, n, completed| {
                let key = format!("tx-{n}");
                let done = matches!(bench.observed(&key).await, Some(Seen::Done));
                let written = bench.effect_exists(&key).await;
                assert_eq!(
                    done, written,
                    "tx-{n}: the route's write goes with the answer"
                );
                assert!(!completed || done, "a completed commit is saved");
                let next = bench.next_request(2, &key).await;
                if done {
                    assert_eq!(next, Some(StoreBegin::Replay(created())));
                } else {
                    assert!(is_in_flight(&next), "tx-{n} not saved: 409, got {next:?}");
                }
            },
        )
        .await;
}

/// A fenced release: the claim released (kept, bound to its request: the next request with the
/// same body claims it again) or still ours (409).
pub async fn a_cut_release_frees_the_key_or_leaves_the_claim(kind: Kind) {
    let mut bench = Bench::new(kind).await;
    let mut claims = Vec::new();
    for n in 1..=60 {
        claims.push(bench.claimed(0, &format!("release-{n}")).await);
    }
    let claims = &claims;
    bench
        .at_every_poll(
            "release",
            async |db, n| {
                db.finish(1, &claims[n as usize - 1], Finish::Release)
                    .await
                    .expect("release");
            },
            async |bench, n, completed| {
                let key = format!("release-{n}");
                let seen = bench.observed(&key).await;
                assert!(
                    !completed || seen == Some(Seen::Released),
                    "a completed release released the claim"
                );
                let next = bench.next_request(2, &key).await;
                match seen {
                    Some(Seen::Released) => {
                        assert_eq!(
                            next, None,
                            "release-{n} done: the same request claims again"
                        )
                    }
                    _ => assert!(is_in_flight(&next), "release-{n} cut: 409, got {next:?}"),
                }
            },
        )
        .await;
}

/// `save_recovery` (a worker records how far it got, fenced): cut anywhere, the claim stays
/// this worker's, untouched, and the point is there or not (the next worker, after a takeover,
/// reads it whole or starts over); a completed save is read back. A lost lease writes nothing.
pub async fn a_cut_save_recovery_writes_the_point_or_nothing(kind: Kind) {
    let mut bench = Bench::new(kind).await;
    // Fenced first: after a takeover the old worker's save is refused and writes nothing.
    let old = bench.claimed(0, "recovery-fenced").await;
    let taken = match bench
        .db
        .begin(LOCK_MS + 1, request("recovery-fenced"))
        .await
        .expect("take over")
    {
        Begin::Execute(claim) => claim.commit().await.expect("commit the takeover"),
        other => panic!("expected a takeover, got {other:?}"),
    };
    let refused = bench.db.save_recovery(LOCK_MS + 2, &old, b"stale").await;
    assert!(
        matches!(refused, Err(idem_server::db::DbError::Fenced)),
        "{refused:?}"
    );
    bench
        .db
        .save_recovery(LOCK_MS + 2, &taken, b"\"ours\"")
        .await
        .expect("the owner saves");

    let mut claims = Vec::new();
    for n in 1..=60 {
        claims.push(bench.claimed(0, &format!("recovery-{n}")).await);
    }
    let claims = &claims;
    bench
        .at_every_poll(
            "save_recovery",
            async |db, n| {
                let point = format!("{{\"step\":{n}}}");
                db.save_recovery(1, &claims[n as usize - 1], point.as_bytes())
                    .await
                    .expect("save_recovery");
            },
            async |bench, n, completed| {
                let key = format!("recovery-{n}");
                let token = claims[n as usize - 1].lease().token;
                assert_eq!(
                    bench.observed(&key).await,
                    Some(Seen::InFlight { token }),
                    "{key}: the claim is untouched"
                );
                // The next worker, after the lease went stale, reads the point or none.
                let point = match bench.db.begin(LOCK_MS + 10, request(&key)).await {
                    Ok(Begin::Execute(claim)) => claim.recovery().map(<[u8]>::to_vec),
                    other => panic!("{key}: expected a takeover, got {other:?}"),
                };
                let expected = format!("{{\"step\":{n}}}").into_bytes();
                assert!(
                    point.is_none() || point.as_deref() == Some(&expected[..]),
                    "{key}: a whole point or none"
                );
                assert!(
                    !completed || point.is_some(),
                    "{key}: a completed save is read"
                );
            },
        )
        .await;
}

/// `process_once`: the message id and the effect, together or neither; a redelivery after a
/// cut applies it once or finds it done.
pub async fn a_cut_process_once_records_the_effect_with_the_id_or_neither(kind: Kind) {
    let mut bench = Bench::new(kind).await;
    let consumer = Consumer::open(&bench.db, ConsumerConfig::default())
        .await
        .expect("consumer");
    let consumer = &consumer;
    bench
        .at_every_poll(
            "process_once",
            async |_db, n| {
                let id = format!("msg-{n}");
                effect_once(consumer, &id).await;
            },
            async |bench, n, completed| {
                let id = format!("msg-{n}");
                let effect = bench.effect_exists(&id).await;
                let recorded = bench.message_recorded(&id).await;
                assert_eq!(effect, recorded, "msg-{n}: the effect goes with its id");
                assert!(
                    !completed || effect,
                    "a completed delivery applied the effect"
                );
                let again = effect_once(consumer, &id).await;
                assert_eq!(
                    again,
                    if effect {
                        Processed::Duplicate
                    } else {
                        Processed::Applied(())
                    },
                    "msg-{n}: the redelivery"
                );
                assert!(
                    bench.effect_exists(&id).await,
                    "msg-{n} applied once in the end"
                );
            },
        )
        .await;
}

async fn effect_once(consumer: &Consumer, id: &str) -> Processed<()> {
    let owned = id.to_owned();
    consumer
        .process_once(0, SCOPE, id, move |tx| {
            Box::pin(async move {
                with_tx!(tx, |conn| {
                    sqlx::query("INSERT INTO effects (message_id) VALUES ($1)")
                        .bind(owned)
                        .execute(conn)
                        .await
                        .map(|_| ())
                })
            })
        })
        .await
        .expect("process_once")
}

/// Pruning in batches (2 rows per statement here): cut anywhere, the live claim stays, and
/// a prune after the cut removes every expired row.
pub async fn a_cut_prune_never_removes_a_live_claim(kind: Kind) {
    let mut bench = Bench::new(kind).await;
    // Answers saved at 0 expire at 60 s; pruning runs at 10 min, where a claim made then is
    // live.
    const FAR: u64 = 10 * 60_000;
    let live = bench.claimed(FAR, "live").await;
    bench.seed_expired(0).await;
    bench
        .at_every_poll(
            "prune",
            async |db, _n| {
                db.prune(FAR).await.expect("prune");
            },
            async |bench, n, completed| {
                let left = bench.count(EXPIRED_ROWS).await;
                assert!(
                    !completed || left == 0,
                    "a completed prune removed every expired row"
                );
                assert!(
                    matches!(bench.observed("live").await, Some(Seen::InFlight { .. })),
                    "prune cut after poll {n} removed a live claim"
                );
                bench.db.prune(FAR).await.expect("a prune after the cut");
                assert_eq!(
                    bench.count(EXPIRED_ROWS).await,
                    0,
                    "the prune after the cut"
                );
                // The next run's expired rows.
                bench.seed_expired(n).await;
            },
        )
        .await;
    assert_eq!(
        bench.observed("live").await,
        Some(Seen::InFlight {
            token: live.lease().token
        }),
        "the live claim, untouched"
    );
}

/// Saved answers at 0, which expire at 60 s.
const EXPIRED_ROWS: &str = "SELECT count(*) FROM idem_claims WHERE expires_at <= 60000";

impl Bench {
    /// Five answers saved at 0 (expired long before the prune's time).
    async fn seed_expired(&self, run: u32) {
        for i in 0..5 {
            let claim = self.claimed(0, &format!("old-{run}-{i}")).await;
            self.db
                .finish(0, &claim, Finish::Commit(created()))
                .await
                .expect("save");
        }
    }

    async fn effect_exists(&self, id: &str) -> bool {
        let sql = "SELECT count(*) FROM effects WHERE message_id = $1";
        let n: i64 = if let Some(pool) = self.observer.sqlite_pool() {
            sqlx::query_scalar(sql).bind(id).fetch_one(pool).await
        } else {
            let pool = self.observer.postgres_pool().expect("a pool");
            sqlx::query_scalar(sql).bind(id).fetch_one(pool).await
        }
        .expect("effects");
        n == 1
    }

    async fn message_recorded(&self, id: &str) -> bool {
        let sql = "SELECT count(*) FROM idem_messages WHERE message_id = $1";
        let n: i64 = if let Some(pool) = self.observer.sqlite_pool() {
            sqlx::query_scalar(sql).bind(id).fetch_one(pool).await
        } else {
            let pool = self.observer.postgres_pool().expect("a pool");
            sqlx::query_scalar(sql).bind(id).fetch_one(pool).await
        }
        .expect("messages");
        n == 1
    }

    pub fn backend(&self) -> Backend {
        self.db.backend()
    }
}

/// PostgreSQL: the pool's own net under the guards. A connection handed back after a raw
/// `BEGIN` that no guard rolls back (a missed guard), in a live or a failed transaction, is
/// rolled back before its next use and counted; what it wrote inside is gone, and the next
/// request's writes on it are durable.
pub async fn the_pool_rolls_back_a_connection_returned_inside_a_transaction() {
    use sqlx::Executor;

    let mut bench = Bench::new(Kind::Postgres).await;
    for (n, poison) in [
        "INSERT INTO effects (message_id) VALUES ('leaked')",
        "SELECT 1 / 0",
    ]
    .into_iter()
    .enumerate()
    {
        let pool = bench.db.postgres_pool().expect("PostgreSQL");
        let mut conn = pool.acquire().await.expect("a connection");
        conn.execute("BEGIN").await.expect("BEGIN");
        let _ = conn.execute(poison).await;
        drop(conn);
        bench.settle().await;
        bench.assert_no_open_transaction("a raw BEGIN", 0).await;
        assert_eq!(
            bench.db.connections_cleaned(),
            n as u64 + 1,
            "counted: {poison}"
        );
        assert!(
            !bench.effect_exists("leaked").await,
            "rolled back, not committed"
        );
        bench.assert_next_claim_is_durable("a raw BEGIN", 0).await;
    }
}

/// `renew` (the heartbeat of long work): cut anywhere, the lease is the old one or the renewed
/// one, nothing between; a completed renewal keeps the next retry out (409 where the old lease
/// would have been taken over), an unrenewed lease is taken over as before.
pub async fn a_cut_renewal_extends_the_lease_or_leaves_it(kind: Kind) {
    let mut bench = Bench::new(kind).await;
    let mut claims = Vec::new();
    for n in 1..=60 {
        claims.push(bench.claimed(0, &format!("renew-{n}")).await);
    }
    let claims = &claims;
    let renewed_at = LOCK_MS - 10;
    bench
        .at_every_poll(
            "renew",
            async |db, n| {
                let mut claim = claims[n as usize - 1].clone();
                db.renew(renewed_at, &mut claim).await.expect("renew");
            },
            async |bench, n, completed| {
                let key = format!("renew-{n}");
                let row = bench
                    .db
                    .row(0, SCOPE, &key)
                    .await
                    .expect("read")
                    .expect("a row");
                let locked_at = row.locked_at.expect("in flight");
                assert!(
                    locked_at == 0 || locked_at == renewed_at,
                    "{key}: the old lease or the renewed one, got locked_at {locked_at}"
                );
                assert!(
                    !completed || locked_at == renewed_at,
                    "a completed renewal renewed"
                );
                assert_eq!(
                    row.token,
                    Some(claims[n as usize - 1].lease().token),
                    "one token"
                );
                let next = bench.next_request(LOCK_MS + 5, &key).await;
                match locked_at {
                    0 => assert_eq!(next, None, "{key} not renewed: taken over"),
                    _ => assert!(is_in_flight(&next), "{key} renewed: 409, got {next:?}"),
                }
            },
        )
        .await;
}
