//! The `idem-check` command as a CI job runs it: a configuration file, the report on stdout,
//! JSON and JUnit XML files, and the exit status (0 only when every counted case passed, 1
//! when one failed, 2 when the run could not start).

mod servers;

use std::{path::Path, process::Output};

use servers::Ledger;

async fn idem_check(dir: &Path, config: &idem_check::config::Config, extra: &[&str]) -> Output {
    let file = dir.join("check.json");
    std::fs::write(&file, serde_json::to_vec_pretty(config).unwrap()).unwrap();
    tokio::process::Command::new(env!("CARGO_BIN_EXE_idem-check"))
        .arg("--config")
        .arg(&file)
        .args(extra)
        .output()
        .await
        .expect("run idem-check")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_server_exits_1_with_the_failures_in_every_report() {
    let dir = tempfile::tempdir().unwrap();
    let base = servers::spawn(servers::forgetful(Ledger::default())).await;
    let (json, junit) = (dir.path().join("r.json"), dir.path().join("r.xml"));
    let out = idem_check(
        dir.path(),
        &servers::config(&base, 21),
        &[
            "--no-chaos",
            "--json",
            json.to_str().unwrap(),
            "--junit",
            junit.to_str().unwrap(),
        ],
    )
    .await;
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{table}");
    assert!(
        table.contains("FAIL") && table.contains("repeat-replayed"),
        "{table}"
    );
    assert!(table.contains("rerun: idem-check --config"), "{table}");
    assert!(table.contains("--seed 21"), "{table}");
    let report: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(report["passed"], false);
    let replay = report["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "repeat-replayed")
        .unwrap();
    assert_eq!(replay["result"], "fail");
    assert_eq!(replay["basis"], "needed-by-sdk");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("<failure"), "{xml}");
    assert!(
        xml.contains("name=\"chaos-at-most-once\"><skipped"),
        "{xml}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passing_server_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let base = servers::spawn(servers::with_idem(Ledger::default(), dir.path()).await).await;
    let out = idem_check(dir.path(), &servers::config(&base, 22), &["--quiet"]).await;
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{table}");
    assert!(table.contains("PASS:"), "{table}");
}

#[tokio::test]
async fn a_bad_configuration_exits_2_naming_what_is_wrong() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.json");
    std::fs::write(
        &file,
        r#"{"target": "http://127.0.0.1:1", "request": {"path": "/", "methd": "POST"}}"#,
    )
    .unwrap();
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_idem-check"))
        .arg("--config")
        .arg(&file)
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("methd"));
    let missing = tokio::process::Command::new(env!("CARGO_BIN_EXE_idem-check"))
        .args(["--config", "/nonexistent/check.json"])
        .output()
        .await
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
}

#[tokio::test]
async fn help_lists_every_option_with_its_default() {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_idem-check"))
        .arg("--help")
        .output()
        .await
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for option in [
        "--config",
        "--target",
        "--seed",
        "--operations",
        "--concurrency",
        "--no-chaos",
        "--json",
        "--junit",
        "--log",
        "--quiet",
    ] {
        assert!(help.contains(option), "{option} missing from:\n{help}");
    }
    assert!(
        help.contains("else 40") && help.contains("else 4"),
        "{help}"
    );
}
