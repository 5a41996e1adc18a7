//! Failpoints: off unless enabled, refused on a non-loopback address, settable at run time; a
//! panicking request fails alone (500 problem) and its claim is taken over later.

use std::time::Duration;

use crate::{
    client,
    stack::Stack,
    support::process::{refused_to_start, TENANT_A},
};

#[tokio::test]
async fn failpoints_are_refused_on_a_non_loopback_address() {
    let stderr = refused_to_start(&[
        "serve",
        "--listen",
        "0.0.0.0:0",
        "--database",
        "sqlite::memory:",
        "--failpoint",
        "after-claim=crash",
    ])
    .await;
    assert!(stderr.contains("loopback"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_flag_there_is_no_failpoint_endpoint() {
    let stack = Stack::sqlite(&[]).await;
    let http = client::http();
    let a = client::answer(
        http.put(format!("{}/api/failpoints/after-claim", stack.url()))
            .body("crash")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(a.status, 404, "{}", a.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_fails_one_request_and_the_claim_is_taken_over() {
    let mut stack = Stack::sqlite(&["--failpoints", "--lock-ms", "500"]).await;
    let http = client::http();
    let set = |action: &'static str| {
        http.put(format!("{}/api/failpoints/before-commit", stack.url()))
            .body(action)
            .send()
    };
    assert_eq!(set("panic").await.unwrap().status(), 200);
    let body = client::body("cart-panic", 321, "tok_visa");
    let failed = client::checkout(&http, stack.url(), TENANT_A.0, "panic-1", &body).await;
    assert_eq!(failed.status, 500, "{}", failed.text());
    failed.problem();
    assert_eq!(set("off").await.unwrap().status(), 200);

    // The process is alive; the retry takes the stale claim over and PayCo dedupes.
    let answer = client::checkout_until_settled(
        &http,
        stack.url(),
        TENANT_A.0,
        "panic-1",
        &body,
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(answer.status, 201, "{}", answer.text());
    let order = answer.json()["order"].as_i64().unwrap();
    assert_eq!(
        client::charges_per_order(&http, &stack.payco).await,
        vec![(order, 1)]
    );
    stack
        .server
        .wait_for_stderr("handler panicked", Duration::from_secs(2))
        .await;
    let unknown = client::answer(
        http.put(format!("{}/api/failpoints/later", stack.url()))
            .body("hang")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(unknown.status, 400);
    unknown.problem();
}

/// The verdicts demo mode's faults are made of, armed process-wide like any failpoint: a 503
/// on arrival claims nothing; a dropped answer after the commit closes the connection with the
/// order paid, and the retry gets the replay; a held answer arrives late but whole. One charge.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unavailable_drop_and_hold_are_process_wide_verdicts_too() {
    let stack = Stack::sqlite(&["--failpoint", "arrival=unavailable"]).await;
    let http = client::http();
    let set = |point: &'static str, verdict: &'static str| {
        http.put(format!("{}/api/failpoints/{point}", stack.url()))
            .body(verdict)
            .send()
    };
    let body = client::body("cart-verdicts", 654, "tok_visa");
    let refused = client::checkout(&http, stack.url(), TENANT_A.0, "verdict-1", &body).await;
    assert_eq!(refused.status, 503, "{}", refused.text());
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert!(
        client::orders(&http, stack.url(), TENANT_A.0)
            .await
            .is_empty(),
        "nothing claimed"
    );

    assert_eq!(set("arrival", "off").await.unwrap().status(), 200);
    assert_eq!(set("after-commit", "drop").await.unwrap().status(), 200);
    let url = format!("{}/api/checkout", stack.url());
    let lost = client::try_post(&http, &url, TENANT_A.0, "verdict-1", &body).await;
    assert!(lost.is_none(), "the connection closes unanswered: {lost:?}");
    let orders = client::orders(&http, stack.url(), TENANT_A.0).await;
    assert_eq!(orders.len(), 1);
    assert_eq!(
        orders[0]["status"], "paid",
        "committed before the answer was dropped"
    );

    assert_eq!(set("after-commit", "hold:300").await.unwrap().status(), 200);
    let started = std::time::Instant::now();
    let replay = client::checkout(&http, stack.url(), TENANT_A.0, "verdict-1", &body).await;
    assert!(replay.is_replay(), "{}", replay.text());
    assert_eq!(replay.status, 201);
    let held = client::checkout(&http, stack.url(), TENANT_A.0, "verdict-2", &body).await;
    assert_eq!(held.status, 201, "{}", held.text());
    assert!(
        started.elapsed() >= Duration::from_millis(300),
        "the new checkout's answer was held"
    );
    let order = replay.json()["order"].as_i64().unwrap();
    let charges = client::charges_per_order(&http, &stack.payco).await;
    assert!(charges.contains(&(order, 1)), "{charges:?}");
    assert_eq!(charges.len(), 2, "one charge per checkout: {charges:?}");
}
