//! The side-by-side lab: the same seed, faults and orders run three times, once per strategy,
//! in chunks the page spreads over animation ticks (no long task). The finished rows are
//! `idem-lab`'s lesson table for the same config, number for number (see the test below).
//!
//! [`Race`] holds the three worlds (large, mutable, not `Clone`: the panel keeps it beside its
//! reducer, as the session keeps the page's world); [`Lab`] is the panel's state and reducer:
//! the orders field, the config run, the rows so far.

use std::rc::Rc;

use idem_sim::lab::table::LabCounts;
use idem_sim::{HistoryDetail, SimConfig, Strategy, World};
use yew::Reducible;

/// Orders per strategy unless the teacher types another number.
pub const DEFAULT_ORDERS: u32 = 100;
/// Most orders the lab runs per strategy.
pub const MAX_ORDERS: u32 = 5_000;

/// One strategy's line, live while it runs: idem-lab's counts so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RaceRow {
    /// The lesson table's columns.
    pub counts: LabCounts,
    /// The run has finished (end checks done).
    pub done: bool,
}

/// Three worlds, one per strategy.
pub struct Race {
    worlds: Vec<(Strategy, World)>,
    finished: [bool; 3],
}

impl Race {
    /// Three worlds for `base` (its `workload.orders` checkouts each), as `idem-lab` builds
    /// them: the strategy set per world, outcomes-only history.
    pub fn new(base: &SimConfig) -> Race {
        let worlds = Strategy::ALL
            .iter()
            .map(|&s| {
                let mut config = base.clone();
                config.workload.strategy = s;
                config.history = HistoryDetail::Outcomes;
                (s, World::new(config))
            })
            .collect();
        Race {
            worlds,
            finished: [false; 3],
        }
    }

    /// Run up to `events` events in each unfinished world; a world with nothing left runs its
    /// end checks. `true` when all three are done.
    pub fn run_for(&mut self, events: u32) -> bool {
        for (i, (_, w)) in self.worlds.iter_mut().enumerate() {
            if self.finished[i] {
                continue;
            }
            let mut left = events;
            while left > 0 && w.step() {
                left -= 1;
            }
            if left > 0 {
                w.finish();
                self.finished[i] = true;
            }
        }
        self.done()
    }

    /// All three have finished.
    pub fn done(&self) -> bool {
        self.finished.iter().all(|f| *f)
    }

    /// The rows, in [`Strategy::ALL`] order.
    pub fn rows(&self) -> Vec<(Strategy, RaceRow)> {
        self.worlds
            .iter()
            .zip(self.finished)
            .map(|((s, w), done)| {
                let counts = LabCounts::of(w);
                (*s, RaceRow { counts, done })
            })
            .collect()
    }
}

/// The lab panel's state.
#[derive(Clone, Debug, PartialEq)]
pub struct Lab {
    /// Orders per strategy (the last valid number typed).
    pub orders: u32,
    /// What the orders field holds.
    pub text: String,
    /// The `SimConfig` JSON the current run uses (`idem-lab --config FILE --json` runs it).
    pub config: String,
    /// Each strategy's line so far, in [`Strategy::ALL`] order.
    pub rows: Rc<Vec<(Strategy, RaceRow)>>,
    /// Bumped when a run starts (the panel's driver restarts with it).
    pub run: u32,
    /// The current run finished.
    pub done: bool,
}

impl Default for Lab {
    fn default() -> Self {
        Lab {
            orders: DEFAULT_ORDERS,
            text: DEFAULT_ORDERS.to_string(),
            config: String::new(),
            rows: Rc::default(),
            run: 0,
            done: false,
        }
    }
}

/// What the lab panel can do.
#[derive(Clone, Debug, PartialEq)]
pub enum LabAction {
    /// The user typed into the orders field (a number outside 1..=[`MAX_ORDERS`] keeps the
    /// last valid one).
    Orders(String),
    /// A run started with this config JSON, and these rows at zero.
    Started(String, Vec<(Strategy, RaceRow)>),
    /// The run's rows so far.
    Progress(Vec<(Strategy, RaceRow)>),
}

impl Reducible for Lab {
    type Action = LabAction;

    fn reduce(self: Rc<Self>, action: LabAction) -> Rc<Self> {
        let mut next = (*self).clone();
        match action {
            LabAction::Orders(text) => {
                next.orders = text
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=MAX_ORDERS).contains(n))
                    .unwrap_or(self.orders);
                next.text = text;
            }
            LabAction::Started(config, rows) => {
                next.config = config;
                next.rows = Rc::new(rows);
                next.run += 1;
                next.done = false;
            }
            LabAction::Progress(rows) => {
                next.done = rows.iter().all(|(_, r)| r.done);
                next.rows = Rc::new(rows);
            }
        }
        Rc::new(next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use idem_sim::lab::table::run_table;
    use idem_sim::Faults;

    #[test]
    fn the_reducer_keeps_the_last_valid_orders_and_tracks_a_run() {
        let lab = Rc::new(Lab::default());
        let lab = lab.reduce(LabAction::Orders("250".into()));
        assert_eq!((lab.orders, lab.text.as_str()), (250, "250"));
        let lab = lab.reduce(LabAction::Orders("0".into()));
        assert_eq!((lab.orders, lab.text.as_str()), (250, "0"));
        let lab = lab.reduce(LabAction::Orders("5001".into()));
        assert_eq!(lab.orders, 250);
        let mut config = SimConfig::default();
        config.workload.orders = 3;
        let mut race = Race::new(&config);
        let lab = lab.reduce(LabAction::Started("{}".into(), race.rows()));
        assert_eq!((lab.run, lab.done), (1, false));
        while !race.run_for(50) {}
        let lab = lab.reduce(LabAction::Progress(race.rows()));
        assert!(lab.done);
        assert_eq!(lab.rows.len(), 3);
    }

    /// The page's chunked lab gives idem-lab's table, for several seeds and fault mixes.
    #[test]
    fn the_chunked_lab_matches_idem_lab() {
        for (seed, loss, crash) in [(1, 0.3, 0.0), (7, 0.2, 0.1), (42, 0.0, 0.0)] {
            let mut base = SimConfig {
                seed,
                ..SimConfig::default()
            };
            base.workload.orders = 60;
            base.faults = Faults {
                drop_response: loss,
                drop_request: loss / 2.0,
                crash_after_charge: crash,
                ..Faults::default()
            };
            let mut race = Race::new(&base);
            let mut chunks = 0;
            while !race.run_for(37) {
                chunks += 1;
            }
            assert!(chunks > 3, "ran in several chunks");
            let table = run_table(&base, None);
            let rows = race.rows();
            for ((s, r), t) in rows.iter().zip(&table.rows) {
                assert_eq!(*s, t.strategy);
                assert_eq!(r.counts, t.counts, "seed {seed} {s:?}");
                assert!(r.done);
            }
            if loss > 0.0 {
                assert!(
                    rows[0].1.counts.double_charged > 0,
                    "no key double-charges at seed {seed}"
                );
                assert_eq!(rows[2].1.counts.double_charged, 0, "same key never does");
            }
        }
    }
}
