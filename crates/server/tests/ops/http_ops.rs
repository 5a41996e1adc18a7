//! Over HTTP against the real binary: /healthz, /readyz while PostgreSQL is down and after
//! it is back, /metrics moving with real requests, and GET /api/keys/{key}.

use std::time::Duration;

use idem_client::{CanonicalPayload, KeyState as SdkKeyState};

use crate::{
    client::{body, checkout, http},
    metrics::sample,
    stack::Stack,
    support::{
        postgres::Postgres,
        process::{checkout_args, Service},
    },
};

async fn status(url: &str) -> u16 {
    http().get(url).send().await.expect("get").status().as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_fails_while_postgres_is_down_and_recovers() {
    let pg = Postgres::start();
    let dir = tempfile::tempdir().expect("dir");
    let payco = Service::payco(dir.path()).await;
    let server = Service::start(&checkout_args(pg.url(), &payco, &[])).await;
    assert_eq!(status(&format!("{}/healthz", server.url)).await, 200);
    assert_eq!(status(&format!("{}/readyz", server.url)).await, 200);
    pg.stop();
    let down = http()
        .get(format!("{}/readyz", server.url))
        .send()
        .await
        .expect("get");
    assert_eq!(down.status().as_u16(), 503);
    assert!(down.headers().contains_key("retry-after"));
    let problem: serde_json::Value = down.json().await.expect("problem body");
    assert!(problem["detail"]
        .as_str()
        .unwrap_or("")
        .contains("database"));
    // Liveness does not depend on the database: restarting the process would not help.
    assert_eq!(status(&format!("{}/healthz", server.url)).await, 200);
    pg.resume();
    let mut ready = 0;
    for _ in 0..50 {
        ready = status(&format!("{}/readyz", server.url)).await;
        if ready == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(ready, 200, "ready again once the database is back");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_move_with_real_requests() {
    let stack = Stack::sqlite(&["--failpoints"]).await;
    let client = http();
    let scrape = || async {
        client
            .get(format!("{}/metrics", stack.url()))
            .send()
            .await
            .expect("scrape")
            .text()
            .await
            .expect("text")
    };
    let before = scrape().await;
    assert_eq!(sample(&before, "idem_claims_total"), 0.0);
    let order = body("cart-1", 1200, "tok_visa");
    assert_eq!(
        checkout(&client, stack.url(), "token-a", "m1", &order)
            .await
            .status,
        201
    );
    assert!(checkout(&client, stack.url(), "token-a", "m1", &order)
        .await
        .is_replay());
    let other = body("cart-2", 1300, "tok_visa");
    assert_eq!(
        checkout(&client, stack.url(), "token-a", "m1", &other)
            .await
            .status,
        422
    );
    // A claim held by a hung worker: the retry gets 409.
    client
        .put(format!("{}/api/failpoints/after-claim", stack.url()))
        .body("hang")
        .send()
        .await
        .expect("set failpoint");
    let hung = {
        let (client, url, order) = (client.clone(), stack.url().to_owned(), order.clone());
        tokio::spawn(async move { checkout(&client, &url, "token-a", "m2", &order).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        checkout(&client, stack.url(), "token-a", "m2", &order)
            .await
            .status,
        409
    );
    let after = scrape().await;
    for (name, want) in [
        ("idem_claims_total", 2.0),
        ("idem_replays_total", 1.0),
        ("idem_saved_total", 1.0),
        ("idem_rejections_total{status=\"422\"}", 1.0),
        ("idem_rejections_total{status=\"409\"}", 1.0),
    ] {
        assert_eq!(sample(&after, name), want, "{name} in\n{after}");
    }
    assert!(
        after.contains("idem_http_request_duration_seconds_count{method=\"POST\",route=\"/api/checkout\",status=\"201\"} 2"),
        "latency histogram by route (the first 201 and its replay):\n{after}"
    );
    hung.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_state_over_http_in_flight_done_and_scoped() {
    let mut stack = Stack::sqlite(&["--failpoint", "after-charge=hang"]).await;
    let client = http();
    let base = stack.url().to_owned();
    let get = |token: &'static str, key: &'static str| {
        let (client, url) = (client.clone(), base.clone());
        async move {
            let r = client
                .get(format!("{url}/api/keys/{key}"))
                .bearer_auth(token)
                .send()
                .await
                .expect("get key state");
            let status = r.status().as_u16();
            (status, r.json::<serde_json::Value>().await.expect("json"))
        }
    };
    let order = body("cart-1", 1200, "tok_visa");
    let hung = {
        let (client, url, order) = (client.clone(), stack.url().to_owned(), order.clone());
        tokio::spawn(async move { checkout(&client, &url, "token-a", "r1", &order).await })
    };
    // The log line the hung request writes carries its scope and key (the request span).
    let seen = stack
        .server
        .wait_for_stderr("failpoint reached: hanging", Duration::from_secs(10))
        .await;
    let line = seen.last().expect("the line");
    assert!(
        line.contains("scope=tenant-a") && line.contains("key=r1"),
        "scope and key on the line: {line}"
    );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let (code, state) = get("token-a", "r1").await;
    assert_eq!(code, 200, "{state}");
    assert_eq!(state["state"], "in_flight");
    assert!(
        state["lease_age_ms"].as_u64().expect("lease age") >= 300,
        "{state}"
    );
    let (code, state) = get("token-b", "r1").await;
    assert_eq!(code, 404, "another tenant's key: {state}");
    assert!(!state.to_string().contains("in_flight"), "no leak: {state}");
    hung.abort();

    // A key that finished: the saved status and body, as a retry would replay them.
    client
        .put(format!("{}/api/failpoints/after-charge", stack.url()))
        .body("off")
        .send()
        .await
        .expect("failpoint off");
    let first = checkout(&client, stack.url(), "token-a", "r2", &order).await;
    assert_eq!(first.status, 201);
    let (code, state) = get("token-a", "r2").await;
    assert_eq!(code, 200);
    assert_eq!(state["state"], "done");
    assert_eq!(state["status"], 201);
    assert_eq!(state["body"].as_str().expect("body"), first.text());
    // It names the request that holds the key, so a client tells its own answer from another
    // body's under the same key (the SDK's reader, as a page runs it).
    assert_eq!(state["operation"], "POST /api/checkout");
    assert_eq!(
        state["fingerprint"],
        idem_store::fingerprint("POST /api/checkout", order.as_bytes())
            .expect("fingerprint")
            .to_hex()
    );
    let answer = state.to_string().into_bytes();
    let read_by = |cart: &str| {
        let page = CanonicalPayload::new(
            &serde_json::from_str(&body(cart, 1200, "tok_visa")).expect("json"),
        )
        .expect("payload");
        SdkKeyState::from_reply(200, &answer, &page)
    };
    assert!(
        matches!(
            read_by("cart-1"),
            Some(SdkKeyState::Done { status: 201, .. })
        ),
        "this body's own answer"
    );
    assert_eq!(
        read_by("cart-2"),
        Some(SdkKeyState::BoundToAnotherRequest),
        "another body under the same key is never told this answer"
    );
    assert_eq!(get("token-b", "r2").await.0, 404);
    assert_eq!(get("token-a", "never-used").await.0, 404);
    let unauthenticated = client
        .get(format!("{}/api/keys/r2", stack.url()))
        .send()
        .await
        .expect("get");
    assert_eq!(unauthenticated.status().as_u16(), 401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn key_state_is_404_once_the_configured_retention_is_over() {
    let stack = Stack::sqlite(&["--retention-ms", "1500"]).await;
    let client = http();
    let order = body("cart-r", 1200, "tok_visa");
    let first = checkout(&client, stack.url(), "token-a", "kept-briefly", &order).await;
    assert_eq!(first.status, 201);
    let state = |client: reqwest::Client, url: String| async move {
        let r = client
            .get(format!("{url}/api/keys/kept-briefly"))
            .bearer_auth("token-a")
            .send()
            .await
            .expect("get key state");
        let status = r.status().as_u16();
        (status, r.json::<serde_json::Value>().await.expect("json"))
    };
    let (code, done) = state(client.clone(), stack.url().to_owned()).await;
    assert_eq!(code, 200, "{done}");
    let span = done["expires_at"].as_u64().expect("expires_at")
        - done["created_at"].as_u64().expect("created_at");
    assert!(
        (1_500..3_000).contains(&span),
        "kept 1.5 s after the commit, not the 24 h default: {done}"
    );
    tokio::time::sleep(Duration::from_millis(2_000)).await;
    let (code, gone) = state(client.clone(), stack.url().to_owned()).await;
    assert_eq!(code, 404, "past retention the key is forgotten: {gone}");
}
