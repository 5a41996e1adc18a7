//! The database's own limit for a keyed first request: the same SQL text idem-server sends
//! (recorded from its query log, [`crate::statements`]), in the same transactions, run
//! directly through the driver (sqlx on a pool, no `idem_server::db`, no HTTP) by `c` tasks
//! in a loop; and the same plan rendered as a pgbench script ([`Plan::pgbench_script`]).
//!
//! A plan names, per statement, what it binds; the texts come from the server. If the
//! server's statements change in number or shape, the plan no longer fits and the bench
//! stops with a message instead of measuring something else.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::Instant,
};

use serde_json::json;

/// What a statement binds, in order.
#[derive(Debug, Clone)]
pub enum Bind {
    Text(&'static str),
    OptionalText(Option<&'static str>),
    Int(i64),
    Bytes(Vec<u8>),
    /// This request's idempotency key (unique per request).
    Key,
    /// The caller's clock, ms.
    Now,
    /// Now plus the retention.
    ExpiresAt,
    /// The lease token the claim returned.
    Token,
    /// The order id the order insert returned.
    OrderId,
    /// The recovery point: the order id as decimal text, as bytes.
    Point,
}

/// What a statement's first columns give the later ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Returns {
    Nothing,
    Token,
    OrderId,
    /// The token, then the order id (the claim with the order, on PostgreSQL).
    TokenAndOrderId,
}

#[derive(Debug, Clone)]
pub struct Statement {
    pub sql: String,
    pub binds: Vec<Bind>,
    pub returns: Returns,
}

/// A keyed first request's statements, grouped as the server groups them.
#[derive(Debug, Clone)]
pub enum Group {
    /// One statement on its own (autocommit).
    Alone(Statement),
    /// Statements in one transaction.
    Transaction(Vec<Statement>),
}

#[derive(Debug, Clone)]
pub struct Plan {
    pub groups: Vec<Group>,
}

const RETENTION_MS: i64 = 86_400_000;
/// The text of idem-axum's release probe (`crates/axum/src/db/pool.rs`).
pub const RELEASE_PROBE: &str = "SELECT transaction_timestamp() < statement_timestamp()";
pub const SCOPE: &str = "tenant-a";

impl Plan {
    /// The plan for `backend` over the statements one real first request sent (`sent`, in
    /// order, as the query log recorded them).
    pub fn new(backend: &str, sent: &[String]) -> Result<Plan, String> {
        // The pool's release probe (idem-axum's net under every transaction guard on
        // PostgreSQL, one per connection going back) is the server's own cost: the database's
        // limit runs the request's statements without it.
        let sent: Vec<String> = sent
            .iter()
            .filter(|s| s.trim() != RELEASE_PROBE)
            .cloned()
            .collect();
        let sent = &sent[..];
        let fp = vec![7u8; 32];
        let read = |binds_now: bool| {
            let mut b = vec![Bind::Text(SCOPE), Bind::Key];
            if binds_now {
                b.push(Bind::Now);
            }
            b
        };
        let claim = vec![
            Bind::Text(SCOPE),
            Bind::Key,
            Bind::Bytes(fp.clone()),
            Bind::Text("release-claim"),
            Bind::Now,
            Bind::ExpiresAt,
            Bind::Int(RETENTION_MS),
        ];
        let order = vec![
            Bind::Text(SCOPE),
            Bind::Key,
            Bind::Text("cart-1"),
            Bind::Int(1000),
            Bind::Text("tok_visa"),
            Bind::Text("pending"),
            Bind::Now,
        ];
        let recovery = vec![
            Bind::Text(SCOPE),
            Bind::Key,
            Bind::Bytes(fp.clone()),
            Bind::Point,
            Bind::ExpiresAt,
        ];
        let settle = vec![
            Bind::Text("paid"),
            Bind::OptionalText(Some("ch_1")),
            Bind::OrderId,
        ];
        // The `order.paid` message, in the same fenced commit (its id unique per request).
        let outbox = vec![
            Bind::Text(SCOPE),
            Bind::Key,
            Bind::Text("order.paid"),
            Bind::Text(r#"{"amount":1000,"charge":"ch_1","order":1}"#),
            Bind::Now,
        ];
        let fence = vec![
            Bind::Text(SCOPE),
            Bind::Key,
            Bind::Token,
            Bind::ExpiresAt,
            Bind::Int(201),
            Bind::Text("application/json"),
            Bind::Text("[]"),
            Bind::Bytes(br#"{"order":1,"status":"paid"}"#.to_vec()),
        ];
        let st = |i: usize, binds: Vec<Bind>, returns: Returns| -> Result<Statement, String> {
            let sql = sent
                .get(i)
                .ok_or_else(|| format!("the server sent {} statements: {sent:#?}", sent.len()))?;
            Ok(Statement {
                sql: sql.clone(),
                binds,
                returns,
            })
        };
        let groups = match backend {
            // read; the claim with the order and the recovery point (one statement);
            // fenced commit + settlement.
            "postgres" => {
                if sent.len() != 3 {
                    return Err(format!("unexpected statements on PostgreSQL: {sent:#?}"));
                }
                let mut claim_with_order = order;
                claim_with_order.extend(claim);
                let mut commit = settle;
                commit.extend(outbox);
                commit.extend(fence);
                vec![
                    Group::Alone(st(0, read(false), Returns::Nothing)?),
                    Group::Alone(st(1, claim_with_order, Returns::TokenAndOrderId)?),
                    Group::Alone(st(2, commit, Returns::Nothing)?),
                ]
            }
            // read; BEGIN IMMEDIATE, token bump, claim, order, recovery point, COMMIT;
            // BEGIN IMMEDIATE, fenced commit, settlement, the outbox's message, COMMIT.
            "sqlite" => {
                if sent.len() != 8 {
                    return Err(format!("unexpected statements on SQLite: {sent:#?}"));
                }
                vec![
                    Group::Alone(st(0, read(true), Returns::Nothing)?),
                    Group::Transaction(vec![
                        st(1, vec![], Returns::Nothing)?,
                        st(2, claim, Returns::Token)?,
                        st(3, order, Returns::OrderId)?,
                        st(4, recovery, Returns::Nothing)?,
                    ]),
                    Group::Transaction(vec![
                        st(5, fence, Returns::Nothing)?,
                        st(6, settle, Returns::Nothing)?,
                        st(7, outbox, Returns::Nothing)?,
                    ]),
                ]
            }
            other => return Err(format!("unknown backend {other}")),
        };
        Ok(Plan { groups })
    }

    /// Statements per request, `BEGIN` and `COMMIT` included (each is a round trip to the
    /// database or, on SQLite, a call into it).
    pub fn statements(&self) -> usize {
        self.groups
            .iter()
            .map(|g| match g {
                Group::Alone(_) => 1,
                Group::Transaction(s) => s.len() + 2,
            })
            .sum()
    }

    /// The plan as a pgbench script: `$n` replaced by the bound values (the key from a
    /// random `:n`, the token and the order id from `\gset`), one transaction per request.
    pub fn pgbench_script(&self) -> String {
        let mut out = String::from("\\set n random(1, 1000000000000)\n");
        let render = |s: &Statement| {
            let mut sql = s.sql.replace('\n', " ");
            // Highest first, so $1 never eats the start of $10.
            for (i, bind) in s.binds.iter().enumerate().rev() {
                let literal = match bind {
                    Bind::Text(t) => format!("'{t}'"),
                    Bind::OptionalText(Some(t)) => format!("'{t}'"),
                    Bind::OptionalText(None) => "NULL".to_owned(),
                    Bind::Int(v) => format!("CAST({v} AS BIGINT)"),
                    Bind::Bytes(b) => format!("'\\x{}'::bytea", hex(b)),
                    Bind::Key => "('k' || :n)".to_owned(),
                    Bind::Now => "CAST(0 AS BIGINT)".to_owned(),
                    Bind::ExpiresAt => format!("CAST({RETENTION_MS} AS BIGINT)"),
                    Bind::Token => "CAST(:token AS BIGINT)".to_owned(),
                    Bind::OrderId => "CAST(:id AS BIGINT)".to_owned(),
                    Bind::Point => "convert_to(CAST(:id AS TEXT), 'UTF8')".to_owned(),
                };
                sql = sql.replace(&format!("${}", i + 1), &literal);
            }
            // `\gset` ends the command in place of the semicolon.
            let end = match s.returns {
                Returns::Nothing => ";",
                Returns::Token | Returns::OrderId | Returns::TokenAndOrderId => " \\gset",
            };
            format!("{sql}{end}\n")
        };
        for g in &self.groups {
            match g {
                Group::Alone(s) => out.push_str(&render(s)),
                Group::Transaction(ss) => {
                    out.push_str("BEGIN;\n");
                    for s in ss {
                        out.push_str(&render(s));
                    }
                    out.push_str("COMMIT;\n");
                }
            }
        }
        out
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The values of one request.
struct Values {
    key: String,
    now: i64,
    token: i64,
    order: i64,
}

macro_rules! bind_all {
    ($query:expr, $binds:expr, $v:expr) => {{
        let mut q = $query;
        for b in $binds {
            q = match b {
                Bind::Text(t) => q.bind(*t),
                Bind::OptionalText(t) => q.bind(*t),
                Bind::Int(i) => q.bind(*i),
                Bind::Bytes(b) => q.bind(b.as_slice()),
                Bind::Key => q.bind($v.key.as_str()),
                Bind::Now => q.bind($v.now),
                Bind::ExpiresAt => q.bind($v.now + RETENTION_MS),
                Bind::Token => q.bind($v.token),
                Bind::OrderId => q.bind($v.order),
                Bind::Point => q.bind($v.order.to_string().into_bytes()),
            };
        }
        q
    }};
}

/// Run one statement on `$conn`, storing what it returns.
macro_rules! run_statement {
    ($conn:expr, $s:expr, $v:expr) => {{
        let s: &Statement = $s;
        let query = sqlx::query(sqlx::AssertSqlSafe(s.sql.clone()));
        let query = bind_all!(query, &s.binds, $v);
        match s.returns {
            Returns::Nothing => {
                query.execute($conn).await.expect("statement");
            }
            Returns::Token | Returns::OrderId | Returns::TokenAndOrderId => {
                use sqlx::Row;
                let row = query.fetch_one($conn).await.expect("statement");
                let first: i64 = row.try_get(0).expect("a number");
                match s.returns {
                    Returns::Token => $v.token = first,
                    Returns::OrderId => $v.order = first,
                    _ => {
                        $v.token = first;
                        $v.order = row.try_get(1).expect("a number");
                    }
                }
            }
        }
    }};
}

/// `n` requests' statements by `c` tasks on `pool`; requests/s. With `$turns`, the write
/// transactions take turns on an async mutex first (as idem-server does on SQLite).
macro_rules! run_loop {
    ($pool:expr, $plan:expr, $n:expr, $c:expr, $tag:expr, $begin:expr, $turns:expr) => {{
        let next = Arc::new(AtomicUsize::new(0));
        let turns = Arc::new(tokio::sync::Mutex::new(()));
        let started = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..$c {
            let (pool, plan, next, turns, tag) = (
                $pool.clone(),
                $plan.clone(),
                next.clone(),
                turns.clone(),
                $tag.to_owned(),
            );
            tasks.push(tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= $n {
                        return;
                    }
                    let mut v = Values {
                        key: format!("raw-{tag}-{}-{i}", if $turns { "turns" } else { "busy" }),
                        now: i64::try_from(idem_server::sql::now_ms()).expect("now"),
                        token: 0,
                        order: 0,
                    };
                    for g in &plan.groups {
                        match g {
                            Group::Alone(s) => run_statement!(&pool, s, v),
                            Group::Transaction(ss) => {
                                let _turn = match $turns {
                                    true => Some(turns.lock().await),
                                    false => None,
                                };
                                let mut tx = $begin(&pool).await.expect("begin");
                                for s in ss {
                                    run_statement!(&mut *tx, s, v);
                                }
                                tx.commit().await.expect("commit");
                            }
                        }
                    }
                }
            }));
        }
        for t in tasks {
            t.await.expect("raw task");
        }
        $n as f64 / started.elapsed().as_secs_f64()
    }};
}

async fn begin_sqlite(
    pool: &sqlx::SqlitePool,
) -> Result<sqlx::Transaction<'static, sqlx::Sqlite>, sqlx::Error> {
    // As the server writes: the write lock from the start.
    pool.begin_with("BEGIN IMMEDIATE").await
}

async fn begin_postgres(
    pool: &sqlx::PgPool,
) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, sqlx::Error> {
    pool.begin().await
}

/// The plan through sqlx on SQLite, three ways: the write transactions taking turns on an
/// async mutex first, straight to SQLite's lock and its busy handler (both on `pool`), and on
/// a pool of one connection of their own, reads on `pool` (as idem-server does since its
/// writes have their own connection). The fastest is the limit. `tag` keeps each call's
/// keys apart.
pub async fn sqlite(
    pool: &sqlx::SqlitePool,
    plan: &Plan,
    n: usize,
    c: usize,
    tag: &str,
) -> serde_json::Value {
    let turns = sqlite_variant(pool, plan, n, c, tag, "turns").await;
    let busy = sqlite_variant(pool, plan, n, c, tag, "busy").await;
    let writer = sqlite_variant(pool, plan, n, c, tag, "writer").await;
    json!({
        "rps": turns.max(busy).max(writer), "taking_turns_rps": turns, "busy_handler_rps": busy,
        "writer_connection_rps": writer,
        "statements_per_request": plan.statements(),
    })
}

/// As `run_loop!`, the write transactions on `$writer`, the rest on `$pool`.
macro_rules! run_loop_split {
    ($pool:expr, $writer:expr, $plan:expr, $n:expr, $c:expr, $tag:expr) => {{
        let next = Arc::new(AtomicUsize::new(0));
        let started = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..$c {
            let (pool, writer, plan, next, tag) = (
                $pool.clone(),
                $writer.clone(),
                $plan.clone(),
                next.clone(),
                $tag.to_owned(),
            );
            tasks.push(tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= $n {
                        return;
                    }
                    let mut v = Values {
                        key: format!("raw-{tag}-writer-{i}"),
                        now: i64::try_from(idem_server::sql::now_ms()).expect("now"),
                        token: 0,
                        order: 0,
                    };
                    for g in &plan.groups {
                        match g {
                            Group::Alone(s) => run_statement!(&pool, s, v),
                            Group::Transaction(ss) => {
                                let mut tx = begin_sqlite(&writer).await.expect("begin");
                                for s in ss {
                                    run_statement!(&mut *tx, s, v);
                                }
                                tx.commit().await.expect("commit");
                            }
                        }
                    }
                }
            }));
        }
        for t in tasks {
            t.await.expect("raw task");
        }
        $n as f64 / started.elapsed().as_secs_f64()
    }};
}

/// One way of running the plan on SQLite, by name: `turns` (write transactions take turns on
/// an async mutex, then `BEGIN IMMEDIATE` on `pool`), `busy` (straight to SQLite's lock),
/// `writer` (write transactions on a pool of one connection of their own, which queues them;
/// reads on `pool`), `one` (everything on one connection); requests/s.
pub async fn sqlite_variant(
    pool: &sqlx::SqlitePool,
    plan: &Plan,
    n: usize,
    c: usize,
    tag: &str,
    variant: &str,
) -> f64 {
    match variant {
        "turns" => run_loop!(pool, plan, n, c, tag, begin_sqlite, true),
        "busy" => run_loop!(pool, plan, n, c, tag, begin_sqlite, false),
        "writer" => {
            let writer = one_connection(pool).await;
            let rps = run_loop_split!(pool, &writer, plan, n, c, tag);
            writer.close().await;
            rps
        }
        "one" => {
            let one = one_connection(pool).await;
            let rps = run_loop!(&one, plan, n, c, tag, begin_sqlite, false);
            one.close().await;
            rps
        }
        other => panic!("unknown variant {other}"),
    }
}

async fn one_connection(pool: &sqlx::SqlitePool) -> sqlx::SqlitePool {
    sqlx::sqlite::SqlitePoolOptions::new()
        .max_connections(1)
        .test_before_acquire(false)
        .connect_with((*pool.connect_options()).clone())
        .await
        .expect("one connection")
}

/// The plan through sqlx on PostgreSQL. `tag` keeps each call's keys apart.
pub async fn postgres(
    pool: &sqlx::PgPool,
    plan: &Plan,
    n: usize,
    c: usize,
    tag: &str,
) -> serde_json::Value {
    let rps = run_loop!(pool, plan, n, c, tag, begin_postgres, false);
    json!({ "rps": rps, "statements_per_request": plan.statements() })
}
