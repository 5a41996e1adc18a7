//! The binary: the lab table's shape, and bad input as a clear error with a non-zero exit.
#![cfg(not(target_arch = "wasm32"))]

use std::process::{Command, Output};

fn lab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_idem-lab"))
        .args(args)
        .output()
        .expect("idem-lab runs")
}

fn fails_cleanly(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "should fail: {err}");
    assert_ne!(out.status.code(), Some(101), "a panic, not an error: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(err.contains(needle), "{err}");
}

#[test]
fn table_json_has_the_shape() {
    let out = lab(&["--seed", "1", "--orders", "100", "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows[0]["double_charged"].as_u64().unwrap() > 0);
    assert!(rows[1]["double_charged"].as_u64().unwrap() > 0);
    assert_eq!(rows[2]["double_charged"].as_u64().unwrap(), 0);
    let text = lab(&["--seed", "1", "--orders", "100"]);
    assert!(String::from_utf8_lossy(&text.stdout).contains("same-key"));
}

#[test]
fn unknown_preset_is_an_error() {
    fails_cleanly(&lab(&["--preset", "stormy"]), "unknown preset `stormy`");
}

#[test]
fn unknown_bug_is_an_error() {
    fails_cleanly(&lab(&["--bug", "off-by-one"]), "unknown bug `off-by-one`");
    fails_cleanly(
        &lab(&["sweep", "--seeds", "1", "--bug", "nope"]),
        "unknown bug `nope`",
    );
}

#[test]
fn malformed_config_is_an_error() {
    let dir = std::env::temp_dir();
    let bad = dir.join(format!("idem-bad-config-{}.json", std::process::id()));
    std::fs::write(&bad, "{\"faults\": {\"drop_request\": ").unwrap();
    fails_cleanly(&lab(&["--config", bad.to_str().unwrap()]), "invalid config");
    std::fs::write(&bad, "{\"faults\": {\"drop_everything\": 1}}").unwrap();
    fails_cleanly(&lab(&["--config", bad.to_str().unwrap()]), "unknown field");
    // Well-formed JSON the world cannot run with: a panic in the generator or an overflow of
    // virtual time without validation.
    std::fs::write(&bad, "{\"faults\": {\"latency_ms\": 18446744073709551615}}").unwrap();
    fails_cleanly(
        &lab(&["--config", bad.to_str().unwrap()]),
        "faults.latency_ms is longer than a year",
    );
    std::fs::remove_file(&bad).ok();
    fails_cleanly(
        &lab(&["--config", "/nonexistent/idem.json"]),
        "cannot read config",
    );
    fails_cleanly(
        &lab(&["replay", "/nonexistent/history.json"]),
        "cannot read",
    );
}

#[test]
fn a_config_file_runs() {
    let dir = std::env::temp_dir();
    let good = dir.join(format!("idem-good-config-{}.json", std::process::id()));
    std::fs::write(
        &good,
        r#"{"seed": 3, "workload": {"orders": 20}, "faults": {"drop_response": 0.3}}"#,
    )
    .unwrap();
    let out = lab(&["--config", good.to_str().unwrap(), "--json"]);
    std::fs::remove_file(&good).ok();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["seed"], 3);
}
