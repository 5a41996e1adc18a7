//! The control panel's state: strategy, network faults, server knobs, seed and batch size.
//!
//! One reducer for every form on the page. `reduce` only validates; the world is told about a
//! new valid value by an effect in `app.rs`, and nothing here touches storage.

use std::rc::Rc;

use idem_sim::{Faults, ServerConfig, Strategy};
use idem_store::ErrorPolicy;
use yew::Reducible;

use super::fields::{
    format_percent, parse_count, parse_ms, parse_percent, parse_seed, Field, FULL,
};

/// Longest latency, lock or think time a field accepts (ten minutes).
pub const MAX_MS: u64 = 600_000;
/// Longest retention a field accepts (one week).
pub const MAX_RETENTION_MS: u64 = 7 * 86_400_000;
/// Most checkouts one batch may start.
pub const MAX_BATCH: u32 = 5_000;

/// The strategy select's options, in order: idem-sim's strategies, whose `name()` is the
/// option value (a stable test hook).
pub const STRATEGIES: [Strategy; 3] = Strategy::ALL;

/// What the strategy select shows for `s`.
pub fn strategy_label(s: Strategy) -> &'static str {
    match s {
        Strategy::NoKey => "No key",
        Strategy::KeyPerAttempt => "New key per attempt",
        Strategy::SameKey => "Same key (idem-client)",
    }
}

/// The strategy whose option value is `value`.
pub fn strategy_from_value(value: &str) -> Option<Strategy> {
    Strategy::ALL.into_iter().find(|s| s.name() == value)
}

/// Basis points (the fields' resolution: 10,000 = always) as the simulator's probability.
pub fn probability(bp: u32) -> f64 {
    f64::from(bp.min(FULL)) / f64::from(FULL)
}

/// A probability the page made with [`probability`], back in basis points.
pub fn basis_points(p: f64) -> u32 {
    // `p` is `bp / 10,000` for a whole `bp` ≤ 10,000, so adding a half and truncating gives
    // `bp` back exactly (the cast saturates on anything odd).
    (p * f64::from(FULL) + 0.5) as u32
}

/// The network as the world should run it (valid values only).
#[derive(Clone, Debug, PartialEq)]
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
#[derive(Clone, Debug, PartialEq)]
pub struct ServerSettings {
    /// A lease younger than this gets 409; older is taken over.
    pub lock_ms: u64,
    /// How long a finished record is kept.
    pub retention_ms: u64,
    /// What a failed work does to the claim.
    pub policy: ErrorPolicy,
    /// Every worker dies after PayCo charged, before saving.
    pub crash_after_charge: bool,
    /// Every worker outlives `lock_ms`.
    pub slow_worker: bool,
}

/// The world's faults for the network and server panels. The server panel's two worker
/// toggles are fault probabilities in the simulator: on means every worker.
pub fn faults(n: &NetworkSettings, s: &ServerSettings) -> Faults {
    let always = |on: bool| if on { 1.0 } else { 0.0 };
    Faults {
        drop_request: probability(n.request_loss),
        drop_response: probability(n.response_loss),
        duplicate: probability(n.duplicate),
        latency_ms: n.latency_min_ms,
        jitter_ms: n.latency_max_ms.saturating_sub(n.latency_min_ms),
        crash_after_charge: always(s.crash_after_charge),
        slow_worker: always(s.slow_worker),
        ..Faults::default()
    }
}

/// The world's server knobs for the server panel (the handler's timings stay the defaults).
pub fn server_config(s: &ServerSettings) -> ServerConfig {
    ServerConfig {
        lock_ms: s.lock_ms,
        retention_ms: s.retention_ms,
        on_error: s.policy,
        ..ServerConfig::default()
    }
}

/// The network panel's values for faults the page made with [`faults`].
pub fn network_of(f: &Faults) -> NetworkSettings {
    NetworkSettings {
        request_loss: basis_points(f.drop_request),
        response_loss: basis_points(f.drop_response),
        duplicate: basis_points(f.duplicate),
        latency_min_ms: f.latency_ms,
        latency_max_ms: f.latency_ms.saturating_add(f.jitter_ms),
    }
}

/// The server panel's values for knobs and faults the page made with [`server_config`] and
/// [`faults`].
pub fn server_of(c: &ServerConfig, f: &Faults) -> ServerSettings {
    ServerSettings {
        lock_ms: c.lock_ms,
        retention_ms: c.retention_ms,
        policy: c.on_error,
        crash_after_charge: f.crash_after_charge >= 1.0,
        slow_worker: f.slow_worker >= 1.0,
    }
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
    pub policy: ErrorPolicy,
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
            policy: ErrorPolicy::ReleaseClaim,
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
    Policy(ErrorPolicy),
    /// "Crash worker after charge" toggled.
    CrashAfterCharge(bool),
    /// "Slow worker" toggled.
    SlowWorker(bool),
    /// The world was set up with these values (a scenario's config): every field shows them,
    /// the batch size stays as typed.
    Show(Rc<Settings>),
}

impl Reducible for Settings {
    type Action = SettingsAction;

    fn reduce(self: Rc<Self>, action: SettingsAction) -> Rc<Self> {
        if let SettingsAction::Show(shown) = action {
            let mut next = (*shown).clone();
            next.batch = self.batch.clone();
            return Rc::new(next);
        }
        let mut next = (*self).clone();
        match action {
            SettingsAction::Edit(id, text) => next.edit(id, text),
            SettingsAction::Strategy(s) => next.strategy = s,
            SettingsAction::Policy(p) => next.policy = p,
            SettingsAction::CrashAfterCharge(on) => next.crash_after_charge = on,
            SettingsAction::SlowWorker(on) => next.slow_worker = on,
            SettingsAction::Show(_) => {}
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
        let s = apply(s, SettingsAction::Policy(ErrorPolicy::SaveResponse));
        let s = apply(s, SettingsAction::Edit(FieldId::LockMs, "500".into()));
        let server = s.server();
        assert!(server.crash_after_charge);
        assert_eq!(server.policy, ErrorPolicy::SaveResponse);
        assert_eq!(server.lock_ms, 500);
    }

    #[test]
    fn a_scenario_world_shows_its_own_values_and_keeps_the_batch_size() {
        let typed = apply(
            Settings::default(),
            SettingsAction::Edit(FieldId::ResponseLoss, "30".into()),
        );
        let typed = apply(typed, SettingsAction::Edit(FieldId::Batch, "20".into()));
        let quiet = Settings::default();
        let shown = Settings::restored(
            Strategy::NoKey,
            1,
            &NetworkSettings {
                latency_max_ms: 20,
                ..quiet.network()
            },
            &ServerSettings {
                retention_ms: 500,
                ..quiet.server()
            },
        );
        let s = apply(typed, SettingsAction::Show(Rc::new(shown)));
        assert_eq!(s.response_loss.text, "0");
        assert_eq!(s.network().response_loss, 0);
        assert_eq!(s.latency_max.value, 20);
        assert_eq!(s.retention_ms.value, 500);
        assert_eq!(s.strategy, Strategy::NoKey);
        assert_eq!(s.batch.value, 20, "the batch size is the page's own");
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
        for s in STRATEGIES {
            assert_eq!(strategy_from_value(s.name()), Some(s));
        }
        assert_eq!(strategy_from_value("bogus"), None);
        let values: Vec<&str> = STRATEGIES.iter().map(|s| s.name()).collect();
        assert_eq!(
            values,
            ["no-key", "key-per-try", "same-key"],
            "the select's test hooks"
        );
    }

    #[test]
    fn every_basis_point_survives_the_round_trip_through_a_probability() {
        for bp in 0..=FULL {
            assert_eq!(basis_points(probability(bp)), bp);
        }
    }

    #[test]
    fn the_panels_values_survive_the_round_trip_through_the_world_config() {
        let mut s = Settings::default();
        for (id, text) in [
            (FieldId::RequestLoss, "12.34"),
            (FieldId::ResponseLoss, "100"),
            (FieldId::Duplicate, "0.01"),
            (FieldId::LatencyMax, "900"),
            (FieldId::LatencyMin, "40"),
            (FieldId::LockMs, "750"),
            (FieldId::RetentionMs, "60000"),
        ] {
            s = apply(s, SettingsAction::Edit(id, text.into()));
        }
        let s = apply(s, SettingsAction::Policy(ErrorPolicy::SaveResponse));
        let s = apply(s, SettingsAction::SlowWorker(true));
        let (n, srv) = (s.network(), s.server());
        let f = faults(&n, &srv);
        assert_eq!(network_of(&f), n);
        assert_eq!(server_of(&server_config(&srv), &f), srv);
        assert_eq!((f.latency_ms, f.jitter_ms), (40, 860));
        assert_eq!(f.slow_worker, 1.0);
    }
}
