//! One serde struct describes a world: seed, workload, faults, server and client knobs, and which
//! classic bugs are switched on. Named presets are values of it (see [`crate::presets`]).

use serde::{Deserialize, Serialize};

use crate::bug::Bug;

pub use idem_store::ErrorPolicy;

/// How a checkout page uses idempotency keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Strategy {
    /// No key at all: every retry is a brand-new request to the server.
    NoKey,
    /// A fresh key on every attempt: looks careful, dedupes nothing.
    #[serde(alias = "key-per-try")]
    KeyPerAttempt,
    /// One key per checkout, persisted before the first send and kept across retries and tab
    /// reloads: idem-client's `Operation` drives it.
    SameKey,
}

impl Strategy {
    /// All strategies, in the lab table's order.
    pub const ALL: [Strategy; 3] = [Strategy::NoKey, Strategy::KeyPerAttempt, Strategy::SameKey];

    /// The lab table's column name.
    pub fn name(self) -> &'static str {
        match self {
            Strategy::NoKey => "no-key",
            Strategy::KeyPerAttempt => "key-per-try",
            Strategy::SameKey => "same-key",
        }
    }
}

/// How much of the history a world records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HistoryDetail {
    /// Every attempt and every checkout outcome (the demo, replays, determinism tests).
    Full,
    /// Checkout outcomes only; attempts are counted, not stored (sweeps and benchmarks).
    Outcomes,
}

/// Network and worker faults. Probabilities are per message (network), per job (worker) or per
/// checkout (tab reload, key reuse).
///
/// ## Default values
/// - `drop_request`: 0.0, `drop_response`: 0.0, `duplicate`: 0.0
/// - `latency_ms`: 20, `jitter_ms`: 10 (each message: latency + uniform 0..=jitter; reorders)
/// - `crash_after_charge`: 0.0, `slow_worker`: 0.0
/// - `tab_reload`: 0.0, `reuse_key_other_cart`: 0.0
/// - `decline`: 0.0, `payco_timeout`: 0.0
/// - `relay_crash_after_send`: 0.0, `consumer_crash_after_effect`: 0.0,
///   `duplicate_delivery`: 0.0, `reorder_delivery`: 0.0 (the outbox's relay and consumer)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Faults {
    /// Probability a client → server request is lost.
    pub drop_request: f64,
    /// Probability a server → client response is lost.
    pub drop_response: f64,
    /// Probability a request is delivered twice (each copy with its own delay).
    pub duplicate: f64,
    /// One-way base latency in milliseconds.
    pub latency_ms: u64,
    /// Extra one-way delay, uniform in `0..=jitter_ms`; enough of it reorders messages.
    pub jitter_ms: u64,
    /// Probability a worker dies after PayCo charged and before the response is saved.
    pub crash_after_charge: f64,
    /// Probability a worker is slow: its work outlives the store's `lock_ms`.
    pub slow_worker: f64,
    /// Probability a checkout's tab is reloaded once while it waits (memory lost, journal kept).
    pub tab_reload: f64,
    /// Probability a (buggy) page also submits a different cart under the checkout's key: half
    /// of those pages within 300 ms of Pay, half as soon as one of their attempts fails (402
    /// or 5xx), when a release may have left the key to be claimed again.
    pub reuse_key_other_cart: f64,
    /// Probability PayCo declines a card it has not seen under the call's key (PayCo decides
    /// after its key lookup and saves the decline under the key): the work fails and the
    /// server's [`ServerConfig::on_error`] policy decides what happens to the claim.
    pub decline: f64,
    /// Probability a worker's PayCo call times out: the worker cannot tell whether PayCo
    /// charged (half of these calls reached PayCo, which decided and saved its answer; half
    /// were lost on the way). The work fails with a 504 and `on_error` decides the claim.
    pub payco_timeout: f64,
    /// Probability the outbox's relay dies after the consumer acknowledged a message and
    /// before it marked it sent: its next pass sends the message again.
    pub relay_crash_after_send: f64,
    /// Probability the receipts consumer dies after its effect (the receipt, and with the
    /// dedupe the message id), before its acknowledgement: the relay sends the message again.
    pub consumer_crash_after_effect: f64,
    /// Probability a relay delivery reaches the consumer twice.
    pub duplicate_delivery: f64,
    /// Probability a relay delivery is held back for up to two relay passes, so later
    /// messages (and the same message's resend) overtake it.
    pub reorder_delivery: f64,
}

impl Default for Faults {
    fn default() -> Self {
        Self {
            drop_request: 0.0,
            drop_response: 0.0,
            duplicate: 0.0,
            latency_ms: 20,
            jitter_ms: 10,
            crash_after_charge: 0.0,
            slow_worker: 0.0,
            tab_reload: 0.0,
            reuse_key_other_cart: 0.0,
            decline: 0.0,
            payco_timeout: 0.0,
            relay_crash_after_send: 0.0,
            consumer_crash_after_effect: 0.0,
            duplicate_delivery: 0.0,
            reorder_delivery: 0.0,
        }
    }
}

impl Faults {
    /// Refuse a probability outside `0.0..=1.0` (or NaN) and a latency or jitter longer than
    /// [`MAX_DURATION_MS`]. The destructuring lists every field, so a new one must be checked.
    pub fn validate(&self) -> Result<(), crate::SimError> {
        let &Faults {
            drop_request,
            drop_response,
            duplicate,
            latency_ms,
            jitter_ms,
            crash_after_charge,
            slow_worker,
            tab_reload,
            reuse_key_other_cart,
            decline,
            payco_timeout,
            relay_crash_after_send,
            consumer_crash_after_effect,
            duplicate_delivery,
            reorder_delivery,
        } = self;
        probabilities(&[
            ("faults.drop_request", drop_request),
            ("faults.drop_response", drop_response),
            ("faults.duplicate", duplicate),
            ("faults.crash_after_charge", crash_after_charge),
            ("faults.slow_worker", slow_worker),
            ("faults.tab_reload", tab_reload),
            ("faults.reuse_key_other_cart", reuse_key_other_cart),
            ("faults.decline", decline),
            ("faults.payco_timeout", payco_timeout),
            ("faults.relay_crash_after_send", relay_crash_after_send),
            (
                "faults.consumer_crash_after_effect",
                consumer_crash_after_effect,
            ),
            ("faults.duplicate_delivery", duplicate_delivery),
            ("faults.reorder_delivery", reorder_delivery),
        ])?;
        durations(&[
            ("faults.latency_ms", latency_ms),
            ("faults.jitter_ms", jitter_ms),
        ])
    }

    /// No loss, no duplication, no crashes: what "faults stop" means at the end of a run.
    pub fn calm(&self) -> Faults {
        Faults {
            latency_ms: self.latency_ms,
            jitter_ms: self.jitter_ms,
            ..Faults::default()
        }
    }
}

/// The server: the store's knobs and how long the checkout handler's work takes.
///
/// ## Default values
/// - `lock_ms`: 2_000, `retention_ms`: 86_400_000 (24 h)
/// - `order_ms`: 5, `charge_ms`: 30, `save_ms`: 2 (virtual time of each step of the work)
/// - `slow_extra_ms`: 1_000 (a slow worker's charge takes `lock_ms + 0..=slow_extra_ms` longer)
/// - `claim_gap_ms`: 3 (SELECT-then-INSERT bug only: time between the check and the insert)
/// - `on_error`: release-claim (a failed work deletes the claim; a retry resumes the same order
///   under the same PayCo key)
/// - `expired_key_guard`: false (idem-server's is on: the lab's table and the classic
///   short-retention lesson show the store without it; the `expired-key-guard` lesson and
///   half the swarm's seeds turn it on). On, a request whose `Repeatability-First-Sent` is older
///   than retention and whose key has no record is refused (412) instead of run; the tolerance
///   is 0, since the simulated browser and server share one clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// A lease younger than this is live (409); older is stale (taken over).
    pub lock_ms: u64,
    /// How long a finished record is kept for replays.
    pub retention_ms: u64,
    /// Creating the order.
    pub order_ms: u64,
    /// PayCo's round trip.
    pub charge_ms: u64,
    /// Saving the response.
    pub save_ms: u64,
    /// How far past `lock_ms` a slow worker may run.
    pub slow_extra_ms: u64,
    /// The SELECT-then-INSERT bug's window between the check and the insert.
    pub claim_gap_ms: u64,
    /// What the store does with the claim when the work fails (PayCo declines or times out).
    /// JSON: `"release-claim"` or `"save-response"` (idem-store's spelling; the older
    /// `"ReleaseClaim"` and `"SaveResponse"` are read too).
    pub on_error: ErrorPolicy,
    /// The expired-key guard (idem-store's `first_sent`), with no tolerance.
    pub expired_key_guard: bool,
}

impl ServerConfig {
    /// Refuse a duration longer than [`MAX_DURATION_MS`].
    pub fn validate(&self) -> Result<(), crate::SimError> {
        let &ServerConfig {
            lock_ms,
            retention_ms,
            order_ms,
            charge_ms,
            save_ms,
            slow_extra_ms,
            claim_gap_ms,
            on_error: _,
            expired_key_guard: _,
        } = self;
        durations(&[
            ("server.lock_ms", lock_ms),
            ("server.retention_ms", retention_ms),
            ("server.order_ms", order_ms),
            ("server.charge_ms", charge_ms),
            ("server.save_ms", save_ms),
            ("server.slow_extra_ms", slow_extra_ms),
            ("server.claim_gap_ms", claim_gap_ms),
        ])
    }
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            lock_ms: 2_000,
            retention_ms: 86_400_000,
            order_ms: 5,
            charge_ms: 30,
            save_ms: 2,
            slow_extra_ms: 1_000,
            claim_gap_ms: 3,
            on_error: ErrorPolicy::ReleaseClaim,
            expired_key_guard: false,
        }
    }
}

/// The clients' retry policy.
///
/// ## Default values
/// - `timeout_ms`: 1_000 (no answer by then: the attempt's outcome is unknown, retry)
/// - `backoff_base_ms`: 200, `backoff_cap_ms`: 3_000 (exponential, full jitter)
/// - `retry_window_ms`: 30_000 (give up with an unknown outcome after this)
/// - `reload_ms`: 500 (how long a reloading tab is gone)
/// - `think_ms`: 1_500 (no-key / key-per-try: how long a user takes to pay again after a reload)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ClientConfig {
    /// Per-attempt timeout.
    pub timeout_ms: u64,
    /// First backoff ceiling.
    pub backoff_base_ms: u64,
    /// Largest backoff ceiling.
    pub backoff_cap_ms: u64,
    /// Total time a checkout keeps retrying.
    pub retry_window_ms: u64,
    /// Tab reload downtime.
    pub reload_ms: u64,
    /// Naive pages: delay before the user presses Pay again after a reload.
    pub think_ms: u64,
}

impl ClientConfig {
    /// Refuse a duration longer than [`MAX_DURATION_MS`].
    pub fn validate(&self) -> Result<(), crate::SimError> {
        let &ClientConfig {
            timeout_ms,
            backoff_base_ms,
            backoff_cap_ms,
            retry_window_ms,
            reload_ms,
            think_ms,
        } = self;
        durations(&[
            ("client.timeout_ms", timeout_ms),
            ("client.backoff_base_ms", backoff_base_ms),
            ("client.backoff_cap_ms", backoff_cap_ms),
            ("client.retry_window_ms", retry_window_ms),
            ("client.reload_ms", reload_ms),
            ("client.think_ms", think_ms),
        ])
    }
}

impl Default for ClientConfig {
    fn default() -> Self {
        Self {
            timeout_ms: 1_000,
            backoff_base_ms: 200,
            backoff_cap_ms: 3_000,
            retry_window_ms: 30_000,
            reload_ms: 500,
            think_ms: 1_500,
        }
    }
}

/// The scripted workload: how many checkouts start, and when.
///
/// ## Default values
/// - `orders`: 100, `strategy`: same-key
/// - `spacing_ms`: 50 (checkout `i` starts at `i * spacing_ms + 0..=spacing_ms`)
/// - `min_amount`: 100, `max_amount`: 50_000 (cents)
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Workload {
    /// Number of scripted checkouts (one checkout = one order).
    pub orders: u32,
    /// The scripted checkouts' strategy.
    pub strategy: Strategy,
    /// Mean gap between checkout starts.
    pub spacing_ms: u64,
    /// Smallest cart.
    pub min_amount: u32,
    /// Largest cart.
    pub max_amount: u32,
}

impl Workload {
    /// Refuse a spacing longer than [`MAX_DURATION_MS`] and an empty amount range.
    pub fn validate(&self) -> Result<(), crate::SimError> {
        durations(&[("workload.spacing_ms", self.spacing_ms)])?;
        if self.min_amount > self.max_amount {
            return Err(invalid("workload.min_amount", "must not exceed max_amount"));
        }
        Ok(())
    }
}

impl Default for Workload {
    fn default() -> Self {
        Self {
            orders: 100,
            strategy: Strategy::SameKey,
            spacing_ms: 50,
            min_amount: 100,
            max_amount: 50_000,
        }
    }
}

/// Everything that fixes a world. Same config (seed included) → same history, byte for byte.
///
/// ## Default values
/// - `seed`: 1, `history`: full, `bugs`: none
/// - the defaults of [`Workload`], [`Faults`], [`ServerConfig`], [`ClientConfig`]
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    /// The one seed.
    pub seed: u64,
    /// Scripted checkouts.
    pub workload: Workload,
    /// Fault rates.
    pub faults: Faults,
    /// Server knobs.
    pub server: ServerConfig,
    /// Client retry policy.
    pub client: ClientConfig,
    /// Classic bugs switched on (simulator-side; the store itself stays correct).
    pub bugs: Vec<Bug>,
    /// How much history to keep.
    pub history: HistoryDetail,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            seed: 1,
            workload: Workload::default(),
            faults: Faults::default(),
            server: ServerConfig::default(),
            client: ClientConfig::default(),
            bugs: Vec::new(),
            history: HistoryDetail::Full,
        }
    }
}

/// The longest duration a config may name: one year of virtual milliseconds. Sums of a few of
/// them stay far from `u64::MAX`, so virtual time never overflows.
pub const MAX_DURATION_MS: u64 = 365 * 24 * 60 * 60 * 1000;

fn invalid(field: &str, why: &str) -> crate::SimError {
    crate::SimError::Config(format!("{field} {why}"))
}

fn probabilities(named: &[(&str, f64)]) -> Result<(), crate::SimError> {
    match named.iter().find(|(_, p)| !(0.0..=1.0).contains(p)) {
        Some((name, _)) => Err(invalid(name, "must be a probability between 0 and 1")),
        None => Ok(()),
    }
}

fn durations(named: &[(&str, u64)]) -> Result<(), crate::SimError> {
    match named.iter().find(|(_, ms)| *ms > MAX_DURATION_MS) {
        Some((name, _)) => Err(invalid(name, "is longer than a year of virtual time")),
        None => Ok(()),
    }
}

impl SimConfig {
    /// Parse a config from JSON; unknown fields are errors, missing ones take their defaults.
    pub fn from_json(text: &str) -> Result<SimConfig, crate::SimError> {
        let config: SimConfig =
            serde_json::from_str(text).map_err(|e| crate::SimError::Config(e.to_string()))?;
        config.validate()?;
        Ok(config)
    }

    /// Refuse values the world cannot run with: a probability outside `0.0..=1.0` (or NaN),
    /// a duration longer than [`MAX_DURATION_MS`] (virtual time would overflow), an empty
    /// amount range. Configs come from files and URLs, so this is an error, never a panic.
    pub fn validate(&self) -> Result<(), crate::SimError> {
        self.faults.validate()?;
        self.server.validate()?;
        self.client.validate()?;
        self.workload.validate()
    }

    /// True when `bug` is switched on.
    pub fn has_bug(&self, bug: Bug) -> bool {
        self.bugs.contains(&bug)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_json_is_the_default() {
        assert_eq!(SimConfig::from_json("{}").unwrap(), SimConfig::default());
    }

    #[test]
    fn round_trips_and_rejects_unknown_fields() {
        let mut c = SimConfig::default();
        c.faults.drop_response = 0.2;
        c.bugs.push(Bug::TwoStepWrite);
        let text = serde_json::to_string(&c).unwrap();
        assert_eq!(SimConfig::from_json(&text).unwrap(), c);
        assert!(SimConfig::from_json(r#"{"faults":{"drop_everything":1}}"#).is_err());
        assert!(SimConfig::from_json("{").is_err());
    }

    #[test]
    fn refuses_values_the_world_cannot_run_with() {
        for bad in [
            r#"{"faults":{"drop_request":1.5}}"#,
            r#"{"faults":{"duplicate":-0.1}}"#,
            r#"{"faults":{"payco_timeout":2}}"#,
            r#"{"client":{"retry_window_ms":40000000000}}"#,
            r#"{"faults":{"latency_ms":18446744073709551615}}"#,
            r#"{"server":{"lock_ms":40000000000}}"#,
            r#"{"workload":{"min_amount":5,"max_amount":1}}"#,
        ] {
            let err = SimConfig::from_json(bad).expect_err(bad).to_string();
            assert!(err.contains('.'), "{bad}: the error names the field: {err}");
        }
        let mut edge = SimConfig::default();
        edge.faults.drop_request = 1.0;
        edge.server.retention_ms = MAX_DURATION_MS;
        assert!(edge.validate().is_ok());
    }

    #[test]
    fn on_error_is_kebab_case_and_reads_the_old_spelling() {
        for (policy, kebab, old) in [
            (ErrorPolicy::ReleaseClaim, "release-claim", "ReleaseClaim"),
            (ErrorPolicy::SaveResponse, "save-response", "SaveResponse"),
        ] {
            for spelling in [kebab, old] {
                let json = format!(r#"{{"server":{{"on_error":"{spelling}"}}}}"#);
                let c = SimConfig::from_json(&json).unwrap();
                assert_eq!(c.server.on_error, policy, "{json}");
            }
            let mut c = SimConfig::default();
            c.server.on_error = policy;
            let text = serde_json::to_string(&c).unwrap();
            assert!(text.contains(&format!(r#""on_error":"{kebab}""#)), "{text}");
        }
        assert!(SimConfig::from_json(r#"{"server":{"on_error":"release"}}"#).is_err());
    }

    #[test]
    fn strategy_names() {
        let s: Strategy = serde_json::from_str("\"key-per-try\"").unwrap();
        assert_eq!(s, Strategy::KeyPerAttempt);
        assert_eq!(Strategy::SameKey.name(), "same-key");
    }
}
