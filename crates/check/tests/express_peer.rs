//! idem-check against a well-known peer: express 4.21.2 with express-idempotency 1.0.6, set up
//! as that package's README shows (`tests/peers/express`, its own package.json and lock file,
//! installed by `make test`'s tool step). The verdicts asserted here are the table of
//! docs/check.md ("express-idempotency, measured"): where it keeps the rules the SDK relies on,
//! and where its semantics differ from the draft.

mod servers;

use std::{path::PathBuf, process::Stdio, time::Duration};

use idem_check::{
    config::Endpoint,
    report::{Report, Verdict},
    Run,
};
use tokio::io::{AsyncBufReadExt, BufReader};

/// The peer's folder.
fn peer() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers/express")
}

/// Start `node server.js` on a free port; the child (killed when dropped) and its URL.
async fn start() -> (tokio::process::Child, String) {
    let dir = peer();
    assert!(
        dir.join("node_modules/express-idempotency").is_dir(),
        "the express peer is not installed: run `scripts/tools.sh ensure express_peer` \
         (make test does), or `npm ci` in {}",
        dir.display()
    );
    let mut child = tokio::process::Command::new("node")
        .arg("server.js")
        .current_dir(&dir)
        .env("PORT", "0")
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run node");
    let stdout = child.stdout.take().expect("piped stdout");
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .expect("the peer says where it listens within 20 s")
        .expect("read its stdout")
        .expect("it printed before exiting");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned();
    (child, url)
}

fn result(report: &Report, id: &str) -> &'static str {
    match &report.cases.iter().find(|c| c.id == id).expect(id).verdict {
        Verdict::Pass => "pass",
        Verdict::Fail { .. } => "fail",
        Verdict::NotChecked { .. } => "not checked",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn express_idempotency_measured() {
    let (_peer, base) = start().await;
    let mut config = servers::config(&base, 31);
    config.origin = Some(servers::ORIGIN.to_owned());
    config.second_endpoint = Some(Endpoint {
        path: "/pay/again".to_owned(),
        ..Default::default()
    });
    config.chaos.operations = 24;
    let report = Run::quiet(config).run().await.expect("the run starts");
    // The table, for `cargo test -- --nocapture` (docs/check.md quotes it).
    println!("{}", report.table());
    let measured = [
        ("first-runs", "pass"),
        ("first-took-effect", "pass"),
        ("repeat-replayed", "pass"),
        ("repeat-marked", "fail"),
        ("repeat-no-effect", "pass"),
        ("other-body-422", "fail"),
        ("other-endpoint-422", "fail"),
        ("reordered-json-replayed", "pass"),
        ("key-255-accepted", "pass"),
        ("key-256-refused", "fail"),
        ("key-malformed-refused", "fail"),
        ("key-missing-refused", "fail"),
        ("expired-first-sent-refused", "fail"),
        ("tenants-isolated", "fail"),
        ("concurrent-duplicate", "fail"),
        ("cors-exposes", "fail"),
        ("key-state-done", "fail"),
        ("key-state-unknown", "pass"),
        ("errors-are-problems", "not checked"),
        ("chaos-at-most-once", "pass"),
    ];
    let seen: Vec<(&str, &str)> = measured
        .iter()
        .map(|(id, _)| (*id, result(&report, id)))
        .collect();
    assert_eq!(seen, measured, "\n{}", report.table());
    assert!(!report.passed());
}
