//! An unknown PayCo outcome over real HTTP: PayCo charges, but its answer comes back after the
//! checkout's PayCo timeout (a latency proxy between the two). The checkout answers 502 and
//! releases the claim (idem-checkout's `Step::Release`) whatever the policy; the key stays bound to that first
//! request (issue 22): another payload under it is 422 and never runs, though the first one's
//! money moved, and the first one's retry resumes the order and is answered from PayCo's key,
//! one charge in all.

use std::time::Duration;

use crate::{
    client,
    stack::Stack,
    support::{
        latency::LatencyProxy,
        process::{checkout_args, checkout_args_via, Service, TENANT_A},
    },
};

/// The checkout's arguments with PayCo reached at `payco_url` instead of `payco`'s own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_released_key_after_an_unknown_charge_refuses_another_payload_and_resumes_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let db = Stack::checkout_db(&dir);
    let payco = Service::payco(dir.path()).await;
    // PayCo's answers come back 2 s late; the checkout waits 300 ms for them.
    let slow = LatencyProxy::start(payco.addr().parse().unwrap(), Duration::from_secs(2)).await;
    let slow_url = format!("http://{}", slow.addr());
    let extra = ["--on-error", "release-claim", "--payco-timeout-ms", "300"];
    let server = Service::start(&checkout_args_via(&db, &payco, &slow_url, &extra)).await;
    let http = client::http();
    let a = client::body("cart-unknown", 4200, "tok_visa");
    let b = client::body("cart-unknown", 4300, "tok_visa");

    let first = client::checkout(&http, &server.url, TENANT_A.0, "unknown-1", &a).await;
    assert_eq!(first.status, 502, "{}", first.text());
    // PayCo did charge A's order: the outcome was unknown to the checkout, not to PayCo.
    let charged = client::charges_per_order(&http, &payco).await;
    assert_eq!(charged.len(), 1, "{charged:?}");
    let order = charged[0].0;
    let keys = format!("{}/api/keys/unknown-1", server.url);
    let state = client::get_json(&http, &keys, TENANT_A.0).await;
    assert_eq!(state["state"], "released", "{state}");

    // B under A's key: 422, and B never runs (no order, no PayCo call), whatever A's state.
    let other = client::checkout(&http, &server.url, TENANT_A.0, "unknown-1", &b).await;
    assert_eq!(other.status, 422, "{}", other.text());
    let orders = client::orders(&http, &server.url, TENANT_A.0).await;
    assert_eq!(orders.len(), 1, "{orders:?}");
    assert_eq!(orders[0]["id"].as_i64(), Some(order));
    assert_eq!(client::ledger(&http, &payco).await.len(), 1);

    // The same checkout, now reaching PayCo in time: A's retry claims the key again, resumes
    // its order and PayCo answers from `charge:<order>`: 201, one charge.
    server.kill().await;
    let server = Service::start(&checkout_args(&db, &payco, &extra)).await;
    let again = client::checkout(&http, &server.url, TENANT_A.0, "unknown-1", &a).await;
    assert_eq!(again.status, 201, "{}", again.text());
    assert!(!again.is_replay(), "released: the work ran again");
    assert_eq!(
        again.json()["order"].as_i64(),
        Some(order),
        "the same order"
    );
    assert_eq!(
        client::charges_per_order(&http, &payco).await,
        vec![(order, 1)],
        "PayCo answered the retry from its key"
    );
    let late = client::checkout(&http, &server.url, TENANT_A.0, "unknown-1", &b).await;
    assert_eq!(late.status, 422, "{}", late.text());
    let replay = client::checkout(&http, &server.url, TENANT_A.0, "unknown-1", &a).await;
    assert!(replay.is_replay());
}

/// A PayCo call longer than a lease (its answers 1.5 s late, a lease of 400 ms, PayCo's timeout
/// 5 s): the worker renews its lease while it waits, so every retry meanwhile is a 409, never
/// a takeover, and the first answer is the 201 its retries are then replayed. With the lease
/// not renewed, a retry after 400 ms would take the live worker's claim over.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payco_call_longer_than_a_lease_keeps_its_claim() {
    let dir = tempfile::tempdir().unwrap();
    let db = Stack::checkout_db(&dir);
    let payco = Service::payco(dir.path()).await;
    let slow =
        LatencyProxy::start(payco.addr().parse().unwrap(), Duration::from_millis(1_500)).await;
    let slow_url = format!("http://{}", slow.addr());
    let extra = ["--lock-ms", "400", "--payco-timeout-ms", "5000"];
    let server = Service::start(&checkout_args_via(&db, &payco, &slow_url, &extra)).await;
    let http = client::http();
    let body = client::body("cart-long", 4200, "tok_visa");
    let first = {
        let (http, url, body) = (http.clone(), server.url.clone(), body.clone());
        tokio::spawn(
            async move { client::checkout(&http, &url, TENANT_A.0, "long-1", &body).await },
        )
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut conflicts = 0;
    while !first.is_finished() {
        let retry = client::checkout(&http, &server.url, TENANT_A.0, "long-1", &body).await;
        match retry.status {
            409 => conflicts += 1,
            // The first answer may have been saved between `is_finished` and this retry.
            201 if retry.is_replay() => break,
            _ => panic!(
                "a live worker's claim is never taken over: {}",
                retry.text()
            ),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let first = first.await.unwrap();
    assert_eq!(first.status, 201, "{}", first.text());
    assert!(conflicts >= 5, "retries across several leases: {conflicts}");
    let order = first.json()["order"].as_i64().unwrap();
    assert_eq!(
        client::charges_per_order(&http, &payco).await,
        vec![(order, 1)]
    );
}
