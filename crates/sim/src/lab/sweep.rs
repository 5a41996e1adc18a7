//! Swarm testing: each seed draws its own fault rates (TigerBeetle's simulator does the same),
//! so one sweep covers calm runs, lossy ones, crashy ones and everything between.

use serde::{Deserialize, Serialize};

use crate::bug::Bug;
use crate::checker::Verdict;
use crate::config::{Faults, HistoryDetail, SimConfig, Strategy};
use crate::rng::SimRng;
use crate::world::World;

/// The config seed `seed` runs under: rates drawn from a stream of their own, so the draw does
/// not shift the world's stream. Request and response loss 0–30 %, duplication 0–50 %, crashes
/// and slow workers 0–20 %, jitter 0–500 ms, tab reloads 0–20 %, other-cart pages 0–10 %.
pub fn swarm_config(seed: u64, orders: u32, bugs: &[Bug]) -> SimConfig {
    let mut r = SimRng::new(seed ^ 0x5eed_5eed_5eed_5eed);
    let faults = Faults {
        drop_request: r.fraction(0.0, 0.3),
        drop_response: r.fraction(0.0, 0.3),
        duplicate: r.fraction(0.0, 0.5),
        latency_ms: r.between(1, 50),
        jitter_ms: r.upto(500),
        crash_after_charge: r.fraction(0.0, 0.2),
        slow_worker: r.fraction(0.0, 0.2),
        tab_reload: r.fraction(0.0, 0.2),
        reuse_key_other_cart: r.fraction(0.0, 0.1),
        decline: 0.0,
    };
    let mut config = SimConfig {
        seed,
        faults,
        bugs: bugs.to_vec(),
        history: HistoryDetail::Outcomes,
        ..SimConfig::default()
    };
    config.workload.orders = orders;
    config.workload.strategy = Strategy::SameKey;
    config
}

/// The command line that reproduces one sweep seed.
pub fn sweep_command(seed: u64, orders: u32, bugs: &[Bug]) -> String {
    let mut cmd = format!(
        "cargo run --release -p idem-sim --bin idem-lab -- sweep --first-seed {seed} --seeds 1 --orders {orders}"
    );
    for b in bugs {
        cmd.push_str(" --bug ");
        cmd.push_str(b.name());
    }
    cmd
}

/// Run one sweep seed to its verdict.
pub fn run_seed(seed: u64, orders: u32, bugs: &[Bug]) -> Verdict {
    let mut world = World::new(swarm_config(seed, orders, bugs));
    world.set_reproduce(sweep_command(seed, orders, bugs));
    world.finish()
}

/// A sweep's result.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SweepReport {
    /// Seeds run.
    pub seeds: u64,
    /// Checkouts per seed.
    pub orders: u32,
    /// Verdicts with at least one violation.
    pub failures: Vec<Verdict>,
    /// Unknown outcomes reported across all seeds.
    pub unknown: u64,
    /// Unknown outcomes still unresolved after reconciliation.
    pub unresolved: u64,
}

/// Run `seeds` seeds starting at `first`; stop early after `stop_after` failing seeds.
pub fn sweep(first: u64, seeds: u64, orders: u32, bugs: &[Bug], stop_after: usize) -> SweepReport {
    let mut report = SweepReport {
        orders,
        ..SweepReport::default()
    };
    for seed in first..first.saturating_add(seeds) {
        let v = run_seed(seed, orders, bugs);
        report.seeds += 1;
        report.unknown += v.unknown.len() as u64;
        report.unresolved += v.unresolved.len() as u64;
        if !v.is_clean() {
            report.failures.push(v);
            if report.failures.len() >= stop_after {
                break;
            }
        }
    }
    report
}
