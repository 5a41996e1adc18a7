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
