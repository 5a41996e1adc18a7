//! One chaos run, start to verdict: PayCo, the receipts service (the outbox's consumer, on the
//! same backend), the checkout's database (SQLite, or PostgreSQL behind the latency proxy),
//! the `serve` processes (their relays delivering to the receipts service), a fault proxy per
//! checkout, the nemesis and the clients; then a final SIGKILL of every `serve`, a restart on
//! the same database to read from, every unknown outcome reconciled, the outbox drained, and
//! the checker.

use std::{path::PathBuf, time::Duration};

use idem_check::proxy::{FaultMix, FaultProxy};
use idem_client::{CanonicalPayload, KeyState, OutcomeKind};
use serde_json::Value;

use crate::{
    checker::{self, Story, Truth, Violation},
    clients::{self, OpReport, Reconciled, Style},
    log::{Clock, Log},
    nemesis::{Nemesis, Servers},
    pg_sessions,
    plan::{self, Plan, Sizes, HOLD_MS, LOCK_MS, SEED_ENV},
    support::{
        client,
        latency::LatencyProxy,
        postgres::Postgres,
        process::{checkout_args, receipts_args, Service, TENANT_A},
    },
};
use idem_server::{
    checkout::outbox::table,
    db::{Db, DbOptions},
};

/// Where the checkout keeps its claims and orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
    /// Two `serve` processes sharing one PostgreSQL database.
    TwoServersOnPostgres,
}

impl Backend {
    fn servers(self) -> usize {
        match self {
            Backend::TwoServersOnPostgres => 2,
            Backend::Sqlite | Backend::Postgres => 1,
        }
    }
}

/// One run's configuration.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// The test function's name (the rerun command names it).
    pub name: &'static str,
    pub backend: Backend,
    /// `--on-error`: `release-claim` or `save-response`.
    pub on_error: &'static str,
    /// The seeds, one run each, one after the other, unless `IDEM_CHAOS_SEED` names one.
    pub seeds: &'static [u64],
    pub style: Style,
}

/// The longest the clients may take: each checkout ends within its retry window after its
/// start; the rest is slack for a loaded machine. Past it the run fails.
const WORKLOAD_LIMIT: Duration = Duration::from_secs(90);

/// What a run found.
pub struct Verdict {
    pub seed: u64,
    pub violations: Vec<Violation>,
    pub log: PathBuf,
    pub summary: String,
}

impl Verdict {
    /// The failure message: the violations, the seed, the rerun command, the log's path.
    pub fn report(&self, config: &Config) -> String {
        let mut text = format!(
            "chaos run {} broke {} rule(s) (seed {}):\n",
            config.name,
            self.violations.len(),
            self.seed
        );
        for v in self.violations.iter().take(30) {
            text.push_str(&format!("  - [{}] {v}\n", v.kind()));
        }
        text.push_str(&format!(
            "{}\nrerun: {SEED_ENV}={} cargo test -p idem-server --test chaos {} -- --nocapture\n\
             exchange log: {}",
            self.summary,
            self.seed,
            config.name,
            self.log.display()
        ));
        text
    }
}

/// Runs whose clients are careful must break no rule.
pub async fn assert_holds(config: Config) {
    let mut failed = Vec::new();
    for seed in plan::seeds(config.seeds) {
        let verdict = run(config, seed).await;
        eprintln!(
            "{}: {} ({})",
            config.name,
            verdict.summary,
            verdict.log.display()
        );
        if !verdict.violations.is_empty() {
            failed.push(verdict.report(&config));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// The control: the checker must catch the double charges of pages that mint a key per
/// attempt, or it is blind.
pub async fn assert_caught(config: Config) {
    for seed in plan::seeds(config.seeds) {
        let verdict = run(config, seed).await;
        eprintln!(
            "{}: {} ({})",
            config.name,
            verdict.summary,
            verdict.log.display()
        );
        assert!(
            verdict
                .violations
                .iter()
                .any(|v| v.kind() == "double charge"),
            "the checker saw no double charge in the control run, whose pages mint a key per \
             attempt: it is blind.\n{}",
            verdict.report(&config)
        );
    }
}

async fn run(config: Config, seed: u64) -> Verdict {
    let clock = Clock::new();
    let log = Log::new(clock);
    let careful = config.style == Style::Careful;
    let plan = Plan::draw(seed, Sizes::of_run(careful, config.backend.servers()));
    log.line(format!(
        "chaos run {} ({:?}, --on-error {}, {:?} clients), plan:\n{plan}",
        config.name, config.backend, config.on_error, config.style
    ));

    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut payco = Service::payco(dir.path()).await;
    let payco_log = log.clone();
    payco.forward_stderr(move |line| payco_log.line(format!("payco stderr: {line}")));
    // The database `serve` uses, the latency proxy it goes through, and (PostgreSQL) the
    // cluster with the database's own URL, bypassing the proxy; and the receipts service's.
    let (database, _latency, direct, receipts_db) = match config.backend {
        Backend::Sqlite => (
            format!("sqlite:{}", dir.path().join("checkout.db").display()),
            None,
            None,
            format!("sqlite:{}", dir.path().join("receipts.db").display()),
        ),
        Backend::Postgres | Backend::TwoServersOnPostgres => {
            // A cluster of its own, so its log is this run's alone.
            let pg = Postgres::start();
            let url = pg.fresh_database("chaos").await;
            let cluster = url
                .split_once('@')
                .and_then(|(_, rest)| rest.split_once('/'))
                .and_then(|(host, _)| host.parse().ok())
                .expect("postgres://user@127.0.0.1:PORT/db");
            // 2 to 5 ms on every answer, as a database across a network.
            let latency = LatencyProxy::start_drawn(cluster, 2..=5, seed).await;
            let receipts_db = pg.fresh_database("chaos_receipts").await;
            (
                latency.url_through(&url),
                Some(latency),
                Some((pg, url)),
                receipts_db,
            )
        }
    };
    let consumer_args = receipts_args(&receipts_db, &["--failpoints"]);
    let consumer = Service::start(&consumer_args).await;
    let relay_to = consumer.url.clone();
    let lock_ms = LOCK_MS.to_string();
    let wait_ms = plan.wait_ms.unwrap_or(0).to_string();
    let extra = [
        "--lock-ms",
        &lock_ms,
        "--on-error",
        config.on_error,
        "--wait-ms",
        &wait_ms,
        "--failpoints",
        "--relay-to",
        &relay_to,
        "--relay-interval-ms",
        "200",
        "--relay-timeout-ms",
        "1000",
    ];
    let commands = (0..config.backend.servers())
        .map(|_| checkout_args(&database, &payco, &extra))
        .collect();
    let servers = Servers::start(consumer, consumer_args, commands, log.clone()).await;
    let upstreams = servers.addrs().await;
    // The plan's times count from here, once everything is up.
    let t0 = clock.now_ms();
    log.line(format!("setup done; the plan's times count from {t0} ms"));
    let nemesis = Nemesis::start(servers.clone(), plan.nemesis.clone(), clock, t0);
    let mix = if careful {
        FaultMix::CHAOS
    } else {
        FaultMix::LOST_ANSWERS
    };

    let mut pages = Vec::new();
    for checkout in plan.checkouts.clone() {
        let (upstreams, log) = (upstreams.clone(), log.clone());
        pages.push(tokio::spawn(async move {
            clock.sleep_until(t0 + checkout.start_ms).await;
            let hold = Duration::from_millis(HOLD_MS);
            let proxy = FaultProxy::start(
                upstreams,
                mix,
                checkout.seed,
                hold,
                log.sink(),
                checkout.label(),
            )
            .await
            .expect("start the fault proxy");
            clients::checkout(&checkout, config.style, &proxy.url, clock, &log).await
        }));
    }
    let all = async {
        let mut reports = Vec::new();
        for page in pages {
            reports.extend(page.await.expect("a checkout's task"));
        }
        reports
    };
    let Ok(reports) = tokio::time::timeout(WORKLOAD_LIMIT, all).await else {
        let path = log.write(&format!("{}-seed-{seed}", config.name));
        panic!(
            "chaos run {} (seed {seed}): the clients did not finish in {WORKLOAD_LIMIT:?}; \
             rerun: {SEED_ENV}={seed} cargo test -p idem-server --test chaos {} -- --nocapture; \
             exchange log: {}",
            config.name,
            config.name,
            path.display()
        );
    };
    nemesis.stop().await;
    // Nothing runs now: any transaction still open is a connection its pool took back open.
    let idle_in_transaction = match &direct {
        Some((pg, url)) => {
            tokio::time::sleep(Duration::from_millis(1_500)).await;
            let name = url
                .rsplit_once('/')
                .map(|(_, name)| name)
                .unwrap_or_default();
            pg_sessions::idle_in_transaction(pg.url(), name).await
        }
        None => Vec::new(),
    };
    for session in &idle_in_transaction {
        log.line(format!("idle in transaction: {session}"));
    }
    let pool_cleaned = servers.counter("idem_db_connections_cleaned_total").await;

    servers.kill_all().await;
    let server = servers.restart(0).await;
    let stories = settle(reports, &server, clock, &log).await;
    let http = client::http();
    let orders = client::orders(&http, &server, TENANT_A.0).await;
    let ledger = client::ledger(&http, &payco).await;
    log.line(format!(
        "orders after the run: {}",
        Value::Array(orders.clone())
    ));
    log.line(format!(
        "PayCo's ledger after the run: {}",
        Value::Array(ledger.clone())
    ));
    // The relay of the restarted `serve` delivers what is left to a receipts service with no
    // failpoint armed.
    let consumer = servers.consumer(true).await;
    let outbox_db = direct.as_ref().map_or(&database, |(_, url)| url);
    let unsent = outbox_drained(outbox_db, &log).await;
    let receipts = client::get_json(&http, &format!("{consumer}/api/receipts"), TENANT_A.0).await;
    log.line(format!("receipts after the run: {receipts}"));
    servers.kill_all().await;
    servers.kill_consumer().await;
    payco.kill().await;

    let mut truth = Truth::read(&orders, &ledger);
    truth.read_receipts(&receipts, unsent);
    truth.idle_in_transaction = idle_in_transaction;
    truth.pool_cleaned = pool_cleaned;
    if let Some(log) = direct.as_ref().and_then(|(pg, _)| pg.log()) {
        truth.begins_inside_transactions = pg_sessions::begins_inside_transactions(&log);
    }
    let violations = checker::check(&stories, &truth, config.on_error == "release-claim");
    for v in &violations {
        log.line(format!("VIOLATION [{}] {v}", v.kind()));
    }
    let summary = summary(&plan, &stories, ledger.len());
    log.line(&summary);
    let log = log.write(&format!("{}-seed-{seed}", config.name));
    Verdict {
        seed,
        violations,
        log,
        summary,
    }
}

/// How long the relay has to deliver the outbox after the run.
const DRAIN_LIMIT: Duration = Duration::from_secs(20);

/// Wait until the checkout's outbox (on `database`, read directly) has no unsent message, or
/// [`DRAIN_LIMIT`] passed; how many are left.
async fn outbox_drained(database: &str, log: &Log) -> i64 {
    let db = Db::open(database, DbOptions::default())
        .await
        .expect("open the checkout's database");
    let started = std::time::Instant::now();
    loop {
        let unsent = table::count_unsent(&db).await.expect("read the outbox");
        if unsent == 0 || started.elapsed() > DRAIN_LIMIT {
            log.line(format!(
                "outbox: {unsent} unsent after {:?}",
                started.elapsed()
            ));
            db.close().await;
            return unsent;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Each operation's key state after the restart, and its outcome reconciled if unknown.
async fn settle(reports: Vec<OpReport>, server: &str, clock: Clock, log: &Log) -> Vec<Story> {
    let mut stories = Vec::new();
    for report in reports {
        let state_after = match CanonicalPayload::new(&report.payload.json()) {
            Ok(payload) => clients::key_state(server, &report.key, &payload, log).await,
            Err(e) => Err(format!("payload not canonical: {e}")),
        };
        stories.push(Story {
            report,
            state_after,
            reconciled: None,
        });
    }
    for story in &mut stories {
        if matches!(story.report.outcome, OutcomeKind::Unknown { .. }) {
            let reconciled = story.report.reconcile(server, clock, log).await;
            log.line(format!(
                "{}: reconciled: {reconciled:?}",
                story.report.label
            ));
            story.reconciled = Some(reconciled);
        }
    }
    stories
}

/// One line about the run: its operations by outcome, the nemesis's events, PayCo's rows.
fn summary(plan: &Plan, stories: &[Story], ledger_rows: usize) -> String {
    let mut by_outcome = std::collections::BTreeMap::<String, usize>::new();
    for story in stories {
        let name = match &story.report.outcome {
            OutcomeKind::Succeeded { status, .. } => format!("succeeded {status}"),
            OutcomeKind::Replayed { status, .. } => format!("replayed {status}"),
            OutcomeKind::Rejected { status, .. } => format!("rejected {status}"),
            OutcomeKind::Unknown { .. } => match &story.reconciled {
                Some(Reconciled::KeyState(_)) => "unknown, reconciled from the key state".into(),
                Some(Reconciled::Resent { state, .. }) => match state {
                    KeyState::InFlight { .. } => "unknown, in flight, resent".into(),
                    _ => "unknown, not found, resent".into(),
                },
                _ => "unknown, not reconciled".into(),
            },
        };
        *by_outcome.entry(name).or_insert(0) += 1;
    }
    let outcomes: Vec<String> = by_outcome
        .into_iter()
        .map(|(name, n)| format!("{n} {name}"))
        .collect();
    format!(
        "seed {}: {} checkouts, {} operations ({}), {} nemesis events, {ledger_rows} PayCo rows",
        plan.seed,
        plan.checkouts.len(),
        stories.len(),
        outcomes.join(", "),
        plan.nemesis.len()
    )
}
