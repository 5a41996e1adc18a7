//! The lesson's table: the same seed and faults, once per strategy.

use serde::{Deserialize, Serialize};

use crate::bug::Bug;
use crate::checker::Verdict;
use crate::config::{HistoryDetail, SimConfig, Strategy};
use crate::world::World;

/// What one run counts, the lesson table's columns. The page's live lab shows the same counts
/// while its worlds run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabCounts {
    /// Money movements at PayCo.
    pub charges: u64,
    /// Checkouts charged more than once.
    pub double_charged: u64,
    /// Requests sent.
    pub attempts: u64,
    /// 409 answers.
    pub conflicts: u64,
    /// 422 answers.
    pub mismatches: u64,
    /// Takeovers of stale claims.
    pub takeovers: u64,
    /// Fenced (refused) writes.
    pub fenced: u64,
    /// Checkouts whose page reported an unknown outcome.
    pub unknown: u64,
}

impl LabCounts {
    /// The counts of `world` so far.
    pub fn of(world: &World) -> LabCounts {
        let c = world.counters();
        LabCounts {
            charges: world.charges() as u64,
            double_charged: world.double_charged(),
            attempts: c.attempts,
            conflicts: c.conflicts,
            mismatches: c.mismatches,
            takeovers: c.takeovers,
            fenced: c.fenced,
            unknown: c.unknown,
        }
    }
}

/// One strategy's line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabRow {
    /// The strategy.
    pub strategy: Strategy,
    /// The run's counts (flattened: the JSON keeps one object per row).
    #[serde(flatten)]
    pub counts: LabCounts,
    /// The checker's verdict for this strategy's run.
    pub verdict: Verdict,
}

/// The whole table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabTable {
    /// The seed.
    pub seed: u64,
    /// Checkouts per strategy.
    pub orders: u32,
    /// The preset's name, if one was used.
    pub preset: Option<String>,
    /// Bugs switched on.
    pub bugs: Vec<Bug>,
    /// One line per strategy, in [`Strategy::ALL`] order.
    pub rows: Vec<LabRow>,
}

pub use crate::reproduce::{lab_command, shell_word, ConfigSource, COMMAND_PREFIX};

/// Run `base` once per strategy and tabulate.
pub fn run_table(base: &SimConfig, source: Option<&ConfigSource>) -> LabTable {
    let rows = Strategy::ALL
        .iter()
        .map(|&strategy| {
            let mut config = base.clone();
            config.workload.strategy = strategy;
            config.history = HistoryDetail::Outcomes;
            let mut world = World::new(config);
            world.set_reproduce(lab_command(base, source));
            let verdict = world.finish();
            LabRow {
                strategy,
                counts: LabCounts::of(&world),
                verdict,
            }
        })
        .collect();
    LabTable {
        seed: base.seed,
        orders: base.workload.orders,
        preset: match source {
            Some(ConfigSource::Preset(p)) => Some(p.clone()),
            _ => None,
        },
        bugs: base.bugs.clone(),
        rows,
    }
}

impl LabTable {
    /// The table as text, one line per strategy.
    pub fn render(&self) -> String {
        let mut out = format!(
            "seed {} · {} orders per strategy · preset {}{}\n",
            self.seed,
            self.orders,
            self.preset.as_deref().unwrap_or("(config)"),
            if self.bugs.is_empty() {
                String::new()
            } else {
                let names: Vec<&str> = self.bugs.iter().map(|b| b.name()).collect();
                format!(" · bugs: {}", names.join(", "))
            }
        );
        out.push_str(&format!(
            "{:<12} {:>8} {:>8} {:>9} {:>6} {:>6} {:>10} {:>7} {:>8}\n",
            "strategy",
            "charges",
            "double",
            "attempts",
            "409s",
            "422s",
            "takeovers",
            "fenced",
            "unknown"
        ));
        for r in &self.rows {
            let c = &r.counts;
            out.push_str(&format!(
                "{:<12} {:>8} {:>8} {:>9} {:>6} {:>6} {:>10} {:>7} {:>8}\n",
                r.strategy.name(),
                c.charges,
                c.double_charged,
                c.attempts,
                c.conflicts,
                c.mismatches,
                c.takeovers,
                c.fenced,
                c.unknown
            ));
        }
        for r in &self.rows {
            if r.verdict.is_clean() {
                continue;
            }
            let mut kinds: Vec<&str> = r.verdict.violations.iter().map(|v| v.name()).collect();
            kinds.dedup();
            out.push_str(&format!(
                "{}: {} violation(s) ({}); reproduce: {}\n",
                r.strategy.name(),
                r.verdict.violations.len(),
                kinds.join(", "),
                r.verdict.reproduce
            ));
        }
        out
    }

    /// The row for `strategy`.
    pub fn row(&self, strategy: Strategy) -> Option<&LabRow> {
        self.rows.iter().find(|r| r.strategy == strategy)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::presets::preset;

    #[test]
    fn lesson_table_at_seed_1_has_the_lessons_shape() {
        let mut config = preset("lesson").unwrap();
        config.workload.orders = 100;
        let table = run_table(&config, Some(&ConfigSource::Preset("lesson".into())));
        let no_key = table.row(Strategy::NoKey).unwrap();
        let per_try = table.row(Strategy::KeyPerAttempt).unwrap();
        let same = table.row(Strategy::SameKey).unwrap();
        assert!(no_key.counts.double_charged > 0, "{}", table.render());
        assert!(per_try.counts.double_charged > 0, "{}", table.render());
        assert_eq!(same.counts.double_charged, 0, "{}", table.render());
        assert_eq!(same.counts.charges, 100, "{}", table.render());
        assert!(no_key.counts.charges > 100 && per_try.counts.charges > 100);
        assert!(same.verdict.is_clean(), "{:?}", same.verdict);
        assert!(!no_key.verdict.is_clean());
        assert!(no_key
            .verdict
            .reproduce
            .contains(" --preset lesson --seed 1 --orders 100"));
    }

    #[test]
    fn shell_words_survive_the_shell() {
        assert_eq!(shell_word("runs/a-1.json"), "runs/a-1.json");
        assert_eq!(shell_word("my config.json"), "'my config.json'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
