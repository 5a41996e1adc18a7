//! The server's SQL claim tables behind the store's shared test trait (`Claims`, in
//! `crates/store/tests/shared`), so the store's rule and model tests run, as the same code,
//! over SQLite and PostgreSQL. Also fresh tables for the storage tests.

#![allow(dead_code)] // each test binary uses a part

use idem_server::db::Finish;
use std::{
    collections::HashMap,
    path::PathBuf,
    sync::atomic::{AtomicUsize, Ordering},
};

use idem_server::db::{Begin as DbBegin, Claim, Db, DbError, DbOptions, Request};
use idem_store::{
    Begin, Event, Fenced, Lease, RecordId, RouteConfig, RowView, SavedResponse, StoreConfig,
};
use tokio::runtime::Runtime;

use crate::shared::Claims;
use crate::support::postgres::Postgres;

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// Which database a fresh table lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A new SQLite file in a temporary folder.
    Sqlite,
    /// A new database on the test binary's PostgreSQL cluster (or `DATABASE_URL`).
    Postgres,
}

/// The URL of a fresh, empty database of `kind`.
pub async fn fresh_url(kind: Kind) -> String {
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!("idem_t_{}_{n}", std::process::id());
    match kind {
        Kind::Sqlite => {
            let dir = std::env::temp_dir().join("idem-sqlite-tests");
            std::fs::create_dir_all(&dir).expect("temporary folder");
            let path: PathBuf = dir.join(format!("{name}.db"));
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{}{suffix}", path.display()));
            }
            format!("sqlite://{}", path.display())
        }
        Kind::Postgres => {
            use sqlx::Connection;
            let base = Postgres::shared().url();
            let mut conn = sqlx::PgConnection::connect(base)
                .await
                .expect("connect to the test cluster");
            sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
                .execute(&mut conn)
                .await
                .expect("create a test database");
            let (server, _) = base.rsplit_once('/').expect("a database in the url");
            format!("{server}/{name}")
        }
    }
}

/// A fresh table of `kind` opened with `options`.
pub async fn fresh(kind: Kind, options: DbOptions) -> Db {
    Db::open(&fresh_url(kind).await, options)
        .await
        .expect("open a fresh table")
}

/// A SQL table driven synchronously (its own runtime), as the shared tests expect.
pub struct SqlClaims {
    rt: Runtime,
    db: Db,
    url: String,
    /// The claims this table handed out, by (scope, key, token).
    claims: HashMap<(String, String, u64), Claim>,
}

impl SqlClaims {
    /// A fresh table of `kind` under `config`.
    pub fn new(kind: Kind, config: StoreConfig) -> Self {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime");
        let url = rt.block_on(fresh_url(kind));
        let db = rt.block_on(open(&url, config));
        Self {
            rt,
            db,
            url,
            claims: HashMap::new(),
        }
    }

    /// Empty the same database and reopen it under `config`: a fresh table without the
    /// cost of a new database (the model test runs hundreds of cases).
    pub fn reset(&mut self, config: StoreConfig) {
        let db = self.db.clone();
        self.rt.block_on(async {
            wipe(&db).await;
            db.close().await;
        });
        self.db = self.rt.block_on(open(&self.url, config));
        self.claims.clear();
    }

    /// The table.
    pub fn db(&self) -> &Db {
        &self.db
    }

    /// Run a future on this table's runtime.
    pub fn block_on<F: std::future::Future>(&self, f: F) -> F::Output {
        self.rt.block_on(f)
    }

    fn claim_for(&self, id: &RecordId, lease: &Lease) -> Option<Claim> {
        let at = (
            id.scope().to_owned(),
            id.key().as_str().to_owned(),
            lease.token,
        );
        self.claims.get(&at).filter(|c| c.lease() == lease).cloned()
    }

    /// A fenced write with the claim behind (id, lease). A pair this table never handed
    /// out cannot reach a `Db` at all (a `Claim` has no public constructor), so it is
    /// fenced by construction.
    fn fenced_write(
        &mut self,
        id: &RecordId,
        lease: &Lease,
        write: impl AsyncFnOnce(&Db, Claim) -> Result<(), DbError>,
    ) -> Result<(), Fenced> {
        let Some(claim) = self.claim_for(id, lease) else {
            return Err(Fenced);
        };
        let db = self.db.clone();
        match self.rt.block_on(write(&db, claim)) {
            Ok(()) => Ok(()),
            Err(DbError::Fenced) => Err(Fenced),
            Err(e) => panic!("database error: {e}"),
        }
    }
}

async fn open(url: &str, config: StoreConfig) -> Db {
    let options = DbOptions {
        store: config,
        ..DbOptions::default()
    };
    Db::open(url, options).await.expect("open the table")
}

/// Delete every row and restart the tokens at 1.
pub async fn wipe(db: &Db) {
    if let Some(pool) = db.sqlite_pool() {
        for sql in [
            "DELETE FROM idem_claims",
            "DELETE FROM idem_recovery",
            "UPDATE idem_lease_token SET last = 0",
        ] {
            sqlx::query(sql).execute(pool).await.expect("wipe");
        }
    }
    if let Some(pool) = db.postgres_pool() {
        for sql in [
            "TRUNCATE idem_claims, idem_recovery",
            "ALTER SEQUENCE idem_lease_token RESTART",
        ] {
            sqlx::query(sql).execute(pool).await.expect("wipe");
        }
    }
}

/// Rows in the claim table, expired ones included.
pub async fn count(db: &Db) -> usize {
    let n: i64 = if let Some(pool) = db.sqlite_pool() {
        sqlx::query_scalar("SELECT COUNT(*) FROM idem_claims")
            .fetch_one(pool)
            .await
            .expect("count")
    } else {
        let pool = db.postgres_pool().expect("a pool");
        sqlx::query_scalar("SELECT COUNT(*) FROM idem_claims")
            .fetch_one(pool)
            .await
            .expect("count")
    };
    usize::try_from(n).expect("a count")
}

impl SqlClaims {
    /// A request through [`Db::begin`], its claim's transaction committed at once.
    fn begin_sent(
        &mut self,
        now: u64,
        scope: &str,
        key: Option<&str>,
        first_sent: Option<u64>,
        body: &[u8],
        route: &RouteConfig,
    ) -> Begin {
        let request = Request {
            first_sent,
            scope,
            key,
            body,
            route,
            target: None,
        };
        let begun = self.rt.block_on(async {
            match self.db.begin(now, request).await? {
                DbBegin::Execute(tx) => tx.commit().await.map(Ok),
                DbBegin::Unkeyed => Ok(Err(Begin::Unkeyed)),
                DbBegin::Answer(answer) => Ok(Err(answer)),
            }
        });
        match begun {
            Ok(Ok(claim)) => {
                let at = (
                    claim.id().scope().to_owned(),
                    claim.id().key().as_str().to_owned(),
                    claim.lease().token,
                );
                let begin = Begin::Execute {
                    id: claim.id().clone(),
                    lease: *claim.lease(),
                    taken_over: claim.taken_over(),
                };
                self.claims.insert(at, claim);
                begin
            }
            Ok(Err(answer)) => answer,
            Err(e) => panic!("database error: {e}"),
        }
    }
}

impl Claims for SqlClaims {
    fn begin(
        &mut self,
        now: u64,
        scope: &str,
        key: Option<&str>,
        body: &[u8],
        route: &RouteConfig,
    ) -> Begin {
        self.begin_sent(now, scope, key, None, body, route)
    }

    fn begin_first_sent(
        &mut self,
        now: u64,
        scope: &str,
        key: &str,
        first_sent: u64,
        body: &[u8],
        route: &RouteConfig,
    ) -> Begin {
        self.begin_sent(now, scope, Some(key), Some(first_sent), body, route)
    }

    fn commit_response(
        &mut self,
        now: u64,
        id: &RecordId,
        lease: &Lease,
        response: SavedResponse,
    ) -> Result<(), Fenced> {
        self.fenced_write(id, lease, async move |db, claim| {
            db.finish_tx(&claim)
                .await?
                .finish(now, Finish::Commit(response))
                .await
        })
    }

    fn save(
        &mut self,
        now: u64,
        id: &RecordId,
        lease: &Lease,
        response: SavedResponse,
    ) -> Result<(), Fenced> {
        self.fenced_write(id, lease, async move |db, claim| {
            db.finish(now, &claim, Finish::Commit(response)).await
        })
    }

    fn fail(
        &mut self,
        now: u64,
        id: &RecordId,
        lease: &Lease,
        response: SavedResponse,
    ) -> Result<(), Fenced> {
        self.fenced_write(id, lease, async move |db, claim| {
            db.finish(now, &claim, claim.failed(response)).await
        })
    }

    fn release(&mut self, now: u64, id: &RecordId, lease: &Lease) -> Result<(), Fenced> {
        self.fenced_write(id, lease, async move |db, claim| {
            db.finish(now, &claim, Finish::Release).await
        })
    }

    fn renew(&mut self, now: u64, id: &RecordId, lease: &Lease) -> Result<Lease, Fenced> {
        let Some(mut claim) = self.claim_for(id, lease) else {
            return Err(Fenced);
        };
        match self.rt.block_on(self.db.renew(now, &mut claim)) {
            Ok(()) => {
                let renewed = *claim.lease();
                let at = (
                    id.scope().to_owned(),
                    id.key().as_str().to_owned(),
                    renewed.token,
                );
                self.claims.insert(at, claim);
                Ok(renewed)
            }
            Err(DbError::Fenced) => Err(Fenced),
            Err(e) => panic!("database error: {e}"),
        }
    }

    fn prune(&mut self, now: u64) -> usize {
        self.rt.block_on(self.db.prune(now)).expect("prune")
    }

    fn rows_of(&mut self, now: u64, scopes: &[&str]) -> Vec<RowView> {
        let mut sorted = scopes.to_vec();
        sorted.sort_unstable();
        let mut rows = Vec::new();
        for scope in sorted {
            rows.extend(
                self.rt
                    .block_on(self.db.rows(now, scope, "", 10_000))
                    .expect("rows"),
            );
        }
        rows
    }

    fn row_of(&mut self, now: u64, scope: &str, key: &str) -> Option<RowView> {
        self.rt.block_on(self.db.row(now, scope, key)).expect("row")
    }

    fn row_count(&mut self) -> usize {
        self.rt.block_on(count(&self.db))
    }

    fn logged(&mut self) -> Vec<Event> {
        self.db.events_since(0)
    }
}
