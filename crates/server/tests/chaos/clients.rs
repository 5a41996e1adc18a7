//! The clients: idem's SDK itself (`idem_client::Operation`, sans-IO) driven over reqwest, as
//! its `fetch` driver drives it in a browser: one key per logical checkout, minted and
//! journaled before the first send, the same bytes on every attempt, waits as the SDK
//! decides them (backoff with jitter, `Retry-After` honoured), retries on timeouts,
//! transport errors, 409 and 5xx, never on 422 or another 4xx; when its retry window closes
//! the outcome is unknown, to be reconciled. Each attempt opens a connection of its own, so
//! the fault proxy's per-connection fault is a per-attempt fault.
//!
//! On top of the SDK, two things pages do: Pay pressed twice (two operations of one journal
//! entry, so one key, sent concurrently) and another payload under the same key (a page that
//! reuses a key). And the control: a page that mints a new key for every attempt.

use std::{
    sync::{Arc, Mutex},
    time::Duration,
};

use idem_check::exchange::error_chain;
use idem_client::{
    Action, CanonicalPayload, KeyMinter, KeyState, MemoryJournal, Operation, OperationSpec,
    OutcomeKind, Reply, RetryPolicy, RngKeys, IDEMPOTENCY_KEY_HEADER,
};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use uuid::Uuid;

use crate::{
    log::{excerpt, Clock, Log},
    plan::{CheckoutPlan, Payload, Shape, ATTEMPT_TIMEOUT_MS, RETRY_WINDOW_MS},
    support::process::TENANT_A,
};

/// How the pages behave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// As idem's SDK: one key per checkout.
    Careful,
    /// The control: a new key for every attempt (the classic bug the store exists for).
    NewKeyPerAttempt,
}

/// The SDK's policy for these runs: its defaults, scaled down so a run stays short.
fn policy() -> RetryPolicy {
    RetryPolicy {
        initial_backoff_ms: 100,
        max_backoff_ms: 1_000,
        jitter: true,
        attempt_timeout_ms: ATTEMPT_TIMEOUT_MS,
        retry_window_ms: RETRY_WINDOW_MS,
        max_attempts: None,
    }
}

/// The policy of a resend that settles an unknown outcome: a patient page that never gives
/// up on an attempt before the server's own waits end (a stale lease; PayCo's 409s, which
/// the checkout waits out for up to 10 s when a cut left PayCo's own claim in flight).
fn patient() -> RetryPolicy {
    RetryPolicy {
        attempt_timeout_ms: 15_000,
        retry_window_ms: 40_000,
        ..policy()
    }
}

/// One operation's story, for the checker.
pub struct OpReport {
    /// `c07.a` (the checkout's operation), `c07.a2` (its double click), `c07.b` (another
    /// payload under its key).
    pub label: String,
    pub payload: Payload,
    /// The key sent (hyphenated, lowercase).
    pub key: String,
    /// Every status any of its attempts was answered.
    pub statuses: Vec<u16>,
    /// What the SDK concluded; an unknown outcome is reconciled after the run.
    pub outcome: OutcomeKind,
}

/// How an unknown outcome was settled after the run, against a server without faults.
#[derive(Debug)]
pub enum Reconciled {
    /// `GET /api/keys/{key}` said done: the SDK settled the operation with the saved answer
    /// (`Operation::handle_key_state`).
    KeyState(OutcomeKind),
    /// It said in flight or not found, which leaves the SDK's outcome unknown: the same
    /// request sent again under its key (as a retry of the page would) gives the truth.
    Resent {
        state: KeyState,
        statuses: Vec<u16>,
        outcome: OutcomeKind,
    },
    /// The key's state could not be read.
    Failed(String),
}

impl OpReport {
    /// Reconcile this operation's unknown outcome with `server`.
    pub async fn reconcile(&self, server: &str, clock: Clock, log: &Log) -> Reconciled {
        let Ok(key) = Uuid::parse_str(&self.key) else {
            return Reconciled::Failed(format!("{} is not a UUID", self.key));
        };
        let mut rng = ChaCha8Rng::seed_from_u64(key.as_u64_pair().0);
        let page = Page::start(
            format!("{} (reconciling)", self.label),
            format!("checkout:{}", self.payload.cart),
            &self.payload,
            patient(),
            &Arc::new(Mutex::new(MemoryJournal::new())),
            clock,
            &mut || key,
            &mut rng,
        );
        let state = match key_state(server, &self.key, page.op.payload(), log).await {
            Ok(state) => state,
            Err(why) => return Reconciled::Failed(why),
        };
        let mut op = page.op.clone();
        if op.handle_key_state(clock.now_ms(), &state) {
            if let Some(outcome) = op.outcome() {
                return Reconciled::KeyState(outcome.kind.clone());
            }
        }
        let resent = page
            .run(http(), server.to_owned(), clock, log.clone())
            .await;
        Reconciled::Resent {
            state,
            statuses: resent.statuses,
            outcome: resent.outcome,
        }
    }
}

/// An operation with its journal, driven over HTTP.
struct Page {
    label: String,
    payload: Payload,
    op: Operation,
    journal: Arc<Mutex<MemoryJournal>>,
    rng: ChaCha8Rng,
}

/// Run one checkout's pages against `url` (its fault proxy); their reports.
pub async fn checkout(
    plan: &CheckoutPlan,
    style: Style,
    url: &str,
    clock: Clock,
    log: &Log,
) -> Vec<OpReport> {
    let http = http();
    let label = plan.label();
    let mut rng = ChaCha8Rng::seed_from_u64(plan.seed ^ 0x5eed_c11e_0000_0000);
    if style == Style::NewKeyPerAttempt {
        return vec![new_key_per_attempt(plan, &http, url, clock, log, &mut rng).await];
    }
    let journal = Arc::new(Mutex::new(MemoryJournal::new()));
    let name = format!("checkout:{}", plan.payload.cart);
    let mut keys = ChaCha8Rng::seed_from_u64(rng.next_u64());
    let first = Page::start(
        format!("{label}.a"),
        name.clone(),
        &plan.payload,
        policy(),
        &journal,
        clock,
        &mut RngKeys(&mut keys),
        &mut rng,
    );
    let key = first.op.key().expect("a POST is keyed");
    let mut pages = vec![tokio::spawn(first.run(
        http.clone(),
        url.to_owned(),
        clock,
        log.clone(),
    ))];
    match &plan.shape {
        Shape::Single => {}
        Shape::DoubleClick => {
            // The journal holds the open record: the second operation resumes its key.
            let second = Page::start(
                format!("{label}.a2"),
                name,
                &plan.payload,
                policy(),
                &journal,
                clock,
                &mut || Uuid::nil(),
                &mut rng,
            );
            assert_eq!(second.op.key(), Some(key), "a double click reuses the key");
            pages.push(tokio::spawn(second.run(
                http.clone(),
                url.to_owned(),
                clock,
                log.clone(),
            )));
        }
        Shape::OtherPayload { after_ms, other } => {
            tokio::time::sleep(Duration::from_millis(*after_ms)).await;
            // Another journal (another device, or a page that reuses keys): the SDK itself
            // would refuse another payload under a name it journaled.
            let reused = Page::start(
                format!("{label}.b"),
                format!("checkout:{}", other.cart),
                other,
                policy(),
                &Arc::new(Mutex::new(MemoryJournal::new())),
                clock,
                &mut || key,
                &mut rng,
            );
            pages.push(tokio::spawn(reused.run(
                http.clone(),
                url.to_owned(),
                clock,
                log.clone(),
            )));
        }
    }
    let mut reports = Vec::new();
    for page in pages {
        reports.push(page.await.expect("a page's task"));
    }
    reports
}

/// The control page: every attempt is an operation of its own with a fresh key, retried
/// by hand until an answer is final or the window closes. Its report is its last operation's.
async fn new_key_per_attempt(
    plan: &CheckoutPlan,
    http: &reqwest::Client,
    url: &str,
    clock: Clock,
    log: &Log,
    rng: &mut ChaCha8Rng,
) -> OpReport {
    let journal = Arc::new(Mutex::new(MemoryJournal::new()));
    let mut keys = ChaCha8Rng::seed_from_u64(rng.next_u64());
    let started = clock.now_ms();
    let mut statuses = Vec::new();
    for attempt in 1.. {
        let page = Page::start(
            format!("{}.attempt{attempt}", plan.label()),
            format!("checkout:{}#{attempt}", plan.payload.cart),
            &plan.payload,
            RetryPolicy {
                max_attempts: Some(1),
                ..policy()
            },
            &journal,
            clock,
            &mut RngKeys(&mut keys),
            rng,
        );
        let mut report = page
            .run(http.clone(), url.to_owned(), clock, log.clone())
            .await;
        statuses.append(&mut report.statuses);
        let unknown = matches!(report.outcome, OutcomeKind::Unknown { .. });
        if !unknown || clock.now_ms() >= started + RETRY_WINDOW_MS {
            report.statuses = statuses;
            return report;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    unreachable!("the loop returns once the window closes")
}

impl Page {
    /// Start the operation `name` of `payload` in `journal` (as `Pay` does: a new key from
    /// `keys`, or the key of the open record already journaled under `name`).
    #[allow(
        clippy::too_many_arguments,
        reason = "Operation::start's five inputs, and the page's label, name and generator"
    )]
    fn start(
        label: String,
        name: String,
        payload: &Payload,
        policy: RetryPolicy,
        journal: &Arc<Mutex<MemoryJournal>>,
        clock: Clock,
        keys: &mut dyn KeyMinter,
        rng: &mut ChaCha8Rng,
    ) -> Page {
        let spec = OperationSpec::post(name.clone(), payload.json());
        let op = Operation::start(spec, policy, clock.now_ms(), &mut *lock(journal), keys)
            .expect("start an operation");
        Page {
            label,
            payload: payload.clone(),
            op,
            journal: journal.clone(),
            rng: ChaCha8Rng::seed_from_u64(rng.next_u64()),
        }
    }

    /// Drive the operation to its outcome, as the SDK's `fetch` driver does.
    async fn run(mut self, http: reqwest::Client, url: String, clock: Clock, log: Log) -> OpReport {
        let key = self
            .op
            .key()
            .expect("a POST is keyed")
            .hyphenated()
            .to_string();
        let mut statuses = Vec::new();
        let url = format!("{url}/api/checkout");
        loop {
            let now = clock.now_ms();
            let action = self.op.poll(now, &mut *lock(&self.journal), &mut self.rng);
            match action {
                Action::Finished(outcome) => {
                    log.line(format!(
                        "{}: finished {}",
                        self.label,
                        describe(&outcome.kind)
                    ));
                    return OpReport {
                        label: self.label,
                        payload: self.payload,
                        key,
                        statuses,
                        outcome: outcome.kind,
                    };
                }
                Action::WaitUntil(at) => clock.sleep_until(at).await,
                Action::Send(attempt) => {
                    log.line(format!(
                        "{}: attempt {} key {key} {}",
                        self.label,
                        attempt.number,
                        excerpt(&attempt.body, 120)
                    ));
                    let wait = Duration::from_millis(attempt.deadline.saturating_sub(now));
                    let sent = tokio::time::timeout(wait, send(&http, &url, &key, attempt.body));
                    let result = sent.await;
                    let at = clock.now_ms();
                    match result {
                        Ok(Ok(reply)) => {
                            log.line(format!(
                                "{}: attempt {} answered {}{} {}",
                                self.label,
                                attempt.number,
                                reply.status,
                                if reply.replayed { " (replayed)" } else { "" },
                                excerpt(&reply.body, 160)
                            ));
                            statuses.push(reply.status);
                            self.op.handle_reply(at, reply);
                        }
                        Ok(Err(e)) => {
                            log.line(format!(
                                "{}: attempt {} failed: {e}",
                                self.label, attempt.number
                            ));
                            self.op.handle_network_error(at, e);
                        }
                        Err(_) => {
                            log.line(format!(
                                "{}: attempt {} timed out",
                                self.label, attempt.number
                            ));
                            self.op.handle_timeout(at);
                        }
                    }
                }
            }
        }
    }
}

/// `GET /api/keys/{key}` on `server`, read by the SDK's reader as `payload`'s page reads it.
pub async fn key_state(
    server: &str,
    key: &str,
    payload: &CanonicalPayload,
    log: &Log,
) -> Result<KeyState, String> {
    let asked = http()
        .get(format!("{server}/api/keys/{key}"))
        .bearer_auth(TENANT_A.0)
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .map_err(|e| error_chain(&e))?;
    let status = asked.status().as_u16();
    let body = asked.bytes().await.map_err(|e| error_chain(&e))?;
    log.line(format!("key {key}: state {status} {}", excerpt(&body, 200)));
    KeyState::from_reply(status, &body, payload)
        .ok_or_else(|| format!("key state answered {status}"))
}

/// One attempt: `POST url` with the key and the bytes; the reply as the SDK reads it.
async fn send(
    http: &reqwest::Client,
    url: &str,
    key: &str,
    body: Vec<u8>,
) -> Result<Reply, String> {
    let response = http
        .post(url)
        .bearer_auth(TENANT_A.0)
        .header(IDEMPOTENCY_KEY_HEADER, key)
        .header("Content-Type", "application/json")
        .body(body)
        .send()
        .await
        .map_err(|e| error_chain(&e))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.bytes().await.map_err(|e| error_chain(&e))?;
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    Ok(Reply::from_http(
        status,
        header,
        body.to_vec(),
        Clock::wall_ms(),
    ))
}

/// A client that opens a connection per request (none is kept idle).
pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .build()
        .expect("reqwest client")
}

/// `succeeded 201 {...}`, for the log.
fn describe(kind: &OutcomeKind) -> String {
    match kind {
        OutcomeKind::Succeeded { status, body } | OutcomeKind::Replayed { status, body } => {
            format!("{} {status} {}", kind.name(), excerpt(body, 120))
        }
        OutcomeKind::Rejected { status, body, .. } => {
            format!("rejected {status} {}", excerpt(body, 120))
        }
        OutcomeKind::Unknown { last_error } => format!("unknown (last: {last_error:?})"),
    }
}

fn lock(journal: &Mutex<MemoryJournal>) -> std::sync::MutexGuard<'_, MemoryJournal> {
    journal
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
