//! The durable claim table: idem-store's rules on SQLite or PostgreSQL.
//!
//! [`Db`] drives the store's one rule core ([`idem_store::rules`]) over a SQL table: it
//! reads the row in one round trip, lets [`rules::decide`](idem_store::rules::decide)
//! choose, and performs the one conditional write the rules ask for (insert-if-absent,
//! compare-and-set takeover, fenced commit, fenced release; prune in batches). It holds no
//! rule of its own. SQLite (one file, WAL) is the embedded default; PostgreSQL is chosen by
//! a `postgres://` URL. The schema is created on first open by versioned migrations
//! (`crates/axum/migrations/{sqlite,postgres}`).
//!
//! # How a route uses it
//!
//! The checkout runs in atomic phases (brandur's rocket-rides): the claim is written with the
//! route's first row (the order), whose id is the recovery point ([`Db::begin_with`]: one
//! statement on PostgreSQL); the foreign call (PayCo) is made outside any transaction under a
//! key derived from that point; a final fenced write records the result and the response
//! together ([`Db::finish_with`]: one statement on PostgreSQL).
//!
//! ```no_run
//! use idem_axum::db::{BeginWith, Db, DbError, DbOptions, Finish, Request, RouteInsert, RouteUpdate};
//! use idem_store::{http, ErrorPolicy, RouteConfig, SavedResponse};
//!
//! const CHECKOUT: RouteConfig = RouteConfig::required("POST /api/checkout", ErrorPolicy::ReleaseClaim);
//!
//! # async fn charge(_key: &str) -> Result<(), ()> { Ok(()) }
//! async fn checkout(db: &Db, now: u64, tenant: &str, key: Option<&str>, body: &[u8])
//!     -> Result<http::HttpResponse, DbError>
//! {
//!     let request = Request { scope: tenant, key, first_sent: None, body, route: &CHECKOUT, target: None };
//!     // Phase 1: the claim and the order, together or not at all.
//!     let first = RouteInsert::new("orders").value("body", body).value("paid", 0);
//!     let (claim, order) = match db.begin_with(now, request, &first).await? {
//!         BeginWith::Created { claim, id } => (claim, id),
//!         // A takeover, or a claim after a release, of this same request: resume the order
//!         // its recovery point names (or create it anew in the claim's transaction).
//!         BeginWith::Resume(mut claim) => {
//!             let order = match claim.recovery().and_then(RouteInsert::id_of) {
//!                 Some(order) => order,
//!                 None => claim.create(&first).await?,
//!             };
//!             (claim.commit().await?, order)
//!         }
//!         // Replay, 409 (+ Retry-After), 422, 400 or 413: the store's own value and wire.
//!         BeginWith::Answer(decision) => return Ok(http::response_for(&decision).expect("an answer")),
//!         BeginWith::Unkeyed => unreachable!("the route requires a key"),
//!     };
//!
//!     // Phase 2, outside any transaction: the foreign call, under a key derived from the
//!     // recovery point, so every worker of this operation uses the same one.
//!     let charged = charge(&format!("charge:{order}")).await;
//!
//!     // Phase 3: the business change and the saved response, fenced, together.
//!     let paid = RouteUpdate::new("orders").set("paid", 1).filter("id", order);
//!     match charged {
//!         Ok(()) => {
//!             let response = SavedResponse::json(201, format!(r#"{{"order":{order}}}"#).into_bytes());
//!             match db.finish_with(now, &claim, Finish::Commit(response.clone()), &[paid.into()]).await {
//!                 Ok(()) => Ok(http::HttpResponse::original(response)),
//!                 // Taken over meanwhile: the order update did not happen either.
//!                 Err(DbError::Fenced) => Ok(http::lease_lost()),
//!                 Err(e) => Err(e),
//!             }
//!         }
//!         Err(()) => {
//!             // The route's declared policy decides: release (a retry resumes the order)
//!             // or save the error for replay.
//!             let declined = SavedResponse::json(402, br#"{"error":"declined"}"#.to_vec());
//!             db.finish(now, &claim, claim.failed(declined.clone())).await?;
//!             Ok(http::HttpResponse::original(declined))
//!         }
//!     }
//! }
//! # let _ = DbOptions::default();
//! ```
//!
//! A route whose first writes are more than one row uses [`Db::begin`]: the claim's
//! transaction stays open ([`ClaimTx`]) for them and commits with them; [`Db::finish_tx`]
//! opens the fenced transaction for any number of business writes.
//!
//! Read-only views for the HTTP side: [`Db::rows`] (one scope, paged by key), [`Db::row`]
//! (one key), [`Db::events_since`] and [`Db::subscribe`] (the store's [`Event`]s: claimed,
//! replayed, rejected, taken over, fenced, saved, released, pruned), and [`Db::prune`].
//!
//! # Clocks
//!
//! Every method takes `now` (milliseconds) from the caller, so tests drive virtual time
//! over every table. [`Clock::Database`] (a production setting) measures lease age and
//! retention on the database's clock instead and ignores the caller's: with several
//! servers on one PostgreSQL, their own clocks may disagree by more than a lease, but they
//! share the database's. SQLite's default is the caller's clock: one file is used from one
//! machine, whose processes read the same system clock, so there is nothing to reconcile.
//!
//! # What this module does not do
//!
//! It decides nothing itself (the rules are idem-store's), speaks no HTTP (the status
//! codes and bodies are `idem_store::http`'s), and keeps its event log in this process:
//! two servers sharing a database each log their own decisions.

/// Run the same code over the pool, whichever backend it is (defined before the modules
/// that use it).
macro_rules! on_pool {
    ($db:expr, |$pool:ident| $body:expr) => {
        match &$db.inner.pool {
            $crate::db::Pool::Sqlite($pool) => $body,
            $crate::db::Pool::Postgres($pool) => $body,
        }
    };
}

/// Run the same code over the connection writes go to: on SQLite the writer's pool of one
/// connection ([`Inner::writer`]), on PostgreSQL the pool. Use it under a writer turn
/// ([`Db::writer_turn`]).
macro_rules! on_writer {
    ($db:expr, |$pool:ident| $body:expr) => {
        match (&$db.inner.pool, &$db.inner.writer) {
            (_, Some($pool)) => $body,
            ($crate::db::Pool::Postgres($pool), None) => $body,
            ($crate::db::Pool::Sqlite($pool), None) => $body,
        }
    };
}

/// Run the same code on where a request's statements go ([`Link`]): `$exec` is the
/// PostgreSQL connection the request holds, or the pool. It is used once (an executor is
/// taken by value).
macro_rules! on_link {
    ($db:expr, $link:expr, |$exec:ident| $body:expr) => {
        match (&$db.inner.pool, $link) {
            ($crate::db::Pool::Sqlite($exec), _) => $body,
            ($crate::db::Pool::Postgres(_), $crate::db::Link::Postgres(conn)) => {
                let $exec: &mut ::sqlx::PgConnection = &mut **conn;
                $body
            }
            ($crate::db::Pool::Postgres($exec), $crate::db::Link::Pool) => $body,
        }
    };
}

mod abandoned;
mod begin;
mod error;
mod finish;
mod pool;
mod progress;
mod renew;
mod row;
mod sql;
mod tx;
mod views;
mod write;

use std::{
    str::FromStr,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use idem_store::{
    ErrorPolicy, Event, EventKind, EventLog, Fingerprint, Lease, RecordId, RouteConfig, StoreConfig,
};
use prometheus_client::metrics::counter::Counter;
use sqlx::{
    migrate::{Migration, MigrationType, Migrator},
    postgres::{PgConnectOptions, PgPoolOptions},
    sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous},
    PgPool, SqlSafeStr, SqlitePool,
};
use tokio::sync::broadcast;

use crate::with_tx;

pub use abandoned::Abandoned;
pub use error::DbError;
/// How a claim ends: its response saved, or released (idem-store's, used as it is).
pub use idem_store::rules::Finish;
pub use tx::{PgTx, Tx};
pub use write::{Param, RouteInsert, RouteUpdate, RouteWrite};

/// Which clock measures lease age and retention.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Clock {
    /// The `now` each call passes (tests; SQLite in production).
    #[default]
    Caller,
    /// The database's clock (`clock_timestamp()` on PostgreSQL, `unixepoch('subsec')` on
    /// SQLite), read in the same statement as the row. For several servers on one
    /// PostgreSQL.
    Database,
}

/// How to open a [`Db`].
///
/// ## Default values
/// - `store`: [`StoreConfig::default`] (10 s leases, 24 h retention, 64 KiB bodies, 4,096 events).
/// - `clock`: [`Clock::Caller`].
/// - `max_connections`: 8 (SQLite: readers in parallel; every write goes to one more
///   connection of its own, since SQLite lets one writer in at a time in any case).
/// - `busy_timeout`: 5 s (SQLite: how long a writer waits for the write lock before the
///   call fails as unavailable).
/// - `prune_batch`: 1,000 rows per delete statement (short enough that no statement holds
///   the table for long, large enough that a day of keys goes in a few hundred statements).
#[derive(Debug, Clone)]
pub struct DbOptions {
    /// Lease, retention, body limit and event-log size.
    pub store: StoreConfig,
    /// Which clock measures leases.
    pub clock: Clock,
    /// Pool size.
    pub max_connections: u32,
    /// SQLite's wait for the write lock.
    pub busy_timeout: Duration,
    /// Rows per prune statement.
    pub prune_batch: u32,
}

impl Default for DbOptions {
    fn default() -> Self {
        Self {
            store: StoreConfig::default(),
            clock: Clock::Caller,
            max_connections: 8,
            busy_timeout: Duration::from_secs(5),
            prune_batch: 1_000,
        }
    }
}

/// The backend a [`Db`] runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// One SQLite file in WAL mode.
    Sqlite,
    /// A PostgreSQL server.
    Postgres,
}

#[derive(Debug, Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// The claim table on a database. Cheap to clone (shared pool, log and options).
#[derive(Debug, Clone)]
pub struct Db {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    pool: Pool,
    options: DbOptions,
    sql: sql::Dialect,
    /// Statements composed from a route's parts, built once each.
    composed: sql::Composed,
    log: Mutex<EventLog>,
    events: broadcast::Sender<Event>,
    /// SQLite: this process's writers take turns here before they ask SQLite for its write
    /// lock (see [`Db::writer_turn`]).
    writers: Arc<tokio::sync::Mutex<()>>,
    /// SQLite: the one connection every write of this process goes to (a pool of one, `None`
    /// on PostgreSQL). SQLite admits one writer at a time; on one connection its page cache
    /// stays valid from one write transaction to the next, where each of the pool's
    /// connections would find the file changed by another one and read its pages again
    /// (bench/FINDINGS.md, "the server's share").
    writer: Option<SqlitePool>,
    /// PostgreSQL: connections the pool found inside a transaction when they came back, and
    /// rolled back (`pool.rs`). Stays 0 while every transaction's guard does its job.
    cleaned: Counter,
}

/// Where a request's statements go before its claim's transaction opens.
///
/// On PostgreSQL, one connection from the read to the claim's `COMMIT`: one acquisition,
/// and one ping as it goes back to the pool (sqlx pings every connection it takes back),
/// instead of one of each per step. On SQLite, the pool for the read, and the claim's
/// transaction on the writer's own connection ([`Inner::writer`]) after its turn
/// ([`Db::writer_turn`]): the read's connection is not the one the transaction needs.
#[derive(Debug)]
enum Link {
    /// Each statement takes a connection of the pool.
    Pool,
    /// The request's own PostgreSQL connection.
    Postgres(sqlx::pool::PoolConnection<sqlx::Postgres>),
}

/// A writer's turn at a SQLite file (held until its transaction ends); `None` on
/// PostgreSQL, where writers to different rows run in parallel.
type WriterTurn = Option<tokio::sync::OwnedMutexGuard<()>>;

/// One request as the route sees it.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    /// The tenant (from the route's scope extractor).
    pub scope: &'a str,
    /// The `Idempotency-Key`, already parsed from its header (`idem_store::http::parse_key_header`).
    pub key: Option<&'a str>,
    /// When the client first sent the operation (`Repeatability-First-Sent`, parsed by
    /// `idem_store::first_sent::parse`), for the expired-key guard; `None` without the header.
    pub first_sent: Option<u64>,
    /// The request body as received.
    pub body: &'a [u8],
    /// What the route declares: operation, key requirement, error policy.
    pub route: &'a RouteConfig,
    /// The request's own method, route, parameters, query and media type, for a layer in
    /// front of many routes (the fingerprint binds them instead of `route.operation`:
    /// [`idem_store::RequestTarget`]); `None` for a route that is one operation.
    pub target: Option<&'a idem_store::RequestTarget>,
}

/// What to do with a request, decided by [`Db::begin`].
#[must_use]
#[derive(Debug)]
pub enum Begin {
    /// The key is ours: the claim's transaction is open (see [`ClaimTx`]).
    Execute(ClaimTx),
    /// No key on an optional-key route: run the work unprotected. Nothing was recorded.
    Unkeyed,
    /// Answer without running the work: an [`idem_store::Begin`] that is `Replay`,
    /// `InFlight`, `Mismatch` or `Invalid` (never `Execute` or `Unkeyed`), so
    /// `idem_store::http::response_for` gives the response.
    Answer(idem_store::Begin),
}

/// What to do with a request, decided by [`Db::begin_with`].
#[must_use]
#[derive(Debug)]
pub enum BeginWith {
    /// The key is ours and the route's first row was created with the claim, committed
    /// together: `id` is that row's, and the recovery point. Run the rest of the work.
    Created {
        /// The committed claim.
        claim: Claim,
        /// The id the route's [`RouteInsert`] returned.
        id: i64,
    },
    /// The key is ours over an earlier worker's recovery point of this same request (a
    /// takeover, or a claim after a release): nothing was created, the claim's transaction
    /// is open. Resume from [`ClaimTx::recovery`], then [`ClaimTx::commit`].
    Resume(ClaimTx),
    /// No key on an optional-key route: run the work unprotected. Nothing was recorded.
    Unkeyed,
    /// Answer without running the work, as [`Begin::Answer`].
    Answer(idem_store::Begin),
}

/// A committed claim: the proof every later fenced write of this request names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    id: RecordId,
    lease: Lease,
    fingerprint: Fingerprint,
    on_error: ErrorPolicy,
    /// The row's retention (the claiming route's, or the row's own after a takeover).
    retention_ms: u64,
    taken_over: bool,
    /// When the read that decided the claim came back (monotonic): under
    /// [`Clock::Database`], `lease.locked_at` plus the time since is the database's clock
    /// now, without asking it again.
    read_at: Instant,
}

impl Claim {
    /// (scope, key).
    pub fn id(&self) -> &RecordId {
        &self.id
    }

    /// The lease (its token fences every later write).
    pub fn lease(&self) -> &Lease {
        &self.lease
    }

    /// The request's fingerprint (operation and body).
    pub fn fingerprint(&self) -> &Fingerprint {
        &self.fingerprint
    }

    /// The error policy the route declared, which [`failed`](Self::failed) follows.
    pub fn on_error(&self) -> ErrorPolicy {
        self.on_error
    }

    /// How the work's failure ends this claim under the route's declared policy: release it
    /// (a retry runs the work again, resuming the recovery point) or save `response` for
    /// replay (idem-store's [`rules::finish`](idem_store::rules::finish)). Hand it to
    /// [`Db::finish`], [`Db::finish_with`] or [`FinishTx::finish`].
    pub fn failed(&self, response: idem_store::SavedResponse) -> Finish {
        idem_store::rules::finish(self.on_error, response)
    }

    /// The row's retention after each write, fixed when the key was first claimed.
    pub fn retention_ms(&self) -> u64 {
        self.retention_ms
    }

    /// `now` on the table's clock for a write of this claim: the caller's `now`, or under
    /// [`Clock::Database`] the database's clock as the claim's read returned it plus the
    /// time elapsed since on this machine's monotonic clock (a few milliseconds of network
    /// latency off at most, which retention, counted in hours, does not notice).
    pub(crate) fn table_now(&self, clock: Clock, now: u64) -> u64 {
        match clock {
            Clock::Caller => now,
            Clock::Database => {
                let elapsed = u64::try_from(self.read_at.elapsed().as_millis()).unwrap_or(u64::MAX);
                self.lease.locked_at.saturating_add(elapsed)
            }
        }
    }

    /// Whether this claim took over a stale one (an earlier worker may have done part of
    /// the work: resume from [`ClaimTx::recovery`]).
    pub fn taken_over(&self) -> bool {
        self.taken_over
    }
}

/// A claim whose transaction is still open: the route writes its recovery point (and any
/// other first local write) in it, then [`commit`](Self::commit)s. Dropped without a
/// commit, it rolls back and the key is free again, as if the request never came.
#[derive(Debug)]
pub struct ClaimTx {
    claim: Claim,
    recovery: Option<Vec<u8>>,
    /// The stale lease's token, for a takeover.
    replaced: Option<u64>,
    expires_at: u64,
    tx: Tx,
    db: Db,
    _turn: WriterTurn,
}

impl ClaimTx {
    /// The claim this transaction will commit.
    pub fn claim(&self) -> &Claim {
        &self.claim
    }

    /// The recovery point an earlier worker saved for this (scope, key) and this same
    /// request (fingerprint), read in this transaction: after a takeover, or after a
    /// released claim. `None` for a first claim, and for a different payload under a
    /// released key (it never resumes another request's work).
    pub fn recovery(&self) -> Option<&[u8]> {
        self.recovery.as_deref()
    }

    /// The transaction, for the route's own writes (with [`with_tx!`](crate::with_tx)).
    pub fn tx(&mut self) -> &mut Tx {
        &mut self.tx
    }

    /// Write (or replace) the recovery point in this transaction. It outlives a release of
    /// the claim and is pruned with retention.
    pub async fn set_recovery(&mut self, point: &[u8]) -> Result<(), DbError> {
        let expires_at = error::to_i64("expires_at", self.expires_at)?;
        progress::write_recovery(&mut self.tx, &self.claim, point, expires_at).await?;
        self.recovery = Some(point.to_vec());
        Ok(())
    }

    /// Create the route's first row in this transaction and save its id as the recovery
    /// point ([`RouteInsert::point`]); the id. For a claim whose recovery point names
    /// nothing the route can use (an order deleted by hand): the work starts again from a
    /// new row, which the next worker then resumes.
    pub async fn create(&mut self, first: &RouteInsert<'_>) -> Result<i64, DbError> {
        let statement = self
            .db
            .inner
            .composed
            .get(vec![first.shape("insert")], || first.plain_sql())?;
        let id: i64 = with_tx!(&mut self.tx, |conn| {
            write::bind_params!(
                sqlx::query_scalar(sqlx::AssertSqlSafe(statement)),
                first.params()
            )
            .fetch_one(conn)
            .await
        })?;
        self.set_recovery(&RouteInsert::point(id)).await?;
        Ok(id)
    }

    /// Commit the claim with the route's writes. Only now do other requests see it.
    pub async fn commit(self) -> Result<Claim, DbError> {
        self.tx.commit().await?;
        let kind = match self.replaced {
            None => EventKind::Claimed {
                token: self.claim.lease.token,
            },
            Some(old_token) => EventKind::TakenOver {
                old_token,
                new_token: self.claim.lease.token,
            },
        };
        self.db
            .log_id(self.claim.lease.locked_at, &self.claim.id, kind);
        Ok(self.claim)
    }
}

/// The fenced transaction that ends a claim ([`Db::finish_tx`]): the route's business writes
/// go into [`tx`](Self::tx), then [`finish`](Self::finish) saves the response (or releases
/// the claim) in the same transaction, only if the claim is still ours.
#[derive(Debug)]
pub struct FinishTx {
    claim: Claim,
    tx: Tx,
    db: Db,
    _turn: WriterTurn,
}

impl FinishTx {
    /// The transaction, for the route's business writes.
    pub fn tx(&mut self) -> &mut Tx {
        &mut self.tx
    }

    /// The transaction, to read.
    pub fn tx_ref(&self) -> &Tx {
        &self.tx
    }
}

impl Db {
    /// Open the database at `url` (`sqlite:PATH`, `sqlite://PATH`, `postgres://…`),
    /// creating the SQLite file if missing, and bring its schema up to date.
    pub async fn open(url: &str, options: DbOptions) -> Result<Db, DbError> {
        let cleaned = Counter::default();
        let (pool, writer, sql) = if url.starts_with("sqlite:") {
            let connect = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                // WAL with NORMAL loses no committed transaction on a process crash (only,
                // at worst, the last ones on a power cut), and syncs far less often.
                .synchronous(SqliteSynchronous::Normal)
                .busy_timeout(options.busy_timeout);
            let pool = SqlitePoolOptions::new()
                .max_connections(options.max_connections)
                // No ping before each use (one hand-off to the connection's thread per
                // statement saved): a local file does not hang up. sqlx still pings a
                // connection when it comes back to the pool.
                .test_before_acquire(false)
                .connect_with(connect.clone())
                .await?;
            migrator(CLAIMS_MIGRATIONS_TABLE, SQLITE_MIGRATIONS)
                .run(&pool)
                .await?;
            // The writes' own connection, opened after the migrations. Writers reach it
            // through their turn, one at a time; a write that skipped its turn
            // (`writer_turn`) fails as unavailable after `busy_timeout`, as SQLite's own lock
            // would make it.
            let writer = SqlitePoolOptions::new()
                .max_connections(1)
                .min_connections(1)
                .acquire_timeout(options.busy_timeout)
                .test_before_acquire(false)
                .connect_with(connect)
                .await?;
            (
                Pool::Sqlite(pool),
                Some(writer),
                sql::Dialect::sqlite(options.clock),
            )
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            let connect = PgConnectOptions::from_str(url)?;
            // A connection back inside a transaction is rolled back before reuse.
            let pool = pool::clean_on_release(PgPoolOptions::new(), cleaned.clone())
                .max_connections(options.max_connections)
                .acquire_timeout(Duration::from_secs(5))
                // No ping before each use: it was a round trip on every request's path
                // (a replay would cost two). sqlx pings a connection when it comes back to
                // the pool, off the request's path, and closes it if the server hung up;
                // a connection broken while idle (a database restart) fails its next
                // statement, which answers 503 and retires the connection.
                .test_before_acquire(false)
                .connect_with(connect)
                .await?;
            migrator(CLAIMS_MIGRATIONS_TABLE, POSTGRES_MIGRATIONS)
                .run(&pool)
                .await?;
            (
                Pool::Postgres(pool),
                None,
                sql::Dialect::postgres(options.clock),
            )
        } else {
            return Err(DbError::Url(url.to_owned()));
        };
        let (events, _) = broadcast::channel(1_024);
        Ok(Db {
            inner: Arc::new(Inner {
                pool,
                log: Mutex::new(EventLog::new(options.store.event_capacity)),
                options,
                sql,
                composed: sql::Composed::default(),
                events,
                writers: Arc::new(tokio::sync::Mutex::new(())),
                writer,
                cleaned,
            }),
        })
    }

    /// How many connections came back to the PostgreSQL pool inside a transaction and were
    /// rolled back before reuse (each is also logged). Always 0 on SQLite, whose driver
    /// rolls back a transaction dropped at any point itself.
    pub fn connections_cleaned(&self) -> u64 {
        self.inner.cleaned.get()
    }

    /// The counter behind [`connections_cleaned`](Self::connections_cleaned), for the
    /// metrics registry.
    pub(crate) fn cleaned_counter(&self) -> &Counter {
        &self.inner.cleaned
    }

    /// Which backend.
    pub fn backend(&self) -> Backend {
        match self.inner.pool {
            Pool::Sqlite(_) => Backend::Sqlite,
            Pool::Postgres(_) => Backend::Postgres,
        }
    }

    /// The store configuration (lease, retention, limits).
    pub fn config(&self) -> &StoreConfig {
        &self.inner.options.store
    }

    /// The options it was opened with.
    pub fn options(&self) -> &DbOptions {
        &self.inner.options
    }

    /// The SQLite pool, for a route's own reads outside a claim (`None` on PostgreSQL).
    pub fn sqlite_pool(&self) -> Option<&SqlitePool> {
        match &self.inner.pool {
            Pool::Sqlite(p) => Some(p),
            Pool::Postgres(_) => None,
        }
    }

    /// The PostgreSQL pool, for a route's own reads outside a claim (`None` on SQLite).
    pub fn postgres_pool(&self) -> Option<&PgPool> {
        match &self.inner.pool {
            Pool::Postgres(p) => Some(p),
            Pool::Sqlite(_) => None,
        }
    }

    /// Close the pool (waits for connections in use to come back).
    pub async fn close(&self) {
        match &self.inner.pool {
            Pool::Sqlite(p) => p.close().await,
            Pool::Postgres(p) => p.close().await,
        }
        if let Some(writer) = &self.inner.writer {
            writer.close().await;
        }
    }

    /// A write transaction (SQLite: `BEGIN IMMEDIATE`, after this process's writer turn),
    /// and the turn, to hold until the transaction ends.
    async fn write_tx(&self) -> Result<(Tx, WriterTurn), DbError> {
        self.write_tx_on(Link::Pool).await
    }

    /// [`write_tx`](Self::write_tx) on the connection `link` holds, if it holds one.
    async fn write_tx_on(&self, link: Link) -> Result<(Tx, WriterTurn), DbError> {
        let turn = self.writer_turn().await;
        let tx = match (&self.inner.pool, link) {
            (Pool::Sqlite(p), _) => {
                Tx::begin_sqlite(self.inner.writer.as_ref().unwrap_or(p)).await?
            }
            (Pool::Postgres(_), Link::Postgres(conn)) => Tx::Postgres(PgTx::begin(conn).await?),
            (Pool::Postgres(p), Link::Pool) => Tx::begin_postgres(p).await?,
        };
        Ok((tx, turn))
    }

    /// Where a request's statements go until its claim's transaction opens: on PostgreSQL
    /// one connection, held from the read to the claim's `COMMIT`; on SQLite the pool.
    async fn link(&self) -> Result<Link, DbError> {
        Ok(match &self.inner.pool {
            Pool::Sqlite(_) => Link::Pool,
            Pool::Postgres(p) => Link::Postgres(p.acquire().await?),
        })
    }

    /// SQLite: wait for this process's turn to write. SQLite has one write lock per file,
    /// and a writer that finds it taken sleeps in SQLite's busy handler (1, 2, 5, 10, …
    /// 100 ms) and tries again, so under load the lock sits free while writers sleep. Taking
    /// turns in a FIFO queue here first hands the lock over at once. Other processes on the
    /// same file still meet SQLite's busy handler (`busy_timeout`), as before; a turn not
    /// given within `busy_timeout` (a task that already holds one and writes again) is
    /// skipped, leaving that write to SQLite's lock alone.
    async fn writer_turn(&self) -> WriterTurn {
        if !matches!(self.inner.pool, Pool::Sqlite(_)) {
            return None;
        }
        let queue = Arc::clone(&self.inner.writers);
        tokio::time::timeout(self.inner.options.busy_timeout, queue.lock_owned())
            .await
            .ok()
    }

    fn lock_ms(&self) -> u64 {
        self.inner.options.store.lock_ms
    }
}

/// The claim table's schema versions: 1, the table; 2, each row's own retention; 3, a
/// released claim keeps its row (`released_token`).
const SQLITE_MIGRATIONS: &[MigrationSql] = &[
    (
        1,
        "claims",
        include_str!("../../migrations/sqlite/0001_claims.sql"),
    ),
    (
        2,
        "retention",
        include_str!("../../migrations/sqlite/0002_retention.sql"),
    ),
    (
        3,
        "released",
        include_str!("../../migrations/sqlite/0003_released.sql"),
    ),
];

const POSTGRES_MIGRATIONS: &[MigrationSql] = &[
    (
        1,
        "claims",
        include_str!("../../migrations/postgres/0001_claims.sql"),
    ),
    (
        2,
        "retention",
        include_str!("../../migrations/postgres/0002_retention.sql"),
    ),
    (
        3,
        "released",
        include_str!("../../migrations/postgres/0003_released.sql"),
    ),
];

/// Where sqlx records which claim-table migrations ran (its own table, so a route's
/// migrations, [`Db::migrate`], number theirs freely).
const CLAIMS_MIGRATIONS_TABLE: &str = "_idem_claims_migrations";

/// One versioned migration: (version, description, SQL).
pub type MigrationSql = (i64, &'static str, &'static str);

/// A route's own schema (its business tables: orders, a ledger), versioned apart from the
/// claim table's, in the same database so its writes can share the claim's transactions.
#[derive(Debug, Clone, Copy)]
pub struct AppMigrations {
    /// A name for the set; sqlx records its versions in `_<name>_migrations`.
    pub name: &'static str,
    /// The SQLite spelling, in version order.
    pub sqlite: &'static [MigrationSql],
    /// The PostgreSQL spelling, in version order.
    pub postgres: &'static [MigrationSql],
}

impl Db {
    /// Bring a route's own schema up to date (run once at start, after [`Db::open`]).
    pub async fn migrate(&self, app: &AppMigrations) -> Result<(), DbError> {
        let table = format!("_{}_migrations", app.name);
        match &self.inner.pool {
            Pool::Sqlite(pool) => migrator(table, app.sqlite).run(pool).await?,
            Pool::Postgres(pool) => migrator(table, app.postgres).run(pool).await?,
        }
        Ok(())
    }
}

/// The migrations, embedded in the binary (versioned; sqlx records which ran in `table`).
fn migrator(
    table: impl Into<std::borrow::Cow<'static, str>>,
    migrations: &'static [MigrationSql],
) -> Migrator {
    let mut migrator = Migrator::with_migrations(
        migrations
            .iter()
            .map(|&(version, name, sql)| {
                Migration::new(
                    version,
                    name.into(),
                    MigrationType::Simple,
                    sql.into_sql_str(),
                    false,
                )
            })
            .collect(),
    );
    migrator.dangerous_set_table_name(table);
    migrator
}
