//! The server process is SIGKILLed at the failpoint after PayCo charged and before anything
//! of it was committed; restarted on the same database, the client's retry with the same key
//! waits out the dead worker's lease (409), takes the stale claim over, resumes the same order,
//! PayCo dedupes `charge:<order>`: one charge, and the client gets its 201.

use std::time::Duration;

use crate::{
    client,
    stack::Stack,
    support::process::{checkout_args, Service, TENANT_A},
};

const LOCK_MS: &str = "1500";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_after_the_charge_is_resumed_with_one_charge() {
    let dir = tempfile::tempdir().unwrap();
    let db = Stack::checkout_db(&dir);
    let payco = Service::payco(dir.path()).await;
    let failing = ["--lock-ms", LOCK_MS, "--failpoint", "after-charge=hang"];
    let mut server = Service::start(&checkout_args(&db, &payco, &failing)).await;
    let http = client::http();
    let body = client::body("cart-crash", 1234, "tok_visa");

    // The first attempt reaches the failpoint and hangs there.
    let first = {
        let (http, url, body) = (http.clone(), server.url.clone(), body.clone());
        tokio::spawn(async move {
            let url = format!("{url}/api/checkout");
            client::try_post(&http, &url, TENANT_A.0, "crash-1", &body).await
        })
    };
    server
        .wait_for_stderr("failpoint after-charge reached", Duration::from_secs(20))
        .await;
    let charged = client::charges_per_order(&http, &payco).await;
    assert_eq!(
        charged.len(),
        1,
        "PayCo charged before the crash: {charged:?}"
    );
    let listen = server.addr().to_owned();
    server.kill().await;
    // The client's first attempt gets no answer: its connection died with the process.
    let first = first.await.expect("the first attempt's task");
    assert!(
        first.is_none(),
        "the killed attempt got no answer: {first:?}"
    );

    // Restarted on the same database (and port), without the failpoint.
    let restarted = Service::start_on(
        &listen,
        &checkout_args(&db, &payco, &["--lock-ms", LOCK_MS]),
    )
    .await;
    let early = client::checkout(&http, &restarted.url, TENANT_A.0, "crash-1", &body).await;
    assert_eq!(
        early.status,
        409,
        "the dead worker's lease is still live: {}",
        early.text()
    );
    let answer = client::checkout_until_settled(
        &http,
        &restarted.url,
        TENANT_A.0,
        "crash-1",
        &body,
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(answer.status, 201, "{}", answer.text());
    assert!(!answer.is_replay(), "the takeover ran the work to the end");
    let order = answer.json()["order"].as_i64().unwrap();
    assert_eq!(charged[0].0, order, "the same order was resumed");
    assert_eq!(
        client::charges_per_order(&http, &payco).await,
        vec![(order, 1)],
        "PayCo deduplicated the resumed charge"
    );
    let orders = client::orders(&http, &restarted.url, TENANT_A.0).await;
    assert_eq!(orders.len(), 1);
    assert_eq!(orders[0]["status"], "paid");
}
