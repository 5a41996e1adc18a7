//! Swarm testing: each seed draws its own fault rates (TigerBeetle's simulator does the same),
//! so one sweep covers calm runs, lossy ones, crashy ones and everything between.

use serde::{Deserialize, Serialize};

use crate::bug::Bug;
use crate::checker::Verdict;
use crate::config::{ErrorPolicy, Faults, HistoryDetail, SimConfig, Strategy};
use crate::counters::Counters;
use crate::network::NetStats;
use crate::rng::SimRng;
use crate::world::World;

/// The ranges the swarm draws from, per seed (the sim README lists the same table).
///
/// Each fault probability is switched off in a quarter of the seeds (swarm testing: leaving a
/// fault out is a mix of its own) and otherwise drawn uniformly from its range.
pub mod ranges {
    /// Request loss.
    pub const DROP_REQUEST: (f64, f64) = (0.0, 0.3);
    /// Response loss.
    pub const DROP_RESPONSE: (f64, f64) = (0.0, 0.3);
    /// Duplicate delivery.
    pub const DUPLICATE: (f64, f64) = (0.0, 0.5);
    /// One-way latency, ms (always on).
    pub const LATENCY_MS: (u64, u64) = (1, 50);
    /// Jitter, ms (always on; 0 is a draw like any other).
    pub const JITTER_MS: (u64, u64) = (0, 500);
    /// Worker crash after the charge.
    pub const CRASH_AFTER_CHARGE: (f64, f64) = (0.0, 0.2);
    /// Slow worker (outlives its lease).
    pub const SLOW_WORKER: (f64, f64) = (0.0, 0.2);
    /// Tab reload.
    pub const TAB_RELOAD: (f64, f64) = (0.0, 0.2);
    /// Buggy page reusing the key for another cart.
    pub const REUSE_KEY_OTHER_CART: (f64, f64) = (0.0, 0.1);
    /// PayCo declines.
    pub const DECLINE: (f64, f64) = (0.0, 0.2);
    /// PayCo call timing out for the worker.
    pub const PAYCO_TIMEOUT: (f64, f64) = (0.0, 0.1);
    /// The outbox's relay dying between the consumer's acknowledgement and its mark.
    pub const RELAY_CRASH_AFTER_SEND: (f64, f64) = (0.0, 0.3);
    /// The receipts consumer dying between its effect and its acknowledgement.
    pub const CONSUMER_CRASH_AFTER_EFFECT: (f64, f64) = (0.0, 0.3);
    /// A relay delivery reaching the consumer twice.
    pub const DUPLICATE_DELIVERY: (f64, f64) = (0.0, 0.3);
    /// A relay delivery held back, overtaken by later ones.
    pub const REORDER_DELIVERY: (f64, f64) = (0.0, 0.3);
    /// Probability a fault probability is switched on at all in a seed.
    pub const FAULT_ON: f64 = 0.75;
    /// The store's `lock_ms`: short enough that crashed and slow workers' claims go stale
    /// (and are taken over) within a client's retries in most seeds.
    pub const LOCK_MS: (u64, u64) = (100, 1_500);
    /// Probability the seed's error policy is `save-response` (else `release-claim`).
    pub const SAVE_RESPONSE: f64 = 0.5;
    /// Probability the seed's server runs the expired-key guard.
    pub const EXPIRED_KEY_GUARD: f64 = 0.5;
}

/// The config seed `seed` runs under: every fault of [`Faults`], the store's `lock_ms`, both
/// error policies and the expired-key guard on or off drawn from [`ranges`], from a stream of their own (so the draw does not
/// shift the world's stream). The struct literal names every field: a fault added to
/// [`Faults`] does not compile here until the swarm draws it.
pub fn swarm_config(seed: u64, orders: u32, bugs: &[Bug]) -> SimConfig {
    let mut r = SimRng::new(seed ^ 0x5eed_5eed_5eed_5eed);
    let mut p = |(lo, hi): (f64, f64)| {
        if r.chance(ranges::FAULT_ON) {
            r.fraction(lo, hi)
        } else {
            0.0
        }
    };
    let drop_request = p(ranges::DROP_REQUEST);
    let drop_response = p(ranges::DROP_RESPONSE);
    let duplicate = p(ranges::DUPLICATE);
    let crash_after_charge = p(ranges::CRASH_AFTER_CHARGE);
    let slow_worker = p(ranges::SLOW_WORKER);
    let tab_reload = p(ranges::TAB_RELOAD);
    let reuse_key_other_cart = p(ranges::REUSE_KEY_OTHER_CART);
    let decline = p(ranges::DECLINE);
    let payco_timeout = p(ranges::PAYCO_TIMEOUT);
    let faults = Faults {
        // Placeholders, drawn below after the others (so each seed's earlier draws are what
        // they were before the outbox existed).
        relay_crash_after_send: 0.0,
        consumer_crash_after_effect: 0.0,
        duplicate_delivery: 0.0,
        reorder_delivery: 0.0,
        drop_request,
        drop_response,
        duplicate,
        latency_ms: r.between(ranges::LATENCY_MS.0, ranges::LATENCY_MS.1),
        jitter_ms: r.between(ranges::JITTER_MS.0, ranges::JITTER_MS.1),
        crash_after_charge,
        slow_worker,
        tab_reload,
        reuse_key_other_cart,
        decline,
        payco_timeout,
    };
    let mut config = SimConfig {
        seed,
        faults,
        bugs: bugs.to_vec(),
        history: HistoryDetail::Outcomes,
        ..SimConfig::default()
    };
    config.server.lock_ms = r.between(ranges::LOCK_MS.0, ranges::LOCK_MS.1);
    config.server.on_error = if r.chance(ranges::SAVE_RESPONSE) {
        ErrorPolicy::SaveResponse
    } else {
        ErrorPolicy::ReleaseClaim
    };
    // Drawn after the others, so each seed's earlier draws are what they were before it.
    config.server.expired_key_guard = r.chance(ranges::EXPIRED_KEY_GUARD);
    // The outbox's faults, drawn last for the same reason.
    let mut p = |(lo, hi): (f64, f64)| {
        if r.chance(ranges::FAULT_ON) {
            r.fraction(lo, hi)
        } else {
            0.0
        }
    };
    config.faults.relay_crash_after_send = p(ranges::RELAY_CRASH_AFTER_SEND);
    config.faults.consumer_crash_after_effect = p(ranges::CONSUMER_CRASH_AFTER_EFFECT);
    config.faults.duplicate_delivery = p(ranges::DUPLICATE_DELIVERY);
    config.faults.reorder_delivery = p(ranges::REORDER_DELIVERY);
    config.workload.orders = orders;
    config.workload.strategy = Strategy::SameKey;
    config
}

pub use crate::reproduce::sweep_command;

/// Run one sweep seed to its verdict.
pub fn run_seed(seed: u64, orders: u32, bugs: &[Bug]) -> Verdict {
    run_seed_world(seed, orders, bugs).0
}

/// Run one sweep seed; the verdict and the finished world.
pub fn run_seed_world(seed: u64, orders: u32, bugs: &[Bug]) -> (Verdict, World) {
    let mut world = World::new(swarm_config(seed, orders, bugs));
    world.set_reproduce(sweep_command(seed, orders, bugs));
    (world.finish(), world)
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
    /// What the worlds did, summed over every seed run (PayCo's dedupes included).
    pub totals: Counters,
    /// Requests and responses the networks lost, and requests they duplicated, summed.
    pub net: NetStats,
    /// Seeds in which at least one stale claim was taken over.
    pub seeds_with_takeovers: u64,
    /// Seeds run under `save-response` (the others ran under `release-claim`).
    pub seeds_save_response: u64,
}

/// Run `seeds` seeds starting at `first`; stop early after `stop_after` failing seeds.
pub fn sweep(first: u64, seeds: u64, orders: u32, bugs: &[Bug], stop_after: usize) -> SweepReport {
    let mut report = SweepReport {
        orders,
        ..SweepReport::default()
    };
    for seed in first..first.saturating_add(seeds) {
        let (v, world) = run_seed_world(seed, orders, bugs);
        report.seeds += 1;
        let counters = world.counters();
        report.totals.add(&counters);
        let net = world.net_stats();
        report.net.requests_dropped += net.requests_dropped;
        report.net.responses_dropped += net.responses_dropped;
        report.net.duplicated += net.duplicated;
        report.seeds_with_takeovers += u64::from(counters.takeovers > 0);
        report.seeds_save_response +=
            u64::from(world.config().server.on_error == ErrorPolicy::SaveResponse);
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
