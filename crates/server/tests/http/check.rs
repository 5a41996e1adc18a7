//! idem-check against idem-server, as a team would run it against its own server: the real
//! checkout and PayCo, PayCo a few hundred ms away (so a duplicate arrives while the first
//! checkout runs), PayCo's ledger as the effect observer. Every case the checkout can be
//! configured for passes, on SQLite and on PostgreSQL; the one it cannot (another keyed
//! endpoint: the checkout has one) is reported as not checked.

use std::time::Duration;

use idem_check::{config::Config, Run};
use serde_json::json;

use crate::support::{
    latency::LatencyProxy,
    postgres::Postgres,
    process::{checkout_args_via, Service, MERCHANT, TENANT_A, TENANT_B},
};

const ORIGIN: &str = "http://127.0.0.1:9";

async fn check_the_checkout(database: &str, dir: &std::path::Path) {
    let payco = Service::payco(dir).await;
    let far = LatencyProxy::start(payco.addr().parse().unwrap(), Duration::from_millis(250)).await;
    let args = checkout_args_via(
        database,
        &payco,
        &far.url_through(&payco.url),
        &["--cors-origin", ORIGIN],
    );
    let checkout = Service::start(&args).await;
    let config: Config = serde_json::from_value(json!({
        "target": checkout.url,
        "request": {
            "path": "/api/checkout",
            "headers": {
                "Authorization": format!("Bearer {}", TENANT_A.0),
                "Content-Type": "application/json"
            },
            "body": r#"{"cart":"{{fresh}}","amount":{{n}},"card":"tok_visa"}"#
        },
        "second_tenant": {"Authorization": format!("Bearer {}", TENANT_B.0)},
        "slow": {"always_ms": 250},
        "effects": {
            "url": format!("{}/ledger", payco.url),
            "headers": {"Authorization": format!("Bearer {}", MERCHANT.0)},
            "list": "",
            "field": "amount",
            "matching": {"outcome": "charged"}
        },
        "key_state": {"path": "/api/keys/{key}"},
        "origin": ORIGIN,
        "problem_json": true,
        "chaos": {
            "operations": 24, "concurrency": 6, "seed": 2026,
            "attempt_timeout_ms": 2000, "retry_window_ms": 20000, "max_ms": 90000
        }
    }))
    .unwrap();
    config.validate().unwrap();
    let report = Run::quiet(config).run().await.expect("the run starts");
    assert!(report.passed(), "{}", report.table());
    // The checkout has one keyed endpoint; every other case is checked and passes.
    assert_eq!(
        report.not_passed(),
        ["other-endpoint-422"],
        "{}",
        report.table()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idem_server_passes_idem_check_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("checkout.db").display());
    check_the_checkout(&db, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idem_server_passes_idem_check_on_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let db = Postgres::shared().fresh_database("checked").await;
    check_the_checkout(&db, dir.path()).await;
}
