//! Same seed and config → same history, byte for byte; and the hashes match the golden file
//! that the wasm32 test (tests/wasm.rs) checks too.
#![cfg(not(target_arch = "wasm32"))]

mod common;

use idem_sim::lab::sweep::swarm_config;
use idem_sim::{HistoryDetail, World};

#[test]
fn twenty_seeds_run_twice_give_identical_histories() {
    let mut hashes = Vec::new();
    for seed in 1..=20 {
        let mut config = swarm_config(seed, 100, &[]);
        config.history = HistoryDetail::Full;
        let run = || {
            let mut w = World::new(config.clone());
            w.finish();
            (w.history_hash(), w.history().attempts.len())
        };
        let (a, n) = run();
        let (b, _) = run();
        assert_eq!(a, b, "seed {seed} is not deterministic");
        assert!(n > 100, "seed {seed}: a history with attempts");
        hashes.push(a);
    }
    hashes.sort();
    hashes.dedup();
    assert_eq!(hashes.len(), 20, "different seeds, different histories");
}

#[test]
fn hashes_match_the_golden_file() {
    let lines = common::golden_lines();
    if std::env::var_os("IDEM_BLESS").is_some() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/golden/history-hashes.txt"
        );
        std::fs::write(path, &lines).unwrap();
    }
    assert_eq!(
        lines,
        common::GOLDEN,
        "history changed; if on purpose, regenerate with IDEM_BLESS=1 cargo test -p idem-sim --test determinism"
    );
}

#[test]
fn export_replays_to_the_same_hash() {
    let mut w = World::new(common::golden_config(7));
    w.run_until(500);
    w.drop_next_response();
    let c = w.start_checkout(idem_sim::Strategy::SameKey).unwrap();
    w.run_until(800);
    w.reload(c).unwrap();
    w.finish();
    let export = w.export();
    let json = serde_json::to_string(&export).unwrap();
    let back: idem_sim::HistoryExport = serde_json::from_str(&json).unwrap();
    let again = World::replay(&back).unwrap();
    assert_eq!(again.history_hash(), export.hash);
}
