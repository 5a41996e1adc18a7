//! The completer over real HTTP, on SQLite and PostgreSQL: the server is SIGKILLed after
//! PayCo answered and before anything of it was committed, and no client ever retries. The
//! server, restarted on the same database with the completer on, takes the abandoned claim
//! over within its bound, resumes the order from the recovery point, asks PayCo again under
//! `charge:<order>` and settles it: paid with one charge (the key done, a later retry gets the
//! replay), or declined with none.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{
    client,
    support::{
        postgres::Postgres,
        process::{checkout_args, checkout_args_via, Service, TENANT_A},
    },
};

const LOCK_MS: &str = "300";
/// The completer's settings on restart: abandoned after 600 ms, a pass every 200 ms.
const COMPLETER: [&str; 6] = [
    "--complete-after-ms",
    "600",
    "--completer-interval-ms",
    "200",
    "--lock-ms",
    LOCK_MS,
];
/// Within how long the completer must have finished (its age, a pass, the work).
const BOUND: Duration = Duration::from_secs(10);

/// Start the checkout on `database`, send one checkout that hangs after PayCo's answer,
/// SIGKILL the server, restart it with the completer on; the restarted server and PayCo.
async fn abandoned_after_the_charge(
    database: &str,
    dir: &std::path::Path,
    key: &str,
    body: &str,
) -> (Service, Service) {
    let payco = Service::payco(dir).await;
    let failing = [
        "--lock-ms",
        LOCK_MS,
        "--failpoint",
        "after-charge=hang",
        "--complete-after-ms",
        "0",
    ];
    let mut server = Service::start(&checkout_args(database, &payco, &failing)).await;
    let http = client::http();
    let first = {
        let (http, url, body, key) = (
            http.clone(),
            server.url.clone(),
            body.to_owned(),
            key.to_owned(),
        );
        tokio::spawn(async move {
            let url = format!("{url}/api/checkout");
            client::try_post(&http, &url, TENANT_A.0, &key, &body).await
        })
    };
    server
        .wait_for_stderr("failpoint after-charge reached", Duration::from_secs(20))
        .await;
    let listen = server.addr().to_owned();
    server.kill().await;
    assert!(
        first.await.unwrap().is_none(),
        "the killed attempt got no answer"
    );
    let restarted = Service::start_on(&listen, &checkout_args(database, &payco, &COMPLETER)).await;
    (restarted, payco)
}

/// Poll the tenant's orders until the first is no longer pending, within [`BOUND`].
async fn settled_order(http: &reqwest::Client, server: &str) -> Value {
    let started = Instant::now();
    loop {
        let orders = client::orders(http, server, TENANT_A.0).await;
        assert_eq!(orders.len(), 1, "{orders:?}");
        if orders[0]["status"] != "pending" {
            return orders[0].clone();
        }
        assert!(
            started.elapsed() < BOUND,
            "not completed within {BOUND:?}: {orders:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn a_charged_checkout_nobody_retries_is_completed(database: &str, dir: &std::path::Path) {
    let body = client::body("cart-abandoned", 2222, "tok_visa");
    let (server, payco) = abandoned_after_the_charge(database, dir, "abandoned-1", &body).await;
    let http = client::http();
    let order = settled_order(&http, &server.url).await;
    assert_eq!(order["status"], "paid", "{order}");
    let id = order["id"].as_i64().unwrap();
    assert_eq!(
        client::charges_per_order(&http, &payco).await,
        vec![(id, 1)],
        "one charge"
    );
    let state = client::get_json(
        &http,
        &format!("{}/api/keys/abandoned-1", server.url),
        TENANT_A.0,
    )
    .await;
    assert_eq!(state["state"], "done", "{state}");
    // The client comes back: the replay of the completer's answer.
    let later = client::checkout(&http, &server.url, TENANT_A.0, "abandoned-1", &body).await;
    assert!(later.is_replay(), "{}", later.text());
    assert_eq!(
        (later.status, later.json()["order"].as_i64()),
        (201, Some(id))
    );
    let metrics = http
        .get(format!("{}/metrics", server.url))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics.contains("idem_completer_completed_total 1"),
        "{metrics}"
    );
}

async fn a_declined_checkout_nobody_retries_is_completed(database: &str, dir: &std::path::Path) {
    let body = client::body("cart-abandoned-decline", 3333, "tok_decline");
    let (server, payco) = abandoned_after_the_charge(database, dir, "abandoned-2", &body).await;
    let http = client::http();
    let order = settled_order(&http, &server.url).await;
    assert_eq!(order["status"], "declined", "{order}");
    assert!(
        client::charges_per_order(&http, &payco).await.is_empty(),
        "nothing charged"
    );
    // Under release-claim (the default) the declined claim is released: the key stays bound.
    let state = client::get_json(
        &http,
        &format!("{}/api/keys/abandoned-2", server.url),
        TENANT_A.0,
    )
    .await;
    assert_eq!(state["state"], "released", "{state}");
    let later = client::checkout(&http, &server.url, TENANT_A.0, "abandoned-2", &body).await;
    assert_eq!(later.status, 402, "{}", later.text());
    assert!(client::charges_per_order(&http, &payco).await.is_empty());
}

/// PayCo unreachable when the completer takes the claim over: its outcome is unknown, so the
/// claim is kept in flight (not released: a released claim is never listed again) and the
/// order stays pending; a later pass, PayCo back, completes it with the one charge.
async fn an_unknown_outcome_is_kept_for_a_later_pass(database: &str, dir: &std::path::Path) {
    let body = client::body("cart-abandoned-unknown", 4444, "tok_visa");
    let (server, payco) = abandoned_after_the_charge(database, dir, "abandoned-3", &body).await;
    let listen = server.addr().to_owned();
    server.kill().await;
    // PayCo at a port nothing listens on.
    let unreachable = checkout_args_via(database, &payco, "http://127.0.0.1:9", &COMPLETER);
    let mut cut_off = Service::start_on(&listen, &unreachable).await;
    cut_off
        .wait_for_stderr("abandoned work not finished", BOUND)
        .await;
    let http = client::http();
    let keys = format!("{}/api/keys/abandoned-3", cut_off.url);
    let state = client::get_json(&http, &keys, TENANT_A.0).await;
    assert_ne!(state["state"], "released", "kept in flight: {state}");
    assert_ne!(state["state"], "done", "{state}");
    let orders = client::orders(&http, &cut_off.url, TENANT_A.0).await;
    assert_eq!(orders[0]["status"], "pending");
    cut_off.kill().await;
    let server = Service::start_on(&listen, &checkout_args(database, &payco, &COMPLETER)).await;
    let order = settled_order(&http, &server.url).await;
    assert_eq!(order["status"], "paid", "{order}");
    let id = order["id"].as_i64().unwrap();
    assert_eq!(
        client::charges_per_order(&http, &payco).await,
        vec![(id, 1)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_an_unknown_outcome_is_kept_for_a_later_pass() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("checkout.db").display());
    an_unknown_outcome_is_kept_for_a_later_pass(&db, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_an_unknown_outcome_is_kept_for_a_later_pass() {
    let dir = tempfile::tempdir().unwrap();
    let db = Postgres::shared().fresh_database("completer_unknown").await;
    an_unknown_outcome_is_kept_for_a_later_pass(&db, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_charged_checkout_nobody_retries_is_completed() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("checkout.db").display());
    a_charged_checkout_nobody_retries_is_completed(&db, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_charged_checkout_nobody_retries_is_completed() {
    let dir = tempfile::tempdir().unwrap();
    let db = Postgres::shared().fresh_database("completer_paid").await;
    a_charged_checkout_nobody_retries_is_completed(&db, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_declined_checkout_nobody_retries_is_completed() {
    let dir = tempfile::tempdir().unwrap();
    let db = format!("sqlite:{}", dir.path().join("checkout.db").display());
    a_declined_checkout_nobody_retries_is_completed(&db, dir.path()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_declined_checkout_nobody_retries_is_completed() {
    let dir = tempfile::tempdir().unwrap();
    let db = Postgres::shared()
        .fresh_database("completer_declined")
        .await;
    a_declined_checkout_nobody_retries_is_completed(&db, dir.path()).await;
}
