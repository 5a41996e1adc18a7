//! The run's inputs, so a real page reload can rebuild the same world.
//!
//! The world is deterministic: the seed plus every user command with the virtual time it was
//! given at reproduces every claim, charge and event. The page keeps this log in
//! sessionStorage (per tab, like a real checkout's in-memory state would not be); on load it
//! replays the log up to the time the page went away, then reloads the tab inside the world so
//! the pending checkout resumes from the real localStorage record, with its stored key.

use serde::{Deserialize, Serialize};

use super::settings::{NetworkSettings, ServerSettings, Strategy};

/// Format version of the stored log; another version is ignored, not misread.
pub const VERSION: u32 = 1;

/// Something the user did to the world.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Command {
    /// Pay for the current cart.
    Pay(Strategy),
    /// Start `n` checkouts at once.
    Batch(Strategy, u32),
    /// The tab loses its memory and resumes from localStorage.
    ReloadTab,
    /// The next request is lost.
    DropNextRequest,
    /// The next response is lost.
    DropNextResponse,
    /// A buggy page sends another cart under the pending checkout's key (the store answers 422).
    ReuseKeyOtherCart,
    /// PayCo declines the next charge: the work fails and the server's error policy applies.
    DeclineNextCharge,
    /// New network settings.
    Network(NetworkSettings),
    /// New server settings.
    Server(ServerSettings),
}

/// A command and the virtual time it was applied at.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Virtual milliseconds.
    pub at: u64,
    /// Events the world had run when it was applied (a tick may stop between two events due
    /// at the same millisecond, so time alone does not place a command).
    pub after_events: u64,
    /// What happened.
    pub command: Command,
}

/// Everything needed to rebuild the world.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunLog {
    /// Format version ([`VERSION`]).
    pub version: u32,
    /// The world's seed.
    pub seed: u64,
    /// The strategy selected when the page went away.
    pub strategy: Strategy,
    /// Network settings at time 0.
    pub network: NetworkSettings,
    /// Server settings at time 0.
    pub server: ServerSettings,
    /// Commands in the order applied (times never decrease).
    pub entries: Vec<Entry>,
    /// Virtual time reached when the log was last saved.
    pub now: u64,
    /// Events run when the log was last saved.
    pub events: u64,
    /// The classroom scenario the world was built from (`<id>` or `<id>_fix`, see
    /// `model::scenario::pick`); its config and script replace the settings' world.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
}

impl RunLog {
    /// A new run with no commands.
    pub fn new(
        seed: u64,
        strategy: Strategy,
        network: NetworkSettings,
        server: ServerSettings,
    ) -> Self {
        Self {
            version: VERSION,
            seed,
            strategy,
            network,
            server,
            entries: Vec::new(),
            now: 0,
            events: 0,
            scenario: None,
        }
    }

    /// Append `command`, applied at `at` after `after_events` events; a time before the last
    /// entry is clamped to it.
    pub fn push(&mut self, at: u64, after_events: u64, command: Command) {
        let at = at.max(self.entries.last().map_or(0, |e| e.at));
        self.now = self.now.max(at);
        self.events = self.events.max(after_events);
        self.entries.push(Entry {
            at,
            after_events,
            command,
        });
    }

    /// Record how far the world got (saved when the page goes away).
    pub fn reached(&mut self, now: u64, events: u64) {
        self.now = self.now.max(now);
        self.events = self.events.max(events);
    }

    /// The log as stored.
    pub fn encode(&self) -> String {
        // Serializing plain data with no maps keyed by non-strings cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A stored log, or `None` when it is absent, corrupt or another version.
    pub fn decode(text: &str) -> Option<RunLog> {
        let log: RunLog = serde_json::from_str(text).ok()?;
        let ordered = log
            .entries
            .windows(2)
            .all(|w| w[0].at <= w[1].at && w[0].after_events <= w[1].after_events);
        (log.version == VERSION && ordered).then_some(log)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::settings::Settings;

    fn log() -> RunLog {
        let s = Settings::default();
        RunLog::new(7, Strategy::SameKey, s.network(), s.server())
    }

    #[test]
    fn round_trips() {
        let mut l = log();
        l.push(10, 3, Command::Pay(Strategy::SameKey));
        l.push(5, 4, Command::ReloadTab);
        l.reached(900, 40);
        let back = RunLog::decode(&l.encode()).unwrap();
        assert_eq!(back, l);
        assert_eq!(back.entries[1].at, 10, "times never go backwards");
        assert_eq!((back.now, back.events), (900, 40));
    }

    #[test]
    fn corrupt_or_foreign_logs_are_ignored() {
        assert_eq!(RunLog::decode("{"), None);
        assert_eq!(RunLog::decode("null"), None);
        let mut l = log();
        l.version = 99;
        assert_eq!(RunLog::decode(&l.encode()), None);
    }
}
