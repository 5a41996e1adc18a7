//! Shared by the native and wasm32 determinism tests.

use idem_sim::{presets, SimConfig, World};

/// The golden runs: the `chaos` preset (every fault on), 40 orders, full history.
pub fn golden_config(seed: u64) -> SimConfig {
    let mut c = presets::preset("chaos").expect("chaos is a preset");
    c.seed = seed;
    c.workload.orders = 40;
    c
}

/// `seed hash` lines for seeds 1..=3.
pub fn golden_lines() -> String {
    let mut out = String::new();
    for seed in 1..=3 {
        let mut w = World::new(golden_config(seed));
        w.finish();
        out.push_str(&format!("{seed} {}\n", w.history_hash()));
    }
    out
}

/// The checked-in file both the native and the wasm32 tests compare against.
pub const GOLDEN: &str = include_str!("../golden/history-hashes.txt");
