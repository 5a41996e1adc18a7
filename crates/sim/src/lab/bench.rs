//! The benchmark: simulated checkouts per second with faults on, and the same run's store
//! operations replayed alone on a fresh store, in one process, so the ratio says what the
//! simulation costs on top of the store. Native only (it reads the wall clock).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use idem_store::{ErrorPolicy, Lease, RecordId, RouteConfig, SavedResponse, Store, StoreConfig};
use serde::{Deserialize, Serialize};

use crate::config::{HistoryDetail, Strategy};
use crate::presets::preset;
use crate::world::{body_for, StoreOp, World, SCOPE};

/// What the benchmark measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchReport {
    /// Checkouts simulated.
    pub checkouts: u64,
    /// Wall time of the simulation, seconds.
    pub sim_secs: f64,
    /// Store operations the simulation performed (begins and commits).
    pub store_ops: u64,
    /// Wall time of those operations replayed alone, seconds.
    pub store_secs: f64,
    /// Simulated checkouts per second.
    pub checkouts_per_sec: f64,
    /// sim time / bare store time.
    pub ratio: f64,
    /// Double charges seen (must be 0).
    pub double_charged: u64,
}

fn replay_store(ops: &[StoreOp], config: StoreConfig) -> Duration {
    let route = RouteConfig::optional(crate::world::OPERATION, ErrorPolicy::ReleaseClaim);
    let started = Instant::now();
    let mut store = Store::new(config);
    let mut held: BTreeMap<uuid::Uuid, (RecordId, Lease)> = BTreeMap::new();
    let mut buf = [0u8; 36];
    for op in ops {
        match *op {
            StoreOp::Begin {
                at,
                checkout,
                amount,
                key,
            } => {
                let body = body_for(checkout, amount);
                let k = key.hyphenated().encode_lower(&mut buf);
                if let idem_store::Begin::Execute { id, lease, .. } =
                    store.begin(at, SCOPE, Some(k), &body, &route)
                {
                    held.insert(key, (id, lease));
                }
            }
            StoreOp::Commit { at, key } => {
                if let Some((id, lease)) = held.remove(&key) {
                    let body = idem_checkout::Receipt::paid(1, "ch_1", 1, at).to_body();
                    let _ = store.commit(at, &id, &lease, || ((), SavedResponse::json(201, body)));
                }
            }
        }
    }
    std::hint::black_box(&store);
    started.elapsed()
}

/// Simulate `checkouts` same-key checkouts under the `lesson` preset, in worlds of `batch`
/// checkouts each (seeds 1, 2, ...), then replay each world's store operations alone.
pub fn run_bench(checkouts: u64, batch: u32) -> BenchReport {
    let mut sim = Duration::ZERO;
    let mut bare = Duration::ZERO;
    let mut ops_total = 0u64;
    let mut double = 0;
    let mut done = 0u64;
    let mut seed = 1;
    while done < checkouts {
        let n = (checkouts - done).min(u64::from(batch)) as u32;
        let mut config = preset("lesson").unwrap_or_default();
        config.seed = seed;
        config.workload.orders = n;
        config.workload.strategy = Strategy::SameKey;
        config.history = HistoryDetail::Outcomes;
        let mut world = World::new(config);
        world.record_store_ops();
        let started = Instant::now();
        world.run();
        sim += started.elapsed();
        double += world.double_charged();
        let ops = world.take_trace();
        ops_total += ops.len() as u64;
        let store_config = *world.store().config();
        drop(world);
        bare += replay_store(&ops, store_config);
        done += u64::from(n);
        seed += 1;
    }
    let sim_secs = sim.as_secs_f64();
    let store_secs = bare.as_secs_f64();
    BenchReport {
        checkouts,
        sim_secs,
        store_ops: ops_total,
        store_secs,
        checkouts_per_sec: checkouts as f64 / sim_secs.max(1e-9),
        ratio: sim_secs / store_secs.max(1e-9),
        double_charged: double,
    }
}

impl BenchReport {
    /// The report as text.
    pub fn render(&self) -> String {
        format!(
            "simulated checkouts (lesson faults, same-key): {}\n\
             simulation:        {:.2} s  ({:.0} checkouts/s)\n\
             bare store ops:    {} ops in {:.2} s\n\
             ratio sim / store: {:.2}x\n\
             double-charged:    {}\n",
            self.checkouts,
            self.sim_secs,
            self.checkouts_per_sec,
            self.store_ops,
            self.store_secs,
            self.ratio,
            self.double_charged
        )
    }
}
