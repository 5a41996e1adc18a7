//! The read-only views and the live event stream, each scoped to the caller's tenant.

use std::time::Duration;

use crate::{
    client::{self, read_stream},
    stack::Stack,
    support::process::{TENANT_A, TENANT_B},
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_event_stream_shows_the_tenants_claims_live() {
    let stack = Stack::sqlite(&[]).await;
    let http = client::http();
    let open = |token: &'static str| {
        http.get(format!("{}/api/events", stack.url()))
            .bearer_auth(token)
            .send()
    };
    let stream_a = open(TENANT_A.0).await.unwrap();
    assert_eq!(stream_a.status(), 200);
    assert_eq!(
        stream_a.headers()["content-type"],
        "text/event-stream",
        "an SSE stream"
    );
    let stream_b = open(TENANT_B.0).await.unwrap();

    let body = client::body("cart-live", 100, "tok_visa");
    let first = client::checkout(&http, stack.url(), TENANT_A.0, "live-1", &body).await;
    assert_eq!(first.status, 201);
    let replay = client::checkout(&http, stack.url(), TENANT_A.0, "live-1", &body).await;
    assert!(replay.is_replay());

    let seen = read_stream(stream_a, "\"replayed\"", Duration::from_secs(5)).await;
    for kind in ["\"claimed\"", "\"saved\"", "\"replayed\""] {
        assert!(seen.contains(kind), "tenant A's stream has {kind}: {seen}");
    }
    assert!(seen.contains("\"live-1\""), "{seen}");
    assert!(
        seen.contains("id: "),
        "events carry their seq as the SSE id: {seen}"
    );
    let other = read_stream(stream_b, "live-1", Duration::from_millis(800)).await;
    assert!(
        !other.contains("live-1"),
        "tenant B never sees A's events: {other}"
    );

    // A reconnect with Last-Event-ID resumes after it: the claim (seq 0) is not sent again.
    let resumed = http
        .get(format!("{}/api/events", stack.url()))
        .bearer_auth(TENANT_A.0)
        .header("Last-Event-ID", "0")
        .send()
        .await
        .unwrap();
    let again = read_stream(resumed, "\"replayed\"", Duration::from_secs(5)).await;
    assert!(!again.contains("\"claimed\""), "{again}");
    assert!(again.contains("\"replayed\""), "{again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claims_and_orders_are_read_only_and_scoped() {
    let stack = Stack::sqlite(&[]).await;
    let http = client::http();
    let body = client::body("cart-view", 700, "tok_visa");
    let paid = client::checkout(&http, stack.url(), TENANT_A.0, "view-1", &body).await;
    assert_eq!(paid.status, 201);
    let order = paid.json()["order"].as_i64().unwrap();

    let row = client::get_json(
        &http,
        &format!("{}/api/claims/view-1", stack.url()),
        TENANT_A.0,
    )
    .await;
    assert_eq!(row["state"], "done");
    assert_eq!(row["response_status"], 201);
    let orders = client::orders(&http, stack.url(), TENANT_A.0).await;
    assert_eq!(orders[0]["id"], order);
    assert_eq!(orders[0]["status"], "paid");

    // Tenant B sees none of it.
    let hidden = client::answer(
        http.get(format!("{}/api/claims/view-1", stack.url()))
            .bearer_auth(TENANT_B.0)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(hidden.status, 404);
    hidden.problem();
    let hidden = client::answer(
        http.get(format!("{}/api/orders/{order}", stack.url()))
            .bearer_auth(TENANT_B.0)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(hidden.status, 404);
    assert!(client::orders(&http, stack.url(), TENANT_B.0)
        .await
        .is_empty());
    let claims_b =
        client::get_json(&http, &format!("{}/api/claims", stack.url()), TENANT_B.0).await;
    assert_eq!(claims_b, serde_json::json!([]));

    // Read-only: the views take no writes.
    let write = client::answer(
        http.post(format!("{}/api/claims", stack.url()))
            .bearer_auth(TENANT_A.0)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(write.status, 405);
    write.problem();
}
