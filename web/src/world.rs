//! Adapter between the page and idem-sim's `World` (placeholder until sim's API lands).

use crate::model::run_log::{Command, RunLog};
use crate::model::settings::{NetworkSettings, ServerSettings};
use crate::model::view::Snapshot;

/// The world as the page sees it.
pub struct Adapter {
    now: u64,
    seed: u64,
    network: NetworkSettings,
    server: ServerSettings,
}

impl Adapter {
    /// A new world for `log`'s seed and initial settings, at time 0.
    pub fn fresh(log: &RunLog) -> Adapter {
        Adapter { now: 0, seed: log.seed, network: log.network.clone(), server: log.server.clone() }
    }

    /// The world `log` describes, rebuilt command by command up to `log.now`.
    pub fn replay(log: &RunLog) -> Adapter {
        let mut w = Adapter::fresh(log);
        for e in &log.entries {
            w.run_until(e.at);
            w.apply(&e.command);
        }
        w.run_until(log.now);
        w
    }

    /// Virtual time.
    pub fn now(&self) -> u64 {
        self.now
    }

    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Network settings in force.
    pub fn network(&self) -> &NetworkSettings {
        &self.network
    }

    /// Server settings in force.
    pub fn server(&self) -> &ServerSettings {
        &self.server
    }

    /// Apply a user command at the current time.
    pub fn apply(&mut self, command: &Command) {
        match command {
            Command::Network(n) => self.network = n.clone(),
            Command::Server(s) => self.server = s.clone(),
            _ => {}
        }
    }

    /// Run every event up to `t`.
    pub fn run_until(&mut self, t: u64) {
        self.now = self.now.max(t);
    }

    /// Advance by `dt`, stopping early when `over_budget()`; true when anything moved.
    pub fn advance_by(&mut self, dt: u64, _over_budget: &dyn Fn() -> bool) -> bool {
        self.now += dt;
        true
    }

    /// Run the next event.
    pub fn step(&mut self) {
        self.now += 1;
    }

    /// Remove this run's localStorage records.
    pub fn clear_storage(&mut self) {}

    /// What the panels show.
    pub fn snapshot(&mut self) -> Snapshot {
        Snapshot { now: self.now, seed: self.seed, cart: "cart-1".into(), ..Snapshot::default() }
    }
}
