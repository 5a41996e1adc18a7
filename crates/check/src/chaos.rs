//! The chaos phase: logical operations driven by idem's SDK itself (`idem_client::Operation`,
//! sans-IO, over reqwest, as its `fetch` driver drives it in a browser: one key per
//! operation, the same bytes on every attempt, backoff with jitter, `Retry-After` honoured,
//! timeouts and 5xx retried, 422 never), through the fault proxy, several at once; then the
//! effects are counted: at most one per operation, exactly one for every operation the
//! client saw succeed, and every 5xx on the way retryable (502, 503, 504 with `Retry-After`).

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc, Mutex,
    },
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use idem_client::{
    Action, MemoryJournal, Method, Operation, OperationSpec, OutcomeKind, Reply, RetryPolicy,
    RngKeys,
};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::sync::Semaphore;

use crate::{
    config::Chaos,
    effects::{Counts, Observer},
    exchange::{join, send_with, Fresh, Sent, Target},
    proxy::{FaultProxy, LogSink},
    report::{Basis, Case, CaseResult, Verdict},
};

/// The chaos operations' indices start here, past the conformance phase's.
const FIRST_INDEX: u64 = 100;
/// The most attempts one operation sends.
const MAX_ATTEMPTS: u32 = 30;

/// One operation's story.
#[derive(Debug, Clone)]
struct OpReport {
    fresh: Fresh,
    key: String,
    /// Every status its attempts were answered, with whether `Retry-After` came along.
    statuses: Vec<(u16, bool)>,
    outcome: Option<OutcomeKind>,
}

impl OpReport {
    fn succeeded(&self) -> bool {
        matches!(
            self.outcome,
            Some(OutcomeKind::Succeeded { .. } | OutcomeKind::Replayed { .. })
        )
    }

    fn describe(&self) -> String {
        let statuses: Vec<String> = self
            .statuses
            .iter()
            .map(|(s, r)| {
                if *r {
                    format!("{s}+Retry-After")
                } else {
                    s.to_string()
                }
            })
            .collect();
        let outcome = match &self.outcome {
            Some(kind) => kind.name().to_owned(),
            None => "still running at the bound".to_owned(),
        };
        format!(
            "operation {} (key {}): answers [{}], outcome {outcome}",
            self.fresh.text,
            self.key,
            statuses.join(", ")
        )
    }
}

/// Run the phase against `target` and judge it; `progress(settled, total)` is called as
/// operations settle, `log` gets the proxy's and the clients' lines.
pub async fn run(
    target: &Target,
    observer: Option<&Observer>,
    seed: u64,
    log: LogSink,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<CaseResult> {
    let settings = target.config().chaos.clone();
    if !settings.enabled {
        return all_not_checked("the chaos phase is disabled (chaos.enabled: false)");
    }
    let body = target.config().request.body.clone().unwrap_or_default();
    let template_json = Fresh::new(seed, FIRST_INDEX).fill(&body);
    if serde_json::from_str::<serde_json::Value>(&template_json).is_err() {
        return all_not_checked("the SDK sends JSON bodies; the request body is not JSON");
    }
    let Some(method) = Method::from_name(&target.config().request.method) else {
        return all_not_checked("the SDK does not send this method");
    };
    let Ok(upstream) = host_port(&target.config().target) else {
        return all_not_checked("the target has no host and port");
    };
    let hold = Duration::from_millis(settings.attempt_timeout_ms + 700);
    let proxy = match FaultProxy::start(
        vec![upstream],
        settings.mix,
        seed,
        hold,
        log.clone(),
        "chaos".to_owned(),
    )
    .await
    {
        Ok(proxy) => proxy,
        Err(e) => return all_not_checked(&format!("the fault proxy did not start: {e}")),
    };
    let ops: Vec<Fresh> = (0..settings.operations as u64)
        .map(|i| Fresh::new(seed, FIRST_INDEX + i))
        .collect();
    let before = match observer {
        Some(observer) => Some(observer.count(&ops.iter().collect::<Vec<_>>()).await),
        None => None,
    };

    let reports = drive(
        target, &proxy.url, &settings, method, &ops, seed, &log, progress,
    )
    .await;
    drop(proxy);
    // Held answers and cut requests may still be running on the server.
    tokio::time::sleep(hold + Duration::from_secs(1)).await;
    let after = match observer {
        Some(observer) => {
            observer.settle().await;
            Some(observer.count(&ops.iter().collect::<Vec<_>>()).await)
        }
        None => None,
    };
    judge(&reports, before, after)
}

/// The phase's cases.
const AT_MOST_ONCE: Case = Case {
    id: "chaos-at-most-once",
    basis: Basis::Required,
    title: "under faults and retries, no operation takes effect twice",
};
const SUCCESS_TOOK_EFFECT: Case = Case {
    id: "chaos-success-took-effect",
    basis: Basis::NeededBySdk,
    title: "every operation the client saw succeed took effect exactly once",
};
const RETRYABLE_5XX: Case = Case {
    id: "chaos-5xx-retryable",
    basis: Basis::NeededBySdk,
    title: "every 5xx is 502, 503 or 504 with Retry-After",
};

/// Every case of the phase, not checked for `why`.
fn all_not_checked(why: &str) -> Vec<CaseResult> {
    [AT_MOST_ONCE, SUCCESS_TOOK_EFFECT, RETRYABLE_5XX]
        .iter()
        .map(|case| {
            case.result(
                Verdict::NotChecked {
                    why: why.to_owned(),
                },
                Vec::new(),
            )
        })
        .collect()
}

/// Drive every operation to its outcome, `concurrency` at a time, within the bound.
#[allow(
    clippy::too_many_arguments,
    reason = "the phase's inputs, each used by every operation"
)]
async fn drive(
    target: &Target,
    proxy: &str,
    settings: &Chaos,
    method: Method,
    ops: &[Fresh],
    seed: u64,
    log: &LogSink,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Vec<OpReport> {
    let permits = Arc::new(Semaphore::new(settings.concurrency));
    let settled = Arc::new(AtomicUsize::new(0));
    let reports: Arc<Mutex<Vec<OpReport>>> = Arc::default();
    let http = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap_or_default();
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xc4a0_5000);
    let mut tasks = Vec::new();
    for fresh in ops {
        let client = Client {
            target: target.clone(),
            url: through(
                &join(
                    &target.config().target,
                    &fresh.fill(&target.config().request.path),
                ),
                proxy,
            ),
            http: http.clone(),
            log: log.clone(),
            policy: RetryPolicy {
                initial_backoff_ms: 100,
                max_backoff_ms: 1_000,
                jitter: true,
                attempt_timeout_ms: settings.attempt_timeout_ms,
                retry_window_ms: settings.retry_window_ms,
                // Bounded in requests as well as in time.
                max_attempts: Some(MAX_ATTEMPTS),
            },
            method,
        };
        let (fresh, permits, settled, reports) = (
            fresh.clone(),
            permits.clone(),
            settled.clone(),
            reports.clone(),
        );
        let op_seed = rng.next_u64();
        tasks.push(tokio::spawn(async move {
            let Ok(_permit) = permits.acquire_owned().await else {
                return;
            };
            let report = client.run(fresh, op_seed).await;
            settled.fetch_add(1, Ordering::SeqCst);
            lock(&reports).push(report);
        }));
    }
    let total = ops.len();
    let all = async {
        for task in &mut tasks {
            let _ = task.await;
        }
    };
    let bound = tokio::time::sleep(Duration::from_millis(settings.max_ms));
    tokio::pin!(all, bound);
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tokio::select! {
            () = &mut all => break,
            () = &mut bound => break,
            _ = tick.tick() => progress(settled.load(Ordering::SeqCst), total),
        }
    }
    progress(settled.load(Ordering::SeqCst), total);
    for task in &tasks {
        task.abort();
    }
    let finished = lock(&reports).clone();
    // In the operations' order (the effects are counted in it); an operation cut off by the
    // bound is reported as still running.
    ops.iter()
        .map(|fresh| {
            finished
                .iter()
                .find(|r| r.fresh == *fresh)
                .cloned()
                .unwrap_or_else(|| OpReport {
                    fresh: fresh.clone(),
                    key: String::new(),
                    statuses: Vec::new(),
                    outcome: None,
                })
        })
        .collect()
}

/// One page's client.
struct Client {
    target: Target,
    url: String,
    http: reqwest::Client,
    log: LogSink,
    policy: RetryPolicy,
    method: Method,
}

impl Client {
    /// Drive `fresh`'s operation to its outcome, as the SDK's fetch driver does.
    async fn run(self, fresh: Fresh, seed: u64) -> OpReport {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut journal = MemoryJournal::new();
        let start = Instant::now();
        let now = || u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
        let body = fresh.fill(self.target.config().request.body.as_deref().unwrap_or("{}"));
        let payload: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        let spec =
            OperationSpec::post(format!("check:{}", fresh.text), payload).with_method(self.method);
        let mut report = OpReport {
            fresh: fresh.clone(),
            key: String::new(),
            statuses: Vec::new(),
            outcome: None,
        };
        let mut op = match Operation::start(
            spec,
            self.policy.clone(),
            now(),
            &mut journal,
            &mut RngKeys(&mut rng),
        ) {
            Ok(op) => op,
            Err(e) => {
                (self.log)(format!("{}: the SDK refused to start: {e}", fresh.text));
                return report;
            }
        };
        report.key = op
            .key()
            .map(|k| k.hyphenated().to_string())
            .unwrap_or_default();
        loop {
            match op.poll(now(), &mut journal, &mut rng) {
                Action::Finished(outcome) => {
                    report.outcome = Some(outcome.kind);
                    return report;
                }
                Action::WaitUntil(at) => {
                    let wait = at.saturating_sub(now());
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                }
                Action::Send(attempt) => {
                    let mut sent: Sent = self.target.keyed(&fresh, None);
                    sent.url = self.url.clone();
                    sent.method = attempt.method.as_str().to_owned();
                    sent.body = attempt.body.clone();
                    if let Some(key) = attempt.key {
                        let name = self.target.config().key.name.clone();
                        let value = self.target.key_header(&key.hyphenated().to_string());
                        sent.headers.push((name, value));
                    }
                    // What the SDK's fetch driver sends with the key.
                    if let Some(first_sent) = attempt.first_sent_header() {
                        sent.set_header(idem_client::FIRST_SENT_HEADER, first_sent);
                    }
                    let timeout = Duration::from_millis(attempt.deadline.saturating_sub(now()));
                    let answer =
                        send_with(&self.http, &sent, timeout.max(Duration::from_millis(1))).await;
                    let at = now();
                    match answer {
                        Ok(answer) => {
                            let retry_after = answer.header("retry-after").is_some();
                            report.statuses.push((answer.status, retry_after));
                            (self.log)(format!(
                                "{} attempt {}: {}",
                                fresh.text, attempt.number, answer.status
                            ));
                            let header = |name: &str| answer.header(&name.to_ascii_lowercase());
                            let reply = Reply::from_http(
                                answer.status,
                                header,
                                answer.body.clone(),
                                wall_ms(),
                            );
                            op.handle_reply(at, reply);
                        }
                        Err(_) if at >= attempt.deadline => {
                            (self.log)(format!(
                                "{} attempt {}: timed out",
                                fresh.text, attempt.number
                            ));
                            op.handle_timeout(at);
                        }
                        Err(e) => {
                            (self.log)(format!("{} attempt {}: {e}", fresh.text, attempt.number));
                            op.handle_network_error(at, e);
                        }
                    }
                }
            }
        }
    }
}

/// The phase's three verdicts from the operations' reports and the effects before and after.
fn judge(
    reports: &[OpReport],
    before: Option<Result<Counts, String>>,
    after: Option<Result<Counts, String>>,
) -> Vec<CaseResult> {
    let described =
        |ops: &[&OpReport]| -> Vec<String> { ops.iter().map(|r| r.describe()).collect() };
    let (once, took) = match (before, after) {
        (None, _) | (_, None) => {
            let why = "no effects observer configured".to_owned();
            (
                AT_MOST_ONCE.result(Verdict::NotChecked { why: why.clone() }, Vec::new()),
                SUCCESS_TOOK_EFFECT.result(Verdict::NotChecked { why }, Vec::new()),
            )
        }
        (Some(Err(e)), _) | (_, Some(Err(e))) => (
            AT_MOST_ONCE.result(Verdict::Fail { why: e.clone() }, Vec::new()),
            SUCCESS_TOOK_EFFECT.result(Verdict::Fail { why: e }, Vec::new()),
        ),
        (Some(Ok((total_before, per_before))), Some(Ok((total_after, per_after)))) => {
            judge_effects(
                reports,
                total_before,
                &per_before,
                total_after,
                &per_after,
                &described,
            )
        }
    };
    let bad_5xx: Vec<&OpReport> = reports
        .iter()
        .filter(|r| {
            r.statuses
                .iter()
                .any(|(s, retry_after)| *s >= 500 && !(matches!(s, 502..=504) && *retry_after))
        })
        .collect();
    let retryable = if bad_5xx.is_empty() {
        RETRYABLE_5XX.result(Verdict::Pass, Vec::new())
    } else {
        let why = format!(
            "{} operations met a 5xx a client cannot retry safely",
            bad_5xx.len()
        );
        RETRYABLE_5XX.result(Verdict::Fail { why }, described(&bad_5xx))
    };
    vec![once, took, retryable]
}

fn judge_effects(
    reports: &[OpReport],
    total_before: u64,
    per_before: &[Option<u64>],
    total_after: u64,
    per_after: &[Option<u64>],
    described: &dyn Fn(&[&OpReport]) -> Vec<String>,
) -> (CaseResult, CaseResult) {
    let ops = per_after.len();
    let attributed = per_after.iter().all(Option::is_some) && ops > 0;
    if !attributed {
        let added = total_after.saturating_sub(total_before);
        let once = if added <= ops as u64 {
            AT_MOST_ONCE.result(Verdict::Pass, Vec::new())
        } else {
            let why = format!("{added} effects for {ops} operations");
            AT_MOST_ONCE.result(Verdict::Fail { why }, Vec::new())
        };
        let why = "effects are not attributed to operations (effects.list and effects.field)";
        let took = SUCCESS_TOOK_EFFECT.result(
            Verdict::NotChecked {
                why: why.to_owned(),
            },
            Vec::new(),
        );
        return (once, took);
    }
    let mut twice = Vec::new();
    let mut missing = Vec::new();
    for (i, report) in reports.iter().enumerate() {
        let after = per_after.get(i).copied().flatten().unwrap_or(0);
        let before = per_before.get(i).copied().flatten().unwrap_or(0);
        let n = after.saturating_sub(before);
        if n > 1 {
            twice.push((report, n));
        }
        if report.succeeded() && n != 1 {
            missing.push((report, n));
        }
    }
    let once = if twice.is_empty() {
        AT_MOST_ONCE.result(Verdict::Pass, Vec::new())
    } else {
        let why = format!("{} operations took effect more than once", twice.len());
        let shown: Vec<&OpReport> = twice.iter().map(|(r, _)| *r).collect();
        let mut lines = described(&shown);
        for (line, (_, n)) in lines.iter_mut().zip(&twice) {
            line.push_str(&format!(": {n} effects"));
        }
        AT_MOST_ONCE.result(Verdict::Fail { why }, lines)
    };
    let took = if missing.is_empty() {
        SUCCESS_TOOK_EFFECT.result(Verdict::Pass, Vec::new())
    } else {
        let why = format!(
            "{} operations succeeded without exactly one effect",
            missing.len()
        );
        let shown: Vec<&OpReport> = missing.iter().map(|(r, _)| *r).collect();
        SUCCESS_TOOK_EFFECT.result(Verdict::Fail { why }, described(&shown))
    };
    (once, took)
}

/// `url` with its scheme, host and port replaced by `proxy`'s (its path prefix and query
/// kept).
fn through(url: &str, proxy: &str) -> String {
    match (reqwest::Url::parse(url), reqwest::Url::parse(proxy)) {
        (Ok(url), Ok(proxy)) => {
            let query = url.query().map(|q| format!("?{q}")).unwrap_or_default();
            let base = proxy.as_str().trim_end_matches('/');
            format!("{base}{}{query}", url.path())
        }
        _ => url.to_owned(),
    }
}

/// `host:port` of a base URL.
fn host_port(url: &str) -> Result<String, ()> {
    let url = reqwest::Url::parse(url).map_err(|_| ())?;
    let host = url.host_str().ok_or(())?;
    let port = url.port_or_known_default().ok_or(())?;
    Ok(format!("{host}:{port}"))
}

fn wall_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_goes_through_the_proxy_with_its_path_prefix_and_query() {
        assert_eq!(
            through("http://shop:8000/api/pay?x=1", "http://127.0.0.1:5000"),
            "http://127.0.0.1:5000/api/pay?x=1"
        );
        assert_eq!(
            host_port("http://shop:8000/api"),
            Ok("shop:8000".to_owned())
        );
        assert_eq!(host_port("http://shop/api"), Ok("shop:80".to_owned()));
    }
}
