//! The exported run: enough to re-run it (seed, config, inputs) and to compare the result
//! (history, verdict, hash), and [`World::replay`], which re-runs it. `idem-lab replay FILE`
//! reads this as JSON; the demo's "Export history" writes it.

use serde::{Deserialize, Serialize};

use super::{Command, Input, World};
use crate::checker::Verdict;
use crate::config::{SimConfig, MAX_DURATION_MS};
use crate::counters::Counters;
use crate::history::History;

/// The export format this version writes. Format 2: the history has messages and steps, and
/// its hash covers them (a format-1 export replays, but its hash differs).
pub const FORMAT: u32 = 2;

/// A run, exported: enough to re-run it (seed, config, interactive inputs) and to compare the
/// result (history, verdict, hash). `idem-lab replay` reads this.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryExport {
    /// Export format version ([`FORMAT`]).
    pub format: u32,
    /// The world's config, seed included.
    pub config: SimConfig,
    /// Interactive controls, in the order applied.
    pub inputs: Vec<Input>,
    /// Attempts and checkouts.
    pub history: History,
    /// PayCo's ledger.
    pub charges: Vec<crate::payco::Charge>,
    /// Totals.
    pub counters: Counters,
    /// The checker's verdict at export time.
    pub verdict: Verdict,
    /// [`World::history_hash`] at export time.
    pub hash: String,
    /// Whether [`World::finish`] had run (a replay runs it too).
    pub finished: bool,
    /// Events run at export time.
    pub events_run: u64,
}

impl HistoryExport {
    /// Refuse what a replay cannot run: the config and every recorded input are checked like
    /// a config file ([`SimConfig::validate`]: a recorded `SetFaults` with an absurd latency is
    /// an error, never an overflow), and no input may sit, or send later, past
    /// [`MAX_DURATION_MS`] of virtual time. Exports come from files and URLs.
    pub fn validate(&self) -> Result<(), crate::SimError> {
        self.config.validate()?;
        for (i, input) in self.inputs.iter().enumerate() {
            let at = |e: crate::SimError| {
                let why = match e {
                    crate::SimError::Config(why) => why,
                    other => other.to_string(),
                };
                crate::SimError::Config(format!("inputs[{i}]: {why}"))
            };
            if input.at > MAX_DURATION_MS {
                return Err(crate::SimError::Config(format!(
                    "inputs[{i}].at is later than a year of virtual time"
                )));
            }
            match &input.command {
                Command::SetFaults(f) => f.validate().map_err(at)?,
                Command::SetServer(s) => s.validate().map_err(at)?,
                Command::SetClient(c) => c.validate().map_err(at)?,
                Command::Resend { after_ms, .. } if *after_ms > MAX_DURATION_MS => {
                    return Err(crate::SimError::Config(format!(
                        "inputs[{i}]: resend.after_ms is longer than a year of virtual time"
                    )));
                }
                _ => {}
            }
        }
        Ok(())
    }
}

impl World {
    /// The run as an exportable value (serialize it with serde_json).
    pub fn export(&self) -> HistoryExport {
        HistoryExport {
            format: FORMAT,
            config: self.config.clone(),
            inputs: self.inputs.clone(),
            history: self.history.clone(),
            charges: self.payco.charges().to_vec(),
            counters: self.counters,
            verdict: self.verdict(),
            hash: self.history_hash(),
            finished: self.finished,
            events_run: self.events_run,
        }
    }

    /// Re-run an exported run: same seed and config, the same inputs at the same points,
    /// through [`World::replay_inputs`]. A host's journal is replaced by the world's memory
    /// journal. Compare [`World::history_hash`] with `export.hash`. An export that fails
    /// [`HistoryExport::validate`] is an error.
    pub fn replay(export: &HistoryExport) -> Result<World, crate::SimError> {
        export.validate()?;
        let mut world = World::new(export.config.clone());
        world.replay_inputs(&export.inputs, &mut ());
        if export.finished {
            world.finish();
        } else {
            while world.events_run < export.events_run && world.step() {}
        }
        Ok(world)
    }
}
