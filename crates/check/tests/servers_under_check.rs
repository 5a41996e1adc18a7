//! The tool against real HTTP servers: one built with idem-axum passes every case it is
//! configured for; each server with a classic bug fails the cases that bug breaks.

mod servers;

use std::time::Duration;

use idem_check::{
    config::Config,
    report::{Report, Verdict},
    Run,
};
use servers::Ledger;

async fn check(config: Config) -> Report {
    Run::quiet(config).run().await.expect("the run starts")
}

fn verdict<'r>(report: &'r Report, id: &str) -> &'r Verdict {
    &report
        .cases
        .iter()
        .find(|c| c.id == id)
        .unwrap_or_else(|| panic!("no case {id}"))
        .verdict
}

fn failed(report: &Report, id: &str) -> bool {
    matches!(verdict(report, id), Verdict::Fail { .. })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_built_with_idem_passes_every_configured_case() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::default();
    let base = servers::spawn(servers::with_idem(ledger.clone(), dir.path()).await).await;
    let mut config = servers::config(&base, 11);
    config.problem_json = true;
    config.origin = Some(servers::ORIGIN.to_owned());
    config.second_endpoint = Some(idem_check::config::Endpoint {
        path: "/pay/again".to_owned(),
        ..Default::default()
    });
    let report = check(config).await;
    assert!(report.not_passed().is_empty(), "{}", report.table());
}

/// The other ways a configuration can say things: a bare-token key, slowness armed by a
/// setup request, a run-wide setup request, effects counted by a command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_key_a_setup_request_and_a_counting_command_work_too() {
    let dir = tempfile::tempdir().unwrap();
    let ledger = Ledger::default();
    let base = servers::spawn(servers::with_idem(ledger.clone(), dir.path()).await).await;
    let mut config: Config = serde_json::from_value(serde_json::json!({
        "target": base,
        "request": {
            "path": "/pay",
            "headers": {"Authorization": "Bearer token-a", "Content-Type": "application/json"},
            "body": r#"{"cart":"{{fresh}}","amount":{{n}}}"#
        },
        "key": {"form": "token"},
        "setup": {"method": "PUT", "path": "/slow", "body": "0"},
        "slow": {"setup": {"method": "PUT", "path": "/slow", "body": "600"}},
        // node is there wherever `make test` runs (the e2e tier needs it).
        "effects": {"command": format!(
            "node -e \"fetch('{base}/effects').then(r => r.json()).then(a => console.log(a.length))\""
        )},
        "chaos": {"enabled": false}
    }))
    .unwrap();
    config.chaos.seed = Some(15);
    let report = check(config).await;
    assert!(report.passed(), "{}", report.table());
    for id in [
        "concurrent-duplicate",
        "repeat-no-effect",
        "first-took-effect",
        "key-malformed-refused",
    ] {
        assert_eq!(
            verdict(&report, id),
            &Verdict::Pass,
            "{id}\n{}",
            report.table()
        );
    }
    let first = report.cases.iter().find(|c| c.id == "first-runs").unwrap();
    assert_eq!(first.verdict, Verdict::Pass);
}

/// A key-state endpoint behind the layer that names the layer's `RouteConfig` operation
/// (`pay`) instead of the route (`POST /pay`): the SDK would read its own request's state as
/// another request's, and the tool says so (idem-axum's README, "Key state behind the layer").
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_state_endpoint_the_sdk_cannot_verify_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let app = servers::with_idem_naming(Ledger::default(), dir.path(), "pay").await;
    let base = servers::spawn(app).await;
    let mut config = servers::config(&base, 16);
    config.chaos.enabled = false;
    let report = check(config).await;
    let Verdict::Fail { why } = verdict(&report, "key-state-done") else {
        panic!("{}", report.table());
    };
    assert!(why.contains("another request's"), "{why}");
    assert_eq!(verdict(&report, "key-state-unknown"), &Verdict::Pass);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_ignores_keys_fails_the_replay_and_effect_cases() {
    let ledger = Ledger::default();
    let base = servers::spawn(servers::forgetful(ledger.clone())).await;
    let mut config = servers::config(&base, 12);
    config.origin = Some(servers::ORIGIN.to_owned());
    config.problem_json = true;
    let report = check(config).await;
    assert!(!report.passed());
    for id in [
        "repeat-replayed",
        "repeat-no-effect",
        "other-body-422",
        "key-missing-refused",
        "expired-first-sent-refused",
        "concurrent-duplicate",
        "cors-exposes",
        "chaos-at-most-once",
    ] {
        assert!(failed(&report, id), "{id} should fail:\n{}", report.table());
    }
    // The failure shows the exact exchange.
    let replay = report
        .cases
        .iter()
        .find(|c| c.id == "repeat-replayed")
        .unwrap();
    assert!(replay
        .exchanges
        .iter()
        .any(|e| e.contains("> POST ") && e.contains("< 201")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_selects_then_inserts_fails_the_concurrency_and_body_cases() {
    let ledger = Ledger::default();
    let base = servers::spawn(servers::select_then_insert(ledger.clone())).await;
    let mut config = servers::config(&base, 13);
    // Duplicates only: two copies of one attempt arrive together.
    config.chaos.mix = serde_json::from_str(r#"{"pass": 1, "duplicate": 3}"#).unwrap();
    let report = check(config).await;
    assert!(!report.passed());
    // Its keys are not bound to their tenant either.
    for id in [
        "other-body-422",
        "concurrent-duplicate",
        "tenants-isolated",
        "chaos-at-most-once",
    ] {
        assert!(failed(&report, id), "{id} should fail:\n{}", report.table());
    }
    // What it does right, the tool says so.
    for id in ["repeat-replayed", "repeat-no-effect", "key-missing-refused"] {
        assert_eq!(
            verdict(&report, id),
            &Verdict::Pass,
            "{id}:\n{}",
            report.table()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_whose_retention_is_shorter_than_the_retry_window_charges_twice_under_chaos() {
    let ledger = Ledger::default();
    let base = servers::spawn(servers::short_retention(
        ledger.clone(),
        Duration::from_millis(300),
    ))
    .await;
    let mut config = servers::config(&base, 14);
    // Answers held past the attempt timeout: the retry comes after the key was forgotten.
    config.chaos.mix = serde_json::from_str(r#"{"pass": 1, "hold_response": 3}"#).unwrap();
    let report = check(config).await;
    assert!(failed(&report, "chaos-at-most-once"), "{}", report.table());
    // Within retention the conformance phase sees nothing wrong with the replay.
    assert_eq!(verdict(&report, "repeat-replayed"), &Verdict::Pass);
}
