//! `idem-bench-server BACKEND [REQUESTS] [CONCURRENCY]`: one run of idem-server's example
//! checkout on 127.0.0.1, served in this process on `sqlite` (a temporary file) or
//! `postgres` (a throwaway cluster, as the tests start one), with PayCo answered in-process
//! (a stub route that returns a charge at once, so the figure is idem's own cost, not
//! PayCo's). Prints one JSON object:
//!
//! - `first`, `replay`, `conflict`: requests/s and p50/p99 latency (ms) of keyed first
//!   requests (claim + order, PayCo, fenced commit), replays of them, and 409s on a key held
//!   in flight; `statements` per request of each, counted from sqlx's query log;
//! - `unkeyed`: the same work on a route without idem (no key, no claim), same load;
//! - `sent`: the SQL text of one keyed first request, as the server sent it;
//! - `raw`: the database's limit for those statements: the same text in the same
//!   transactions, run directly through the driver (sqlx on a pool; the write transactions
//!   taking turns, straight to SQLite's lock, or on a connection of their own: the fastest)
//!   by the same number of tasks in a loop, no HTTP, no `idem_server::db` (`raw.rs`); the
//!   limit on SQLite;
//! - `direct`: the same request's storage calls through `idem_server::db` in a loop
//!   (informational: what idem's storage layer adds to the driver);
//! - on PostgreSQL, `pgbench`: the same statements as a pgbench custom script, the limit there;
//! - `wait_burst`: a second checkout on the same database in wait mode, and bursts of 50
//!   duplicates of one key in flight ([`burst`]): answers/s and p50/p99.
//!
//! `make bench` runs it twice per backend: as it is, and pinned (`taskset -c 0` on this process;
//! on PostgreSQL the cluster on CPU 1 through `IDEM_BENCH_DB_CPUS`, so pgbench and the server
//! meet the same database core). On SQLite the same variable moves SQLite's own threads to those
//! CPUs ([`pin`]), an experiment `make bench` does not run (bench/FINDINGS.md).
//!
//! The limit and the keyed first requests alternate three times (each limit right before its
//! requests); `first` and the limit are the pair with the median ratio, and `first.ratios`
//! lists the three.
//!
//! The timed phases run with sqlx's statement log off, as the production binary does (its
//! `info` logging included, written to a sink); statements are counted in passes of their own.
//!
//! For a profile of the server alone, `idem-bench-server serve BACKEND` serves the same stack
//! (printing its URL, until stdin closes) and `idem-bench-server load URL [REQUESTS]
//! [CONCURRENCY]` drives it from another process (crates/server/README.md, "Benchmark").
//!
//! For experiments on SQLite, `idem-bench-server rounds [REQUESTS] [CONCURRENCY] [ROUNDS]
//! PHASE…` runs the phases one after another, round after round (`first`, `direct`, one of
//! the limit's ways: `turns`, `busy`, `writer`, `one`, see [`raw::sqlite_variant`]; or the
//! parts of a request without the database: `http`, one bare HTTP exchange, and `payco`, the
//! checkout's PayCo call against the stub) and prints each one's requests/s and the process's
//! CPU time per request (bench/FINDINGS.md).
//!
//! Never a test: `make bench` runs it (bench/steps/server.mjs) and writes BENCHMARKS.md.

#[path = "../../../crates/server/tests/support/postgres.rs"]
mod postgres;

mod burst;
mod load;
mod pin;
mod raw;
mod statements;
mod stub;
mod tasks;
mod unkeyed;

use idem_server::db::Finish;
use std::{
    net::SocketAddr,
    sync::Arc,
    time::{Duration, Instant},
};

use idem_server::{
    app::ServiceConfig,
    checkout::{self, orders, params::CheckoutRequest, CheckoutConfig},
    db::{Begin, BeginWith, Db, Request},
    ops::OpsConfig,
    request::{BearerTenants, BodyLimits},
    serve::ConnLimits,
};
use idem_store::{ErrorPolicy, RouteConfig, SavedResponse};
use serde_json::json;
use tracing_subscriber::{layer::SubscriberExt, Layer};

/// A lease far longer than the run, so the held key stays in flight (409) throughout.
const LOCK_MS: u64 = 600_000;
const TOKEN: &str = "token-a";
const TENANT: &str = "tenant-a";

fn free_port() -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr")
}

pub fn body(i: usize) -> String {
    format!(
        r#"{{"cart":"cart-{i}","amount":{},"card":"tok_visa"}}"#,
        1000 + i
    )
}

/// Rounds of (the database's limit, keyed first requests).
const ROUNDS: usize = 3;

/// Requests per counted pass (statements are counted with sqlx's log on, apart from the
/// timed phases).
const COUNTED: usize = 100;

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str);
    let number = |i: usize, default: usize| arg(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    let log = statements::Log::default();
    // As the production binary logs (`info`, here into a sink), plus the statement log.
    tracing::subscriber::set_global_default(
        tracing_subscriber::registry()
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::sink)
                    .with_filter(tracing_subscriber::EnvFilter::new("info")),
            )
            .with(log.layer()),
    )
    .expect("the only subscriber");
    match arg(0) {
        // For a profile of the server alone: serve until stdin closes, print the URL.
        Some("serve") => {
            let backend = arg(1).unwrap_or("sqlite").to_owned();
            let stack = Stack::start(&backend).await;
            println!("{}", stack.url);
            let mut line = String::new();
            let _ = tokio::io::AsyncBufReadExt::read_line(
                &mut tokio::io::BufReader::new(tokio::io::stdin()),
                &mut line,
            )
            .await;
            drop(stack);
        }
        // The load of the keyed-first phase against a `serve`d checkout.
        Some("load") => {
            let url = arg(1)
                .expect("load URL [REQUESTS] [CONCURRENCY]")
                .to_owned();
            let (n, c) = (number(2, 2_000), number(3, 16));
            let client = load::client(c);
            load::wait_ready(&client, &url).await;
            // Keys no earlier load used on this server.
            let run = std::process::id();
            let first = load::run(&url, n, c, move |i| (format!("p{run}-{i}"), body(i))).await;
            println!("{first}");
        }
        // Experiments: `rounds N C ROUNDS VARIANTS...` on SQLite: each phase's requests/s and
        // the process's CPU time per request (all threads), phase after phase, round after round.
        Some("rounds") => {
            let (n, c, rounds) = (number(1, 2_000), number(2, 16), number(3, 3));
            let phases: Vec<String> = args.iter().skip(4).cloned().collect();
            pin::sqlite_engine();
            let stack = Stack::start("sqlite").await;
            rounds_of(&stack, &log, n, c, rounds, &phases).await;
            drop(stack);
        }
        backend => {
            let backend = backend.unwrap_or("sqlite").to_owned();
            let (n, c) = (number(1, 2_000), number(2, 16));
            // PostgreSQL's cluster reads the same variable itself (tests/support/postgres.rs).
            let engine_cpus = (backend == "sqlite").then(pin::sqlite_engine).flatten();
            let stack = Stack::start(&backend).await;
            let mut out = measure(&stack, &log, &backend, n, c).await;
            out["engine_cpus"] = json!(engine_cpus);
            println!("{out}");
            drop(stack);
        }
    }
    std::process::exit(0);
}

/// The checkout, PayCo's stub and the database, in this process.
struct Stack {
    url: String,
    /// The same checkout in wait mode, on the same database and stub.
    wait_url: String,
    db: Db,
    payco: String,
    /// The throwaway cluster (stopped when dropped) on PostgreSQL.
    pg: Option<postgres::Postgres>,
    _dir: tempfile::TempDir,
}

impl Stack {
    async fn start(backend: &str) -> Stack {
        let dir = tempfile::tempdir().expect("temporary folder");
        let pg = (backend == "postgres").then(postgres::Postgres::start);
        let database = match &pg {
            Some(pg) => pg.url().to_owned(),
            None => format!("sqlite:{}", dir.path().join("bench.db").display()),
        };
        let payco = stub::serve().await;
        let service = |listen| ServiceConfig {
            listen,
            database: database.clone(),
            lock_ms: LOCK_MS,
            body: BodyLimits {
                max_bytes: idem_store::StoreConfig::DEFAULT_MAX_BODY_BYTES,
                timeout: Duration::from_secs(10),
            },
            conn: ConnLimits::default(),
            cors_origins: vec![],
            ops: OpsConfig::default(),
        };
        let (listen, wait_listen) = (free_port(), free_port());
        // A handle of its own on the same database and options, for the held claim and the
        // loops without HTTP.
        let db = service(listen)
            .open_db(&checkout::SCHEMA)
            .await
            .expect("open");
        let url = spawn_checkout(service(listen), &payco, None).await;
        let wait = Some(Duration::from_secs(5));
        let wait_url = spawn_checkout(service(wait_listen), &payco, wait).await;
        Stack {
            url,
            wait_url,
            db,
            payco,
            pg,
            _dir: dir,
        }
    }
}

/// The example checkout served by `service` against PayCo's stub at `payco`, with `wait` mode;
/// its URL once ready.
async fn spawn_checkout(service: ServiceConfig, payco: &str, wait: Option<Duration>) -> String {
    let listen = service.listen;
    let config = CheckoutConfig {
        service,
        payco_url: payco.to_owned(),
        payco_token: "merchant-token".into(),
        payco_timeout: Duration::from_secs(5),
        tenants: BearerTenants::new().with(TOKEN, TENANT),
        on_error: ErrorPolicy::ReleaseClaim,
        wait,
        failpoints: None,
        completer: None,
        // No consumer here: the outbox fills, the benchmark measures the checkout.
        relay: None,
    };
    tokio::spawn(async move {
        if let Err(e) = checkout::run(config).await {
            eprintln!("checkout: {e}");
            std::process::exit(1);
        }
    });
    let url = format!("http://{listen}");
    load::wait_ready(&load::client(1), &url).await;
    url
}

/// Every phase, in one run; the result as JSON.
async fn measure(
    stack: &Stack,
    log: &statements::Log,
    backend: &str,
    n: usize,
    c: usize,
) -> serde_json::Value {
    let (url, db) = (&stack.url, &stack.db);
    // One keyed first request with the log on: the statements the limit runs.
    let (warm, _, sent) = log
        .counted(load::run(url, 1, 1, |_| ("warm-up".to_owned(), body(0))))
        .await;
    assert_eq!(
        warm["statuses"],
        json!({"201": 1}),
        "the recorded request: {warm}"
    );
    let plan = match raw::Plan::new(backend, &sent) {
        Ok(plan) => plan,
        Err(e) => {
            eprintln!("the raw plan does not fit the server's statements: {e}");
            std::process::exit(1);
        }
    };
    // A key held in flight by a claim that never finishes: every request on it is a 409.
    let route = RouteConfig::required(checkout::params::CHECKOUT_ROUTE, ErrorPolicy::ReleaseClaim);
    let held = body(0);
    let request = Request {
        first_sent: None,
        scope: TENANT,
        key: Some("held"),
        body: held.as_bytes(),
        route: &route,
        target: None,
    };
    let Begin::Execute(claim) = db
        .begin(idem_server::sql::now_ms(), request)
        .await
        .expect("begin")
    else {
        panic!("the held key is new");
    };
    claim.commit().await.expect("hold the claim");
    let payco = checkout::payco_client::PaycoClient::new(
        &stack.payco,
        "merchant-token",
        Duration::from_secs(5),
    )
    .expect("payco client");
    let plain = unkeyed::serve(db.clone(), payco).await;

    // Timed phases, statement log off (as in production). The database's limit and the keyed
    // first requests alternate, ROUNDS times, each limit right before its requests so the
    // two compared see the same machine; the pair with the median ratio is the result (a
    // moment of load from elsewhere on the machine moves one pair, not the figure).
    let mut rounds = Vec::new();
    for round in 0..ROUNDS {
        let tag = format!("r{round}");
        // SQLite: the statements through the driver (`raw`); PostgreSQL: pgbench.
        let limit = match (db.sqlite_pool(), &stack.pg) {
            (Some(pool), _) => raw::sqlite(pool, &plan, n, c, &tag).await,
            (None, Some(pg)) => pgbench(pg, &plan, n, c),
            (None, None) => unreachable!("SQLite, or a PostgreSQL cluster"),
        };
        let limit_rps = limit["rps"]
            .as_f64()
            .or(limit["tps"].as_f64())
            .unwrap_or(0.0);
        let keys = tag.clone();
        let first = load::run(url, n, c, move |i| (format!("k{keys}-{i}"), body(i))).await;
        let ratio = first["rps"].as_f64().unwrap_or(0.0) / limit_rps;
        rounds.push((ratio, first, limit, tag));
    }
    let ratios: Vec<f64> = rounds.iter().map(|r| r.0).collect();
    rounds.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (_, mut first, limit, median_tag) = rounds.swap_remove(ROUNDS / 2);
    first["ratios"] = json!(ratios);
    let (raw, pgbench) = match db.postgres_pool() {
        // Through the driver, once (informational on PostgreSQL).
        Some(pool) => (
            raw::postgres(pool, &plan, n, c, "driver").await,
            Some(limit),
        ),
        None => (limit, None),
    };
    let direct = direct(db, n, c, &route, "").await;
    // Replays of the median round's keys.
    let mut replay = load::run(url, n, c, move |i| (format!("k{median_tag}-{i}"), body(i))).await;
    let mut conflict = load::run(url, n, c, |_| ("held".to_owned(), body(0))).await;
    let mut unkeyed = load::run(&plain, n, c, |i| (String::new(), body(i))).await;

    // Counted passes, log on: statements per request of each kind on the request's path, and
    // apart from them the pool's release probes (PostgreSQL: one per connection going back,
    // after the answer is on its way).
    let per_request = |sent: usize| sent as f64 / COUNTED as f64;
    let probes = |text: &[String]| {
        text.iter()
            .filter(|t| t.trim() == raw::RELEASE_PROBE)
            .count()
    };
    let (_, s, text) = log
        .counted(load::run(url, COUNTED, c, |i| (format!("s-{i}"), body(i))))
        .await;
    first["statements_per_request"] = json!(per_request(s - probes(&text)));
    first["release_probes_per_request"] = json!(per_request(probes(&text)));
    let (_, s, text) = log
        .counted(load::run(url, COUNTED, c, |i| (format!("s-{i}"), body(i))))
        .await;
    replay["statements_per_request"] = json!(per_request(s - probes(&text)));
    replay["release_probes_per_request"] = json!(per_request(probes(&text)));
    let (_, s, text) = log
        .counted(load::run(url, COUNTED, c, |_| ("held".to_owned(), body(0))))
        .await;
    conflict["statements_per_request"] = json!(per_request(s - probes(&text)));
    conflict["release_probes_per_request"] = json!(per_request(probes(&text)));
    let (_, s, text) = log
        .counted(load::run(&plain, COUNTED, c, |i| (String::new(), body(i))))
        .await;
    unkeyed["statements_per_request"] = json!(per_request(s - probes(&text)));
    unkeyed["release_probes_per_request"] = json!(per_request(probes(&text)));
    let wait_burst = burst::run(&stack.wait_url).await;
    json!({
        "backend": backend, "requests": n, "concurrency": c,
        "first": first, "replay": replay, "conflict": conflict,
        "unkeyed": unkeyed, "direct": direct, "raw": raw, "pgbench": pgbench,
        "wait_burst": wait_burst,
        "sent": sent,
    })
}

/// The checkout's storage calls without HTTP, through `idem_server::db`: the claim with the
/// order and its recovery point; the fenced commit with the order's settlement.
async fn direct(db: &Db, n: usize, c: usize, route: &RouteConfig, tag: &str) -> serde_json::Value {
    let shared = Arc::new((db.clone(), route.clone(), tag.to_owned()));
    let started = Instant::now();
    tasks::numbered(n, c, move |i| {
        let shared = shared.clone();
        async move {
            let (db, route, tag) = &*shared;
            let key = format!("d{tag}-{i}");
            let raw = body(i);
            let request = Request {
                first_sent: None,
                scope: TENANT,
                key: Some(&key),
                body: raw.as_bytes(),
                route,
                target: None,
            };
            let now = idem_server::sql::now_ms();
            let order_request = CheckoutRequest {
                cart: format!("cart-{i}"),
                amount: 1000,
                card: "tok_visa".into(),
            };
            let created_at = i64::try_from(now).expect("now");
            let first = orders::insert(TENANT, &key, &order_request, created_at);
            let BeginWith::Created { claim, id } =
                db.begin_with(now, request, &first).await.expect("begin")
            else {
                panic!("new key");
            };
            let order = orders::Order::pending(id, &key, &order_request, created_at);
            let settled = orders::settlement(order.id, "paid", Some("ch_1"));
            db.finish_with(
                now,
                &claim,
                Finish::Commit(SavedResponse::json(201, b"{}".to_vec())),
                &[settled.into()],
            )
            .await
            .expect("commit");
        }
    })
    .await;
    let secs = started.elapsed().as_secs_f64();
    json!({ "rps": n as f64 / secs })
}

/// pgbench with the plan as a custom script: the statements the server sent for one keyed
/// first request, in the same transactions.
fn pgbench(pg: &postgres::Postgres, plan: &raw::Plan, n: usize, c: usize) -> serde_json::Value {
    let script = std::env::temp_dir().join(format!("idem-pgbench-{}.sql", std::process::id()));
    let text = plan.pgbench_script();
    std::fs::write(&script, &text).expect("write script");
    let _ = std::process::Command::new("chmod")
        .arg("644")
        .arg(&script)
        .status();
    let per_client = (n / c).max(1);
    let out = std::process::Command::new(pgbench_binary())
        .args([
            "-n",
            "-M",
            "prepared",
            "-c",
            &c.to_string(),
            "-j",
            "2",
            "-t",
            &per_client.to_string(),
            "-f",
        ])
        .arg(&script)
        .arg(pg.url())
        .output()
        .expect("run pgbench");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    if !out.status.success() {
        eprintln!(
            "pgbench failed: {}{}\nscript:\n{text}",
            stdout,
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let tps = stdout
        .lines()
        .find(|l| l.starts_with("tps = "))
        .and_then(|l| {
            l.trim_start_matches("tps = ")
                .split_whitespace()
                .next()?
                .parse::<f64>()
                .ok()
        });
    let _ = std::fs::remove_file(&script);
    json!({ "tps": tps, "statements_per_request": plan.statements(), "script": text })
}

/// Debian's pgbench, next to the server binaries the tests' cluster uses.
fn pgbench_binary() -> std::path::PathBuf {
    let mut found: Vec<_> = std::fs::read_dir("/usr/lib/postgresql")
        .expect("PostgreSQL installed (scripts/tools.sh test)")
        .filter_map(|e| Some(e.ok()?.path().join("bin/pgbench")))
        .filter(|p| p.exists())
        .collect();
    found.sort();
    found
        .pop()
        .expect("pgbench under /usr/lib/postgresql/*/bin")
}

/// A route that answers `201 {}` at once on a free port (no layers, no database, no PayCo):
/// the cost of one bare HTTP exchange, client and server, for `rounds`' `http` phase.
async fn bare_http() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind bare");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let app = axum::Router::new().route(
        "/api/checkout",
        axum::routing::post(|_: String| async { (axum::http::StatusCode::CREATED, "{}") }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await.expect("bare serves") });
    url
}

/// `n` charges through the checkout's PayCo client against the stub at `payco`, from `c` tasks:
/// the checkout's call to PayCo alone, for `rounds`' `payco` phase.
async fn payco_calls(payco: &str, n: usize, c: usize) {
    let client = Arc::new(
        checkout::payco_client::PaycoClient::new(payco, "merchant-token", Duration::from_secs(5))
            .expect("payco client"),
    );
    tasks::numbered(n, c, move |i| {
        let client = client.clone();
        async move {
            let charge = idem_server::payco::wire::ChargeRequest {
                order: i as i64,
                amount: 1000,
                card: "tok_visa".into(),
            };
            client
                .charge(&format!("charge:{i}"), &charge)
                .await
                .expect("charged");
        }
    })
    .await;
}

/// The process's CPU time so far (user + system, all threads), seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").expect("/proc/self/stat");
    let after = &stat[stat.rfind(')').expect("comm") + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    // Fields 14 and 15 of stat (utime, stime), counted from `state` (field 3).
    let ticks: f64 =
        fields[11].parse::<f64>().expect("utime") + fields[12].parse::<f64>().expect("stime");
    ticks / 100.0
}

async fn rounds_of(
    stack: &Stack,
    log: &statements::Log,
    n: usize,
    c: usize,
    rounds: usize,
    phases: &[String],
) {
    let (url, db) = (&stack.url, &stack.db);
    let (_, _, sent) = log
        .counted(load::run(url, 1, 1, |_| ("warm-up".to_owned(), body(0))))
        .await;
    let plan = raw::Plan::new("sqlite", &sent).expect("plan");
    let route = RouteConfig::required(checkout::params::CHECKOUT_ROUTE, ErrorPolicy::ReleaseClaim);
    let pool = db.sqlite_pool().expect("sqlite").clone();
    let bare = bare_http().await;
    for round in 0..rounds {
        let mut line = Vec::new();
        for phase in phases {
            let tag = format!("x{round}{phase}");
            let (cpu0, t0) = (cpu_seconds(), Instant::now());
            match phase.as_str() {
                "first" => {
                    let k = tag.clone();
                    load::run(url, n, c, move |i| (format!("{k}-{i}"), body(i))).await;
                }
                "direct" => {
                    direct(db, n, c, &route, &tag).await;
                }
                "http" => {
                    load::run(&bare, n, c, |i| (String::new(), body(i))).await;
                }
                "payco" => payco_calls(&stack.payco, n, c).await,
                variant => {
                    raw::sqlite_variant(&pool, &plan, n, c, &tag, variant).await;
                }
            }
            let (cpu, secs) = (cpu_seconds() - cpu0, t0.elapsed().as_secs_f64());
            line.push(format!(
                "{phase} {:.0}/s {:.0}us/req",
                n as f64 / secs,
                cpu / n as f64 * 1e6
            ));
        }
        println!("round {round}: {}", line.join(" | "));
    }
}
