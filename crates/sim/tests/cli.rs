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
fn help_and_errors_list_the_preset_table_and_the_bug_list() {
    let help = String::from_utf8_lossy(&lab(&["--help"]).stdout).into_owned();
    let short = String::from_utf8_lossy(&lab(&["-h"]).stdout).into_owned();
    let preset_error = String::from_utf8_lossy(&lab(&["--preset", "stormy"]).stderr).into_owned();
    let bug_error = String::from_utf8_lossy(&lab(&["--bug", "nope"]).stderr).into_owned();
    for p in &idem_sim::presets::PRESETS {
        assert!(help.contains(&format!("{}: {}", p.name, p.about)), "{help}");
        assert!(short.contains(p.name), "{short}");
        assert!(preset_error.contains(p.name), "{preset_error}");
    }
    for b in idem_sim::Bug::ALL {
        assert!(
            help.contains(&format!("{}: {}", b.name(), b.about())),
            "{help}"
        );
        assert!(short.contains(b.name()), "{short}");
        assert!(bug_error.contains(b.name()), "{bug_error}");
    }
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

/// Every `reproduce:` line of `out`'s stdout, as printed.
fn reproduce_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_once("reproduce: ").map(|(_, cmd)| cmd.to_owned()))
        .collect()
}

/// Run a printed command as printed, through the shell, with the binary this test built in
/// place of its `cargo run --release -p idem-sim --bin idem-lab --` prefix (a release build
/// inside a test would take minutes; the arguments are the printed ones, shell quoting and all).
fn run_printed(cmd: &str) -> Output {
    let prefix = idem_sim::lab::table::COMMAND_PREFIX;
    let args = cmd
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("{cmd} does not start with {prefix}"));
    Command::new("sh")
        .arg("-c")
        .arg(format!("\"$0\"{args}"))
        .arg(env!("CARGO_BIN_EXE_idem-lab"))
        .output()
        .expect("sh runs")
}

#[test]
fn a_config_runs_reproduce_line_reproduces_it() {
    let dir = std::env::temp_dir().join(format!("idem cli {}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("crashy mix.json");
    // Crashes and short leases under a bug: every strategy's run has violations, and the
    // verdicts depend on the file (the lesson preset at these seeds gives other ones).
    std::fs::write(
        &file,
        r#"{"faults": {"crash_after_charge": 0.3, "drop_response": 0.2, "decline": 0.1},
            "server": {"lock_ms": 300, "on_error": "save-response"},
            "bugs": ["two-step-write"]}"#,
    )
    .unwrap();
    let path = file.to_str().unwrap();
    let first = lab(&["--config", path, "--seed", "4", "--orders", "40"]);
    assert!(first.status.success());
    let lines = reproduce_lines(&first);
    assert!(
        !lines.is_empty(),
        "{}",
        String::from_utf8_lossy(&first.stdout)
    );
    let cmd = &lines[0];
    assert!(
        cmd.contains("--config '") && cmd.contains("--seed 4 --orders 40"),
        "{cmd}"
    );
    let again = run_printed(cmd);
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    // Same table, same verdicts, same reproduce lines.
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        String::from_utf8_lossy(&first.stdout)
    );
    // The line needs its config: without it the same seed gives another run.
    let without = cmd.replace(
        &format!("--config {}", idem_sim::lab::table::shell_word(path)),
        "",
    );
    let other = run_printed(&without);
    assert_ne!(other.stdout, first.stdout);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_failing_sweep_seeds_reproduce_line_reproduces_it() {
    let first = lab(&[
        "sweep",
        "--seeds",
        "30",
        "--orders",
        "60",
        "--bug",
        "decline-before-lookup",
    ]);
    let lines = reproduce_lines(&first);
    assert!(
        !lines.is_empty(),
        "{}",
        String::from_utf8_lossy(&first.stdout)
    );
    let stdout = String::from_utf8_lossy(&first.stdout).into_owned();
    let failing = stdout.lines().find(|l| l.contains("reproduce: ")).unwrap();
    let again = run_printed(&lines[0]);
    let again = String::from_utf8_lossy(&again.stdout).into_owned();
    assert!(
        again.lines().any(|l| l == failing),
        "{failing}\nvs\n{again}"
    );
}

fn write_export(name: &str, export: &idem_sim::HistoryExport) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("idem-{name}-{}.json", std::process::id()));
    std::fs::write(&path, serde_json::to_string(export).unwrap()).unwrap();
    path
}

#[test]
fn replay_exits_non_zero_when_the_run_breaks_an_invariant() {
    use idem_sim::{presets, Bug, World};
    let mut clean = presets::preset("lesson").unwrap();
    clean.workload.orders = 30;
    let mut broken = clean.clone();
    broken.bugs.push(Bug::KeyOnlyAtTopHop);
    broken.faults.crash_after_charge = 0.5;
    for (name, config, ok) in [("clean", clean, true), ("broken", broken, false)] {
        let mut w = World::new(config);
        w.finish();
        assert_eq!(w.verdict().is_clean(), ok);
        let path = write_export(name, &w.export());
        let out = lab(&["replay", path.to_str().unwrap()]);
        std::fs::remove_file(&path).ok();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("identical history"), "{text}");
        assert_eq!(out.status.success(), ok, "{name}: {text}");
        if !ok {
            assert_eq!(out.status.code(), Some(1));
            let broken = text.lines().find(|l| l.starts_with("invariants broken: "));
            let broken = broken.unwrap_or_else(|| panic!("{text}"));
            assert!(broken.contains("double-charge") && broken.contains("answer-disagrees"));
            assert_eq!(broken.matches("double-charge").count(), 1, "each kind once");
        }
    }
}

#[test]
fn replay_validates_recorded_inputs_like_a_config() {
    use idem_sim::{Command as Cmd, Faults, World};
    let mut w = World::new(idem_sim::SimConfig::default());
    w.run_until(100);
    w.set_faults(Faults {
        drop_response: 0.1,
        ..Faults::default()
    });
    w.finish();
    let good = w.export();
    for (what, needle) in [
        (
            "latency",
            "inputs[0]: faults.latency_ms is longer than a year",
        ),
        (
            "probability",
            "inputs[0]: faults.decline must be a probability",
        ),
        ("time", "inputs[0].at is later than a year"),
        ("delay", "inputs[0]: resend.after_ms is longer than a year"),
    ] {
        let mut bad = good.clone();
        match what {
            "latency" => {
                bad.inputs[0].command = Cmd::SetFaults(Faults {
                    latency_ms: u64::MAX,
                    ..Faults::default()
                })
            }
            "probability" => {
                bad.inputs[0].command = Cmd::SetFaults(Faults {
                    decline: 7.0,
                    ..Faults::default()
                })
            }
            "delay" => {
                bad.inputs[0].command = Cmd::Resend {
                    checkout: idem_sim::CheckoutId(0),
                    other_cart: true,
                    after_ms: u64::MAX,
                }
            }
            _ => bad.inputs[0].at = u64::MAX - 5,
        }
        assert!(World::replay(&bad).is_err(), "{what}");
        let path = write_export(what, &bad);
        fails_cleanly(&lab(&["replay", path.to_str().unwrap()]), needle);
        std::fs::remove_file(&path).ok();
    }
}
