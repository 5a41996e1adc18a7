//! The control panel's state: strategy, network faults, server knobs, seed and batch size.
//!
//! One reducer for every form on the page. `reduce` only validates; the world is told about a
//! new valid value by an effect in `app.rs`, and nothing here touches storage.

use std::rc::Rc;

use serde::{Deserialize, Serialize};
use yew::Reducible;

use super::fields::{format_percent, parse_count, parse_ms, parse_percent, parse_seed, Field};

/// Longest latency, lock or think time a field accepts (ten minutes).
pub const MAX_MS: u64 = 600_000;
/// Longest retention a field accepts (one week).
pub const MAX_RETENTION_MS: u64 = 7 * 86_400_000;
/// Most checkouts one batch may start.
pub const MAX_BATCH: u32 = 5_000;

/// How the checkout page uses idempotency keys. The `value()` strings are the `strategy`
/// select's option values, a stable test hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Strategy {
    /// No key: every retry is a new request.
    NoKey,
    /// A new key on every attempt.
    KeyPerTry,
    /// One key per checkout, persisted before the first send.
    SameKey,
}

impl Strategy {
    /// In the select's order.
    pub const ALL: [Strategy; 3] = [Strategy::NoKey, Strategy::KeyPerTry, Strategy::SameKey];

    /// The option value.
    pub fn value(self) -> &'static str {
        match self {
            Strategy::NoKey => "no-key",
            Strategy::KeyPerTry => "key-per-try",
            Strategy::SameKey => "same-key",
        }
    }

    /// What the option says.
    pub fn label(self) -> &'static str {
        match self {
            Strategy::NoKey => "No key",
            Strategy::KeyPerTry => "New key per attempt",
            Strategy::SameKey => "Same key (idem-client)",
        }
    }

    /// The strategy whose option value is `value`.
    pub fn from_value(value: &str) -> Option<Strategy> {
        Strategy::ALL.into_iter().find(|s| s.value() == value)
    }
}

/// What the store does when the checkout's work fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Policy {
    /// Delete the claim so a retry runs the work again.
    ReleaseClaim,
    /// Save the error and replay it (Stripe's choice).
    SaveResponse,
}

impl Policy {
    /// The select's option value.
    pub fn value(self) -> &'static str {
        match self {
            Policy::ReleaseClaim => "release-claim",
            Policy::SaveResponse => "save-response",
        }
    }

    /// The policy whose option value is `value`.
    pub fn from_value(value: &str) -> Option<Policy> {
        [Policy::ReleaseClaim, Policy::SaveResponse]
            .into_iter()
            .find(|p| p.value() == value)
    }
}

/// The network as the world should run it (valid values only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetworkSettings {
    /// Probability a request is lost, in basis points (10,000 = always).
    pub request_loss: u32,
    /// Probability a response is lost, in basis points.
    pub response_loss: u32,
    /// Probability a request is delivered twice, in basis points.
    pub duplicate: u32,
    /// Shortest one-way delay.
    pub latency_min_ms: u64,
    /// Longest one-way delay.
    pub latency_max_ms: u64,
}

/// The server as the world should run it (valid values only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServerSettings {
    /// A lease younger than this gets 409; older is taken over.
    pub lock_ms: u64,
    /// How long a finished record is kept.
    pub retention_ms: u64,
    /// What a failed work does to the claim.
    pub policy: Policy,
    /// Every worker dies after PayCo charged, before saving.
    pub crash_after_charge: bool,
    /// Every worker outlives `lock_ms`.
    pub slow_worker: bool,
}

/// A field the user can type into.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldId {
    /// Request loss, %.
    RequestLoss,
    /// Response loss, %.
    ResponseLoss,
    /// Duplicate delivery, %.
    Duplicate,
    /// Latency lower bound, ms.
    LatencyMin,
    /// Latency upper bound, ms.
    LatencyMax,
    /// The world's seed.
    Seed,
    /// The store's `lock_ms`.
    LockMs,
    /// The store's retention, ms.
    RetentionMs,
    /// How many checkouts the batch button starts.
    Batch,
}

/// Every control's state.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Strategy of the next checkout.
    pub strategy: Strategy,
    /// Request loss.
    pub request_loss: Field<u32>,
    /// Response loss.
    pub response_loss: Field<u32>,
    /// Duplicate delivery.
    pub duplicate: Field<u32>,
    /// Latency lower bound.
    pub latency_min: Field<u64>,
    /// Latency upper bound.
    pub latency_max: Field<u64>,
    /// Seed of the run.
    pub seed: Field<u64>,
    /// Store lock.
    pub lock_ms: Field<u64>,
    /// Store retention.
    pub retention_ms: Field<u64>,
    /// Error policy.
    pub policy: Policy,
    /// Crash toggle.
    pub crash_after_charge: bool,
    /// Slow-worker toggle.
    pub slow_worker: bool,
    /// Batch size.
    pub batch: Field<u32>,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            strategy: Strategy::SameKey,
            request_loss: percent_field(0),
            response_loss: percent_field(0),
            duplicate: percent_field(0),
            latency_min: Field::new(20),
            latency_max: Field::new(30),
            seed: Field::new(1),
            lock_ms: Field::new(2_000),
            retention_ms: Field::new(86_400_000),
            policy: Policy::ReleaseClaim,
            crash_after_charge: false,
            slow_worker: false,
            batch: Field::new(50),
        }
    }
}

/// A percentage field showing `bp` basis points as a percentage.
fn percent_field(bp: u32) -> Field<u32> {
    Field {
        text: format_percent(bp),
        value: bp,
        error: None,
    }
}

impl Settings {
    /// The valid network values.
    pub fn network(&self) -> NetworkSettings {
        NetworkSettings {
            request_loss: self.request_loss.value,
            response_loss: self.response_loss.value,
            duplicate: self.duplicate.value,
            latency_min_ms: self.latency_min.value,
            latency_max_ms: self.latency_max.value,
        }
    }

    /// The valid server values.
    pub fn server(&self) -> ServerSettings {
        ServerSettings {
            lock_ms: self.lock_ms.value,
            retention_ms: self.retention_ms.value,
            policy: self.policy,
            crash_after_charge: self.crash_after_charge,
            slow_worker: self.slow_worker,
        }
    }

    /// Settings whose fields show `seed`, `network` and `server` (after a page reload).
    pub fn restored(
        strategy: Strategy,
        seed: u64,
        network: &NetworkSettings,
        server: &ServerSettings,
    ) -> Self {
        Self {
            strategy,
            request_loss: percent_field(network.request_loss),
            response_loss: percent_field(network.response_loss),
            duplicate: percent_field(network.duplicate),
            latency_min: Field::new(network.latency_min_ms),
            latency_max: Field::new(network.latency_max_ms),
            seed: Field::new(seed),
            lock_ms: Field::new(server.lock_ms),
            retention_ms: Field::new(server.retention_ms),
            policy: server.policy,
            crash_after_charge: server.crash_after_charge,
            slow_worker: server.slow_worker,
            batch: Field::new(50),
        }
    }

    fn edit(&mut self, id: FieldId, text: String) {
        match id {
            FieldId::RequestLoss => self.request_loss.edit(text, parse_percent),
            FieldId::ResponseLoss => self.response_loss.edit(text, parse_percent),
            FieldId::Duplicate => self.duplicate.edit(text, parse_percent),
            FieldId::Seed => self.seed.edit(text, parse_seed),
            FieldId::LockMs => self.lock_ms.edit(text, |t| parse_ms(t, MAX_MS)),
            FieldId::RetentionMs => self
                .retention_ms
                .edit(text, |t| parse_ms(t, MAX_RETENTION_MS)),
            FieldId::Batch => self.batch.edit(text, |t| parse_count(t, 1, MAX_BATCH)),
            FieldId::LatencyMin | FieldId::LatencyMax => self.edit_latency(id, text),
        }
    }

    /// The two latency bounds are checked together: min ≤ max, or the edited one is refused.
    fn edit_latency(&mut self, id: FieldId, text: String) {
        let (old_min, old_max) = (self.latency_min.value, self.latency_max.value);
        let field = if id == FieldId::LatencyMin {
            &mut self.latency_min
        } else {
            &mut self.latency_max
        };
        field.edit(text, |t| parse_ms(t, MAX_MS));
        if field.error.is_some() {
            return;
        }
        if self.latency_min.value > self.latency_max.value {
            if id == FieldId::LatencyMin {
                self.latency_min.value = old_min;
                self.latency_min
                    .refuse(format!("must not exceed the maximum ({old_max} ms)"));
            } else {
                self.latency_max.value = old_max;
                self.latency_max
                    .refuse(format!("must be at least the minimum ({old_min} ms)"));
            }
            return;
        }
        // The other bound may have been refused only because of this one: re-check it.
        let other = if id == FieldId::LatencyMin {
            &mut self.latency_max
        } else {
            &mut self.latency_min
        };
        if other.error.is_some() {
            let text = other.text.clone();
            other.edit(text, |t| parse_ms(t, MAX_MS));
            if self.latency_min.value > self.latency_max.value {
                if id == FieldId::LatencyMin {
                    self.latency_max.value = old_max;
                } else {
                    self.latency_min.value = old_min;
                }
            }
        }
    }
}

/// What the controls can do.
#[derive(Clone, Debug, PartialEq)]
pub enum SettingsAction {
    /// The user typed `text` into a field.
    Edit(FieldId, String),
    /// The strategy select changed.
    Strategy(Strategy),
    /// The error policy select changed.
    Policy(Policy),
    /// "Crash worker after charge" toggled.
    CrashAfterCharge(bool),
    /// "Slow worker" toggled.
    SlowWorker(bool),
}

impl Reducible for Settings {
    type Action = SettingsAction;

    fn reduce(self: Rc<Self>, action: SettingsAction) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            SettingsAction::Edit(id, text) => next.edit(id, text),
            SettingsAction::Strategy(s) => next.strategy = s,
            SettingsAction::Policy(p) => next.policy = p,
            SettingsAction::CrashAfterCharge(on) => next.crash_after_charge = on,
            SettingsAction::SlowWorker(on) => next.slow_worker = on,
        }
        if next == *self {
            return self;
        }
        Rc::new(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(s: Settings, a: SettingsAction) -> Settings {
        (*Rc::new(s).reduce(a)).clone()
    }

    #[test]
    fn loss_above_100_is_refused_and_the_world_keeps_the_old_value() {
        let s = apply(
            Settings::default(),
            SettingsAction::Edit(FieldId::ResponseLoss, "30".into()),
        );
        assert_eq!(s.network().response_loss, 3_000);
        let s = apply(s, SettingsAction::Edit(FieldId::ResponseLoss, "130".into()));
        assert_eq!(s.network().response_loss, 3_000);
        assert_eq!(s.response_loss.text, "130");
        assert!(s.response_loss.error.is_some());
    }

    #[test]
    fn negative_latency_and_a_non_numeric_seed_are_refused() {
        let s = apply(
            Settings::default(),
            SettingsAction::Edit(FieldId::LatencyMin, "-10".into()),
        );
        assert!(s.latency_min.error.as_deref().unwrap().contains("negative"));
        assert_eq!(s.network().latency_min_ms, 20);
        let s = apply(s, SettingsAction::Edit(FieldId::Seed, "abc".into()));
        assert!(s.seed.error.is_some());
        assert_eq!(s.seed.value, 1);
    }

    #[test]
    fn latency_min_above_max_is_refused_until_max_grows() {
        let s = apply(
            Settings::default(),
            SettingsAction::Edit(FieldId::LatencyMin, "100".into()),
        );
        assert!(s.latency_min.error.is_some());
        assert_eq!(s.network().latency_min_ms, 20);
        let s = apply(s, SettingsAction::Edit(FieldId::LatencyMax, "200".into()));
        assert_eq!(s.latency_max.error, None);
        assert_eq!(
            s.latency_min.error, None,
            "the min is re-checked once the max allows it"
        );
        assert_eq!(
            (s.network().latency_min_ms, s.network().latency_max_ms),
            (100, 200)
        );
    }

    #[test]
    fn toggles_and_selects_change_the_server_settings() {
        let s = apply(Settings::default(), SettingsAction::CrashAfterCharge(true));
        let s = apply(s, SettingsAction::Policy(Policy::SaveResponse));
        let s = apply(s, SettingsAction::Edit(FieldId::LockMs, "500".into()));
        let server = s.server();
        assert!(server.crash_after_charge);
        assert_eq!(server.policy, Policy::SaveResponse);
        assert_eq!(server.lock_ms, 500);
    }

    #[test]
    fn an_action_that_changes_nothing_keeps_the_same_rc() {
        let s = Rc::new(Settings::default());
        let same = s
            .clone()
            .reduce(SettingsAction::Strategy(Strategy::SameKey));
        assert!(Rc::ptr_eq(&s, &same));
    }

    #[test]
    fn strategy_values_round_trip() {
        for s in Strategy::ALL {
            assert_eq!(Strategy::from_value(s.value()), Some(s));
        }
        assert_eq!(Strategy::from_value("bogus"), None);
    }
}
