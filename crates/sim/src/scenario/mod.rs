//! Classroom scenarios as data: a world config, a short script of controls, the moment to
//! pause at, and the effect that moment must show. Bug scenarios (and retention) carry a
//! [`Fix`]: the same seed and script with the bug off, and the good result it shows instead.
//!
//! [`SCENARIOS`] has a stable order and stable ids (the demo's URL stores `scenario=<id>`;
//! digit keys pick by index). [`ScenarioRun`] drives a world through a scenario and notices
//! the pause; the world records every scripted control as an input, so `World::export` and
//! `World::replay` reproduce a scenario run like any other.

mod effect;
mod run;
mod table;

pub use effect::{Effect, Pause};
pub use run::ScenarioRun;
pub use table::SCENARIOS;

use crate::config::{HistoryDetail, SimConfig, Strategy, Workload};
use crate::world::Command;

/// A control at a virtual time (applied after the events due at that millisecond): one of the
/// world's own [`Command`]s, applied through [`World::apply`](crate::World::apply) like any
/// other input.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Virtual milliseconds.
    pub at: u64,
    /// What.
    pub command: Command,
}

/// The second run of a scenario: same seed and script, the cause removed (from the config, or,
/// when the cause is the page's, from its script).
#[derive(Clone, Copy, Debug)]
pub struct Fix {
    /// What the fix changes.
    pub caption: &'static str,
    /// The script, when the page itself changes (another strategy); `None`: the scenario's.
    pub script: Option<&'static [Step]>,
    /// What the fixed run shows at its pause.
    pub after_pause: &'static str,
    /// Undo the cause in the scenario's config.
    pub setup: fn(&mut SimConfig),
    /// Where the fixed run pauses.
    pub pause: Pause,
    /// What holds there.
    pub expect: &'static [Effect],
}

/// One classroom scenario.
#[derive(Clone, Copy, Debug)]
pub struct Scenario {
    /// Stable id (URL hash, test hooks `scenario-<id>`).
    pub id: &'static str,
    /// Short title for the menu.
    pub title: &'static str,
    /// What to watch, shown while it runs.
    pub caption: &'static str,
    /// What just happened, shown at the pause.
    pub after_pause: &'static str,
    /// The seed.
    pub seed: u64,
    /// Changes to the base config (bugs, retention, jitter).
    pub setup: fn(&mut SimConfig),
    /// The controls, in time order.
    pub script: &'static [Step],
    /// Where to pause.
    pub pause: Pause,
    /// What holds at the pause.
    pub expect: &'static [Effect],
    /// The fixed run, for bug scenarios.
    pub fix: Option<Fix>,
}

/// Amount of every scripted checkout's cart, in cents: the demo's cart (its page pins the two
/// equal), so the cart a scenario's page shows is the amount PayCo charges.
pub const CART_CENTS: u32 = 2590;

impl Scenario {
    /// The scenario with this id.
    pub fn by_id(id: &str) -> Option<&'static Scenario> {
        SCENARIOS.iter().find(|s| s.id == id)
    }

    /// Its index in [`SCENARIOS`].
    pub fn index(&self) -> usize {
        SCENARIOS.iter().position(|s| s.id == self.id).unwrap_or(0)
    }

    /// The world's config: a quiet network (no random faults, no scripted workload), the
    /// scenario's changes, and with `fixed` the fix's.
    pub fn config(&self, fixed: bool) -> SimConfig {
        let mut c = SimConfig {
            seed: self.seed,
            workload: Workload {
                orders: 0,
                ..Workload::default()
            },
            history: HistoryDetail::Full,
            ..SimConfig::default()
        };
        (self.setup)(&mut c);
        if let (true, Some(fix)) = (fixed, &self.fix) {
            (fix.setup)(&mut c);
        }
        c
    }

    /// Where a run pauses.
    pub fn pause(&self, fixed: bool) -> Pause {
        match (&self.fix, fixed) {
            (Some(f), true) => f.pause,
            _ => self.pause,
        }
    }

    /// The controls of a run, in time order.
    pub fn script(&self, fixed: bool) -> &'static [Step] {
        match (&self.fix, fixed) {
            (
                Some(Fix {
                    script: Some(s), ..
                }),
                true,
            ) => s,
            _ => self.script,
        }
    }

    /// The page a run plays: the strategy of its first scripted checkout (`None` when the script
    /// starts none). The demo puts it in its strategy select, so the page a scenario shows is
    /// the page the select names (a no-key run never reads "Same key").
    pub fn strategy(&self, fixed: bool) -> Option<Strategy> {
        self.script(fixed)
            .iter()
            .find_map(|step| match step.command {
                Command::StartCheckout { strategy, .. } => Some(strategy),
                _ => None,
            })
    }

    /// What holds at that pause.
    pub fn expect(&self, fixed: bool) -> &'static [Effect] {
        match (&self.fix, fixed) {
            (Some(f), true) => f.expect,
            _ => self.expect,
        }
    }

    /// The caption shown at the pause.
    pub fn after_pause(&self, fixed: bool) -> &'static str {
        match (&self.fix, fixed) {
            (Some(f), true) => f.after_pause,
            _ => self.after_pause,
        }
    }
}
