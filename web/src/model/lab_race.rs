//! The side-by-side lab: the same seed, faults and orders run three times, once per strategy,
//! in chunks the page spreads over animation ticks (no long task). The finished rows are
//! `idem-lab`'s lesson table for the same config, number for number (see the test below).

use idem_sim::lab::table::LabCounts;
use idem_sim::{HistoryDetail, SimConfig, Strategy as SimStrategy, World};

use super::settings::Strategy;

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

fn sim(s: Strategy) -> SimStrategy {
    match s {
        Strategy::NoKey => SimStrategy::NoKey,
        Strategy::KeyPerTry => SimStrategy::KeyPerAttempt,
        Strategy::SameKey => SimStrategy::SameKey,
    }
}

impl Race {
    /// Three worlds for `base` (its `workload.orders` checkouts each), as `idem-lab` builds
    /// them: the strategy set per world, outcomes-only history.
    pub fn new(base: &SimConfig) -> Race {
        let worlds = Strategy::ALL
            .iter()
            .map(|&s| {
                let mut config = base.clone();
                config.workload.strategy = sim(s);
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

#[cfg(test)]
mod tests {
    use super::*;
    use idem_sim::lab::table::run_table;
    use idem_sim::Faults;

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
                assert_eq!(sim(*s), t.strategy);
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
