//! The run log: everything that rebuilds this page's world, so a real page reload and a link
//! reproduce the same run to the same event.
//!
//! The world is deterministic: its seed and settings at time 0, plus every
//! [`idem_sim::Input`] the page applied (with the virtual time and events run when it was
//! applied), give every claim, charge and event again. Besides them the log keeps the page-only
//! bits: the strategy selected, the classroom scenario the world was built from, projector mode,
//! and how far the run got. A scenario's own script is not in the log: the scenario applies it
//! again when the world is rebuilt.
//!
//! It has one serialisation, [`text`]: the URL hash of a link and the sessionStorage item of a
//! reload are the same string. The exported history is another format on purpose: it is
//! idem-sim's `HistoryExport` JSON, the run's result (every message, the ledger, the verdict,
//! the hash) for `idem-lab replay` to compare, far too long for a link, while this log carries
//! only what rebuilds the run.

pub mod text;

use idem_sim::{Command, Faults, Input, ServerConfig, Strategy};

use super::settings::{self, NetworkSettings, ServerSettings};

/// Everything needed to rebuild the world.
#[derive(Clone, Debug, PartialEq)]
pub struct RunLog {
    /// The world's seed.
    pub seed: u64,
    /// The strategy selected when the log was saved (page only).
    pub strategy: Strategy,
    /// Network settings at time 0.
    pub network: NetworkSettings,
    /// Server settings at time 0.
    pub server: ServerSettings,
    /// The inputs the page applied, in order (times and event counts never decrease).
    pub inputs: Vec<Input>,
    /// Virtual time reached when the log was last saved.
    pub now: u64,
    /// Events run when the log was last saved.
    pub events: u64,
    /// The classroom scenario the world was built from (`<id>` or `<id>_fix`, see
    /// `model::scenario::pick`); its config and script replace the settings' world.
    pub scenario: Option<String>,
    /// Projector mode (page only).
    pub projector: bool,
    /// The guided tour's step (0-based), while it is open (page only).
    pub tour: Option<u8>,
    /// The central tab open when the link was copied, by its place in the tab bar (0: the
    /// first; page only): the link opens there.
    pub tab: u8,
}

impl RunLog {
    /// A new run with no inputs.
    pub fn new(
        seed: u64,
        strategy: Strategy,
        network: NetworkSettings,
        server: ServerSettings,
    ) -> Self {
        Self {
            seed,
            strategy,
            network,
            server,
            inputs: Vec::new(),
            now: 0,
            events: 0,
            scenario: None,
            projector: false,
            tour: None,
            tab: 0,
        }
    }

    /// Append `input`, which the world just applied; a time or count before the last one is
    /// clamped to it.
    pub fn push(&mut self, input: Input) {
        let last = self
            .inputs
            .last()
            .map_or((0, 0), |i| (i.at, i.after_events));
        let input = Input {
            at: input.at.max(last.0),
            after_events: input.after_events.max(last.1),
            command: input.command,
        };
        self.now = self.now.max(input.at);
        self.events = self.events.max(input.after_events);
        self.inputs.push(input);
    }

    /// Record how far the world got (saved when the page goes away).
    pub fn reached(&mut self, now: u64, events: u64) {
        self.now = self.now.max(now);
        self.events = self.events.max(events);
    }

    /// The log as it was after `events` events: the inputs applied by then, at the time of the
    /// last of them.
    pub fn until(&self, events: u64) -> RunLog {
        let mut log = self.clone();
        log.inputs.retain(|i| i.after_events <= events);
        log.now = log.inputs.last().map_or(0, |i| i.at);
        log.events = events;
        log
    }

    /// The world's faults at time 0.
    pub fn faults(&self) -> Faults {
        settings::faults(&self.network, &self.server)
    }

    /// The world's server knobs at time 0.
    pub fn server_config(&self) -> ServerConfig {
        settings::server_config(&self.server)
    }

    /// The network and server settings in force after the last input: those at time 0, changed
    /// by every `SetFaults` and `SetServer` the page applied.
    pub fn settings_now(&self) -> (NetworkSettings, ServerSettings) {
        let (mut faults, mut server) = (self.faults(), self.server_config());
        for input in &self.inputs {
            match &input.command {
                Command::SetFaults(f) => faults = f.clone(),
                Command::SetServer(s) => server = s.clone(),
                _ => {}
            }
        }
        (
            settings::network_of(&faults),
            settings::server_of(&server, &faults),
        )
    }
}

/// An input at `at` after `after_events` events: the page's tests build run logs from these.
#[cfg(test)]
pub fn input(at: u64, after_events: u64, command: Command) -> Input {
    Input {
        at,
        after_events,
        command,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::settings::Settings;
    use idem_sim::ErrorPolicy;

    fn log() -> RunLog {
        let s = Settings::default();
        RunLog::new(7, Strategy::SameKey, s.network(), s.server())
    }

    #[test]
    fn times_and_counts_never_go_backwards() {
        let mut l = log();
        l.push(input(10, 3, Command::DropNextRequest));
        l.push(input(5, 2, Command::ReloadTab));
        assert_eq!((l.inputs[1].at, l.inputs[1].after_events), (10, 3));
        l.reached(900, 40);
        l.reached(800, 30);
        assert_eq!((l.now, l.events), (900, 40));
    }

    #[test]
    fn the_settings_in_force_follow_the_inputs() {
        let mut l = log();
        let mut network = l.network.clone();
        network.response_loss = 2_500;
        let mut server = l.server.clone();
        server.policy = ErrorPolicy::SaveResponse;
        server.crash_after_charge = true;
        let faults = settings::faults(&network, &server);
        l.push(input(1, 1, Command::SetFaults(faults)));
        l.push(input(
            2,
            2,
            Command::SetServer(settings::server_config(&server)),
        ));
        assert_eq!(l.settings_now(), (network, server));
        assert_eq!(
            l.until(1).settings_now().1.policy,
            ErrorPolicy::ReleaseClaim
        );
        assert_eq!(l.until(0).inputs.len(), 0);
    }
}
