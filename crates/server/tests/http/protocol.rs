//! The HTTP contract of an idempotent route, over the real binary: the first answer and its
//! byte-for-byte replays (`Location` kept, `Idempotent-Replayed: true`), 409 with
//! `Retry-After` while a request with the key is in flight, 422 for the key with another body,
//! both header spellings, and CORS for the configured origin only.

use std::time::Duration;

use crate::{client, stack::Stack, support::process::TENANT_A};

const ORIGIN: &str = "http://127.0.0.1:8080";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replays_are_byte_for_byte_with_location_and_the_marker() {
    let stack = Stack::sqlite(&[]).await;
    let http = client::http();
    let body = client::body("cart-replay", 2500, "tok_visa");
    let first = client::checkout(&http, stack.url(), TENANT_A.0, "replay-1", &body).await;
    assert_eq!(first.status, 201, "{}", first.text());
    assert!(!first.is_replay());
    assert!(
        first.header("access-control-expose-headers").is_none(),
        "no CORS origin configured: no CORS headers"
    );
    let order = first.json()["order"].as_i64().unwrap();
    assert_eq!(
        first.header("location"),
        Some(&*format!("/api/orders/{order}"))
    );
    // idem-checkout's receipt, the bytes the simulator's checkout answers too (its pages and
    // checker read them with the same `Receipt::from_body`).
    let receipt = idem_checkout::Receipt::from_body(&first.body).expect("a receipt");
    assert_eq!((receipt.order, receipt.amount), (order, 2500));
    assert_eq!(receipt.status, "paid");
    assert!(receipt.charge.starts_with("ch_"), "{}", receipt.charge);
    assert_eq!(receipt.to_body(), first.body, "written by idem-checkout");

    // The same key as a structured-field string, the body with other whitespace and key
    // order: the same request.
    let respelled = r#"{ "card": "tok_visa", "amount": 2500, "cart": "cart-replay" }"#;
    let replay = client::checkout(&http, stack.url(), TENANT_A.0, "\"replay-1\"", respelled).await;
    assert_eq!(replay.status, 201);
    assert!(replay.is_replay());
    assert_eq!(replay.body, first.body, "byte for byte");
    assert_eq!(replay.header("content-type"), first.header("content-type"));
    assert_eq!(replay.header("location"), first.header("location"));
    assert!(replay.header("set-cookie").is_none());

    // The order behind the Location exists and is paid.
    let got = client::get_json(
        &http,
        &format!("{}/api/orders/{order}", stack.url()),
        TENANT_A.0,
    )
    .await;
    assert_eq!(got["status"], "paid");

    // The key with another body: 422, never a replay.
    let other = client::body("cart-replay", 2501, "tok_visa");
    let mismatch = client::checkout(&http, stack.url(), TENANT_A.0, "replay-1", &other).await;
    assert_eq!(mismatch.status, 422);
    assert!(mismatch.problem().kind.contains("key-reused"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_in_flight_answers_409_with_retry_after() {
    let mut stack = Stack::sqlite(&["--lock-ms", "30000", "--failpoint", "after-claim=hang"]).await;
    let http = client::http();
    let body = client::body("cart-409", 300, "tok_visa");
    let hung = {
        let (http, url, body) = (http.clone(), stack.url().to_owned(), body.clone());
        tokio::spawn(async move { client::checkout(&http, &url, TENANT_A.0, "busy", &body).await })
    };
    stack
        .server
        .wait_for_stderr("failpoint after-claim reached", Duration::from_secs(20))
        .await;
    let busy = client::checkout(&http, stack.url(), TENANT_A.0, "busy", &body).await;
    assert_eq!(busy.status, 409, "{}", busy.text());
    let retry_after: u64 = busy.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=30).contains(&retry_after), "Retry-After {retry_after}");
    assert!(busy.problem().kind.contains("in-flight"));
    // The claim table shows the live claim, read-only.
    let claims = client::get_json(&http, &format!("{}/api/claims", stack.url()), TENANT_A.0).await;
    let row = &claims.as_array().unwrap()[0];
    assert_eq!(row["key"], "busy");
    assert_eq!(row["state"], "in_flight");
    hung.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_allows_the_configured_origin_only() {
    let stack = Stack::sqlite(&["--cors-origin", ORIGIN]).await;
    let http = client::http();
    let preflight = |origin: &'static str| {
        http.request(
            reqwest::Method::OPTIONS,
            format!("{}/api/checkout", stack.url()),
        )
        .header("Origin", origin)
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "idempotency-key,repeatability-first-sent,content-type,authorization",
        )
        .send()
    };
    let ok = client::answer(preflight(ORIGIN).await.unwrap()).await;
    assert_eq!(ok.header("access-control-allow-origin"), Some(ORIGIN));
    let allowed = ok
        .header("access-control-allow-headers")
        .unwrap()
        .to_lowercase();
    for h in [
        "idempotency-key",
        "repeatability-first-sent",
        "content-type",
        "authorization",
    ] {
        assert!(allowed.contains(h), "preflight allows {h}: {allowed}");
    }
    let other = client::answer(preflight("http://evil.example").await.unwrap()).await;
    assert_eq!(other.header("access-control-allow-origin"), None);

    // A real cross-origin request may read Retry-After and Idempotent-Replayed.
    let a = client::answer(
        http.post(format!("{}/api/checkout", stack.url()))
            .header("Origin", ORIGIN)
            .bearer_auth(TENANT_A.0)
            .header("Idempotency-Key", "cors-1")
            .body(client::body("cart-cors", 10, "tok_visa"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(a.status, 201, "{}", a.text());
    let exposed = a
        .header("access-control-expose-headers")
        .unwrap()
        .to_lowercase();
    assert!(
        exposed.contains("retry-after") && exposed.contains("idempotent-replayed"),
        "{exposed}"
    );

    // A cross-origin 401: the script may read its challenge.
    let refused = client::answer(
        http.get(format!("{}/api/orders", stack.url()))
            .header("Origin", ORIGIN)
            .bearer_auth("nobody")
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(refused.status, 401);
    let exposed = refused
        .header("access-control-expose-headers")
        .unwrap()
        .to_lowercase();
    assert!(exposed.contains("www-authenticate"), "{exposed}");
}
