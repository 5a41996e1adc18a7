//! Opening databases and driving claims in virtual time.

use idem_server::db::{Begin, Claim, Db, DbOptions, Request};
use idem_store::{ErrorPolicy, RouteConfig, SavedResponse, StoreConfig};

use crate::support::postgres::Postgres;

pub const ROUTE: RouteConfig = RouteConfig::required("POST /t", ErrorPolicy::ReleaseClaim);
/// The same operation with a retention of its own, shorter than the store's.
pub const SHORT_LIVED: RouteConfig = ROUTE.with_retention_ms(SHORT_RETENTION_MS);
pub const SHORT_RETENTION_MS: u64 = 5_000;
pub const LOCK_MS: u64 = 1_000;
pub const RETENTION_MS: u64 = 60_000;

pub fn options() -> DbOptions {
    DbOptions {
        store: StoreConfig {
            lock_ms: LOCK_MS,
            retention_ms: RETENTION_MS,
            ..StoreConfig::default()
        },
        ..DbOptions::default()
    }
}

/// A fresh SQLite file (the folder lives as long as the returned guard).
pub async fn sqlite() -> (Db, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let url = format!("sqlite:{}", dir.path().join("t.db").display());
    (Db::open(&url, options()).await.expect("open sqlite"), dir)
}

/// A fresh database on the shared PostgreSQL cluster.
pub async fn postgres(name: &str) -> Db {
    let pg = Postgres::shared();
    let admin = sqlx::PgPool::connect(pg.url()).await.expect("connect");
    let db_name = format!("ops_{name}_{}", std::process::id());
    let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS {db_name}"
    )))
    .execute(&admin)
    .await;
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {db_name}")))
        .execute(&admin)
        .await
        .expect("create database");
    admin.close().await;
    let url = match pg.url().rsplit_once('/') {
        Some((base, _)) => format!("{base}/{db_name}"),
        None => panic!("unexpected url {}", pg.url()),
    };
    Db::open(&url, options()).await.expect("open postgres")
}

/// Claim (scope, key) with `body` at `now`; panics unless the rules say execute.
pub async fn claim(db: &Db, now: u64, scope: &str, key: &str, body: &[u8]) -> Claim {
    claim_on(db, &ROUTE, now, scope, key, body).await
}

/// [`claim`] through `route`.
pub async fn claim_on(
    db: &Db,
    route: &RouteConfig,
    now: u64,
    scope: &str,
    key: &str,
    body: &[u8],
) -> Claim {
    let request = Request {
        first_sent: None,
        scope,
        key: Some(key),
        body,
        route,
        target: None,
    };
    match db.begin(now, request).await.expect("begin") {
        Begin::Execute(tx) => tx.commit().await.expect("commit the claim"),
        other => panic!("expected to execute {scope}/{key}, got {other:?}"),
    }
}

/// Ask again with (scope, key, body) at `now`: the store's answer (replay, 409, 422).
pub async fn ask(db: &Db, now: u64, scope: &str, key: &str, body: &[u8]) -> Begin {
    let request = Request {
        first_sent: None,
        scope,
        key: Some(key),
        body,
        route: &ROUTE,
        target: None,
    };
    db.begin(now, request).await.expect("begin")
}

pub fn created(body: &str) -> SavedResponse {
    SavedResponse::json(201, body.as_bytes().to_vec()).with_header("Location", "/t/1")
}
