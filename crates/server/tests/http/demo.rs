//! Demo mode (`serve --demo-faults`) over real HTTP: each fault injected on request, for the
//! tenant that armed it only; a tenant per `demo-<uuid>` token; PayCo's ledger relayed per
//! session; notes in the tenant's event stream; `access_token` for `EventSource`; refused off
//! loopback and absent without the flag.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{
    client::{self, read_stream, Answer},
    stack::Stack,
    support::process::{refused_to_start, TENANT_A},
};

const ORIGIN: &str = "http://127.0.0.1:8080";

/// A fresh page session's token (and tenant).
fn session() -> String {
    format!("demo-{}", uuid::Uuid::new_v4())
}

async fn demo_stack(extra: &[&str]) -> Stack {
    let mut all = vec!["--demo-faults"];
    all.extend_from_slice(extra);
    Stack::sqlite(&all).await
}

/// `PUT /api/demo/faults` as `token`.
async fn arm(http: &reqwest::Client, stack: &Stack, token: &str, faults: Value) -> Answer {
    client::answer(
        http.put(format!("{}/api/demo/faults", stack.url()))
            .bearer_auth(token)
            .header("Content-Type", "application/json")
            .body(faults.to_string())
            .send()
            .await
            .unwrap(),
    )
    .await
}

/// `GET path` as `token`, whole.
async fn get(http: &reqwest::Client, stack: &Stack, path: &str, token: &str) -> Answer {
    let url = format!("{}{path}", stack.url());
    client::answer(http.get(url).bearer_auth(token).send().await.unwrap()).await
}

/// A checkout over a raw TCP connection: every byte the server wrote before the connection
/// ended (nothing at all when it closed it unanswered).
async fn raw_checkout(stack: &Stack, token: &str, key: &str, body: &str) -> Vec<u8> {
    let mut tcp = tokio::net::TcpStream::connect(stack.server.addr())
        .await
        .unwrap();
    let request = format!(
        "POST /api/checkout HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
         Idempotency-Key: {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        stack.server.addr(),
        body.len()
    );
    tcp.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), async {
        let mut buf = [0u8; 4096];
        // A reset ends the read as an EOF does: either way, nothing more came.
        while let Ok(n @ 1..) = tcp.read(&mut buf).await {
            seen.extend_from_slice(&buf[..n]);
        }
    });
    read.await.expect("the connection ends within 20 s");
    seen
}

/// The `charged` ledger rows the relay shows `token`, as (order, key).
async fn relayed_charges(http: &reqwest::Client, stack: &Stack, token: &str) -> Vec<(i64, String)> {
    let ledger = get(http, stack, "/api/demo/ledger", token).await;
    assert_eq!(ledger.status, 200, "{}", ledger.text());
    ledger
        .json()
        .as_array()
        .unwrap()
        .iter()
        .filter(|row| row["outcome"] == "charged")
        .map(|row| {
            let key = row["key"].as_str().unwrap().to_owned();
            (row["order"].as_i64().unwrap(), key)
        })
        .collect()
}

/// The tenant's event stream, read until `until` appears (or 5 s).
async fn events(http: &reqwest::Client, stack: &Stack, token: &str, until: &str) -> String {
    let stream = http
        .get(format!("{}/api/events", stack.url()))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    read_stream(stream, until, Duration::from_secs(5)).await
}

#[tokio::test]
async fn demo_faults_are_refused_on_a_non_loopback_address() {
    let stderr = refused_to_start(&[
        "serve",
        "--listen",
        "0.0.0.0:0",
        "--database",
        "sqlite::memory:",
        "--demo-faults",
    ])
    .await;
    assert!(
        stderr.contains("demo faults") && stderr.contains("loopback"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_flag_there_is_no_demo_route_and_no_demo_tenant() {
    let stack = Stack::sqlite(&[]).await;
    let http = client::http();
    let armed = arm(&http, &stack, TENANT_A.0, json!([{"fault": "unavailable"}])).await;
    assert_eq!(armed.status, 404, "{}", armed.text());
    let token = session();
    let body = client::body("cart-no-demo", 100, "tok_visa");
    let refused = client::checkout(&http, stack.url(), &token, "no-demo-1", &body).await;
    assert_eq!(
        refused.status, 401,
        "a demo token is no tenant outside demo mode"
    );
    let query = format!("/api/claims?access_token={token}");
    let url = format!("{}{query}", stack.url());
    let unread = client::answer(http.get(url).send().await.unwrap()).await;
    assert_eq!(unread.status, 401, "no access_token outside demo mode");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_response_was_committed_and_its_retry_is_the_replay_with_one_charge() {
    let stack = demo_stack(&[]).await;
    let http = client::http();
    let (mine, other) = (session(), session());
    let armed = arm(&http, &stack, &mine, json!([{"fault": "drop-response"}])).await;
    assert_eq!(armed.status, 200, "{}", armed.text());
    assert_eq!(armed.json()[0]["times"], 1);

    // Another session's checkout meanwhile is untouched by my fault.
    let theirs = client::body("cart-theirs", 300, "tok_visa");
    let answered = client::checkout(&http, stack.url(), &other, "drop-1", &theirs).await;
    assert_eq!(answered.status, 201, "{}", answered.text());

    let body = client::body("cart-drop", 4200, "tok_visa");
    let seen = raw_checkout(&stack, &mine, "drop-1", &body).await;
    assert!(
        seen.is_empty(),
        "the connection closed without a byte: {:?}",
        String::from_utf8_lossy(&seen)
    );
    // Committed before it was dropped: the key is done, the order paid, PayCo charged once.
    let state = get(&http, &stack, "/api/keys/drop-1", &mine).await;
    assert_eq!(state.json()["state"], "done", "{}", state.text());
    let orders = client::orders(&http, stack.url(), &mine).await;
    assert_eq!(orders.len(), 1);
    assert_eq!(orders[0]["status"], "paid");
    let retry = client::checkout(&http, stack.url(), &mine, "drop-1", &body).await;
    assert_eq!(retry.status, 201, "{}", retry.text());
    assert!(retry.is_replay(), "the retry is the saved answer");
    let order = orders[0]["id"].as_i64().unwrap();
    assert_eq!(
        relayed_charges(&http, &stack, &mine).await,
        vec![(order, format!("charge:{order}"))]
    );
    // One-shot: used up.
    let left = get(&http, &stack, "/api/demo/faults", &mine).await;
    assert_eq!(left.json(), json!([]));

    // The session's stream tells the story; the other session's has none of it.
    let story = events(&http, &stack, &mine, "\"replayed\"").await;
    for part in [
        "\"claimed\"",
        "payco: charged",
        "fault: drop-response",
        "\"saved\"",
        "\"replayed\"",
    ] {
        assert!(story.contains(part), "{part} in {story}");
    }
    let elsewhere = events(&http, &stack, &other, "drop-response").await;
    assert!(!elsewhere.contains("drop-response"), "{elsewhere}");
    assert!(
        !elsewhere.contains("cart-drop") && elsewhere.contains("\"saved\""),
        "{elsewhere}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_response_times_the_client_out_and_its_retry_is_the_replay() {
    let stack = demo_stack(&[]).await;
    let http = client::http();
    let token = session();
    let faults = json!([{"fault": "hold-response", "hold_ms": 3000}]);
    assert_eq!(arm(&http, &stack, &token, faults).await.status, 200);
    let body = client::body("cart-hold", 500, "tok_visa");
    let impatient = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    let url = format!("{}/api/checkout", stack.url());
    let started = std::time::Instant::now();
    let first = client::try_post(&impatient, &url, &token, "hold-1", &body).await;
    assert!(first.is_none(), "the client timed out: {first:?}");
    let retry = client::checkout(&http, stack.url(), &token, "hold-1", &body).await;
    assert_eq!(retry.status, 201, "{}", retry.text());
    assert!(
        retry.is_replay(),
        "committed before the hold: the retry is the replay"
    );
    assert!(
        started.elapsed() < Duration::from_millis(2500),
        "not held itself"
    );
    // A patient client gets the held answer: the first execution's, after the hold.
    let faults = json!([{"fault": "hold-response", "hold_ms": 1200}]);
    assert_eq!(arm(&http, &stack, &token, faults).await.status, 200);
    let started = std::time::Instant::now();
    let other = client::body("cart-hold-2", 501, "tok_visa");
    let held = client::checkout(&http, stack.url(), &token, "hold-2", &other).await;
    assert_eq!(held.status, 201);
    assert!(!held.is_replay());
    assert!(
        started.elapsed() >= Duration::from_millis(1200),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(relayed_charges(&http, &stack, &token).await.len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_worker_holds_its_claim_so_a_retry_gets_409_with_retry_after() {
    let stack = demo_stack(&["--lock-ms", "5000"]).await;
    let http = client::http();
    let token = session();
    let faults = json!([{"fault": "slow-worker", "hold_ms": 2000}]);
    assert_eq!(arm(&http, &stack, &token, faults).await.status, 200);
    let body = client::body("cart-slow", 700, "tok_visa");
    let started = std::time::Instant::now();
    let first = {
        let (http, url, token, body) = (
            http.clone(),
            stack.url().to_owned(),
            token.clone(),
            body.clone(),
        );
        tokio::spawn(async move { client::checkout(&http, &url, &token, "slow-1", &body).await })
    };
    // The claim exists as soon as the worker took it.
    let mut state = Value::Null;
    for _ in 0..50 {
        state = get(&http, &stack, "/api/keys/slow-1", &token).await.json();
        if state["state"] == "in_flight" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(state["state"], "in_flight", "{state}");
    let busy = client::checkout(&http, stack.url(), &token, "slow-1", &body).await;
    assert_eq!(busy.status, 409, "{}", busy.text());
    let wait: u64 = busy.header("retry-after").unwrap().parse().unwrap();
    assert!(
        (1..=5).contains(&wait),
        "Retry-After is the lease left: {wait}"
    );
    let first = first.await.unwrap();
    assert_eq!(first.status, 201, "{}", first.text());
    assert!(started.elapsed() >= Duration::from_millis(2000));
    let retry = client::checkout(&http, stack.url(), &token, "slow-1", &body).await;
    assert!(retry.is_replay() && retry.body == first.body);
    assert_eq!(relayed_charges(&http, &stack, &token).await.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashed_worker_leaves_a_stale_claim_that_a_retry_takes_over_with_one_charge() {
    let stack = demo_stack(&["--lock-ms", "1500"]).await;
    let http = client::http();
    let (token, other) = (session(), session());
    let faults = json!([{"fault": "crash-after-charge"}]);
    assert_eq!(arm(&http, &stack, &token, faults).await.status, 200);
    let body = client::body("cart-crash", 900, "tok_visa");
    let seen = raw_checkout(&stack, &token, "crash-1", &body).await;
    assert!(seen.is_empty(), "{:?}", String::from_utf8_lossy(&seen));

    // PayCo charged; nothing here committed: the order is pending, the claim in flight.
    let orders = client::orders(&http, stack.url(), &token).await;
    assert_eq!(orders[0]["status"], "pending");
    let order = orders[0]["id"].as_i64().unwrap();
    assert_eq!(
        relayed_charges(&http, &stack, &token).await,
        vec![(order, format!("charge:{order}"))]
    );
    let state = get(&http, &stack, "/api/keys/crash-1", &token).await.json();
    assert_eq!(state["state"], "in_flight", "{state}");
    let early = client::checkout(&http, stack.url(), &token, "crash-1", &body).await;
    assert_eq!(
        early.status,
        409,
        "the dead worker's lease is live: {}",
        early.text()
    );

    // Only that worker died: the server serves other sessions.
    let theirs = client::body("cart-alive", 10, "tok_visa");
    let alive = client::checkout(&http, stack.url(), &other, "crash-1", &theirs).await;
    assert_eq!(alive.status, 201, "{}", alive.text());

    let settled = client::checkout_until_settled(
        &http,
        stack.url(),
        &token,
        "crash-1",
        &body,
        Duration::from_secs(10),
    )
    .await;
    assert_eq!(settled.status, 201, "{}", settled.text());
    assert_eq!(settled.json()["order"], order, "the same order, resumed");
    assert_eq!(
        relayed_charges(&http, &stack, &token).await.len(),
        1,
        "one charge"
    );
    let story = events(&http, &stack, &token, "\"taken_over\"").await;
    assert!(story.contains("fault: crash-after-charge"), "{story}");
    assert!(story.contains("\"taken_over\""), "{story}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unavailable_answers_503_before_anything_is_claimed() {
    let stack = demo_stack(&[]).await;
    let http = client::http();
    let token = session();
    assert_eq!(
        arm(&http, &stack, &token, json!([{"fault": "unavailable"}]))
            .await
            .status,
        200
    );
    let body = client::body("cart-503", 50, "tok_visa");
    let refused = client::checkout(&http, stack.url(), &token, "u-1", &body).await;
    assert_eq!(refused.status, 503);
    assert_eq!(refused.header("retry-after"), Some("1"));
    refused.problem();
    let state = get(&http, &stack, "/api/keys/u-1", &token).await;
    assert_eq!(state.status, 404, "nothing claimed: {}", state.text());
    assert!(client::orders(&http, stack.url(), &token).await.is_empty());
    let retry = client::checkout(&http, stack.url(), &token, "u-1", &body).await;
    assert_eq!(retry.status, 201);
    assert!(!retry.is_replay());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn probabilistic_and_counted_faults_fire_for_their_tenant_only() {
    let stack = demo_stack(&[]).await;
    let http = client::http();
    let (mine, other) = (session(), session());
    let faults = json!([{"fault": "unavailable", "probability": 0.5}]);
    assert_eq!(arm(&http, &stack, &mine, faults).await.status, 200);
    let mut refused = 0;
    for i in 0..40 {
        let body = client::body(&format!("cart-p{i}"), 10, "tok_visa");
        let a = client::checkout(&http, stack.url(), &mine, &format!("p-{i}"), &body).await;
        refused += usize::from(a.status == 503);
        let b = client::checkout(&http, stack.url(), &other, &format!("p-{i}"), &body).await;
        assert_eq!(b.status, 201, "the other session is never refused");
    }
    // Binomial(40, 0.5) falls outside 5..=35 about once in a million runs.
    assert!((5..=35).contains(&refused), "{refused} of 40 refused");
    assert_eq!(
        get(&http, &stack, "/api/demo/faults", &mine).await.json()[0]["times"],
        Value::Null
    );

    let faults = json!([{"fault": "unavailable", "probability": 1, "times": 3}]);
    assert_eq!(arm(&http, &stack, &mine, faults).await.status, 200);
    let mut statuses = Vec::new();
    for i in 0..5 {
        let body = client::body(&format!("cart-t{i}"), 10, "tok_visa");
        let a = client::checkout(&http, stack.url(), &mine, &format!("t-{i}"), &body).await;
        statuses.push(a.status);
    }
    assert_eq!(statuses, [503, 503, 503, 201, 201]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_lists_are_per_tenant_and_nonsense_is_refused() {
    let stack = demo_stack(&["--lock-ms", "2500"]).await;
    let http = client::http();
    let (mine, other) = (session(), session());
    let faults =
        json!([{"fault": "slow-worker", "hold_ms": 1000}, {"fault": "drop-response", "times": 2}]);
    let armed = arm(&http, &stack, &mine, faults).await;
    assert_eq!(armed.status, 200);
    let info = get(&http, &stack, "/api/demo", &mine).await.json();
    assert_eq!(info["tenant"], mine.as_str());
    assert_eq!(info["lock_ms"], 2500);
    assert_eq!(info["faults"], armed.json());
    assert_eq!(
        get(&http, &stack, "/api/demo/faults", &other).await.json(),
        json!([])
    );
    // Configured tenants may arm faults too, each for itself.
    assert_eq!(
        get(&http, &stack, "/api/demo/faults", TENANT_A.0)
            .await
            .json(),
        json!([])
    );

    for bad in [
        json!({"fault": "unavailable"}),
        json!([{"fault": "explode"}]),
        json!([{"fault": "unavailable", "probability": 2}]),
        json!([{"fault": "unavailable", "times": 0}]),
        json!([{"fault": "drop-response", "hold_ms": 5}]),
        json!([{"fault": "hold-response", "hold_ms": 999_999_999}]),
        json!(vec![json!({"fault": "unavailable"}); 17]),
    ] {
        let a = arm(&http, &stack, &mine, bad.clone()).await;
        assert_eq!(a.status, 400, "{bad}: {}", a.text());
        a.problem();
    }
    let unread = get(&http, &stack, "/api/demo/faults", "nobody").await;
    assert_eq!(unread.status, 401);
    // Refusals changed nothing; [] disarms.
    assert_eq!(
        get(&http, &stack, "/api/demo/faults", &mine).await.json(),
        armed.json()
    );
    assert_eq!(arm(&http, &stack, &mine, json!([])).await.json(), json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ledger_relay_shows_each_session_its_own_charges_only() {
    let stack = demo_stack(&[]).await;
    let http = client::http();
    let (a, b) = (session(), session());
    let mut orders_of_a = Vec::new();
    for (token, i) in [(&a, 1), (&b, 2), (&a, 3), (&b, 4)] {
        let body = client::body(&format!("cart-{i}"), 100 * i, "tok_visa");
        let paid = client::checkout(&http, stack.url(), token, &format!("k-{i}"), &body).await;
        assert_eq!(paid.status, 201, "{}", paid.text());
        if token == &a {
            orders_of_a.push(paid.json()["order"].as_i64().unwrap());
        }
    }
    let declined = client::body("cart-declined", 5, "tok_decline");
    let answer = client::checkout(&http, stack.url(), &a, "declined", &declined).await;
    assert_eq!(answer.status, 402);
    let ledger = get(&http, &stack, "/api/demo/ledger", &a).await.json();
    let rows = ledger.as_array().unwrap();
    let charged: Vec<i64> = rows
        .iter()
        .filter(|r| r["outcome"] == "charged")
        .map(|r| r["order"].as_i64().unwrap())
        .collect();
    assert_eq!(charged, orders_of_a);
    assert_eq!(
        rows.iter().filter(|r| r["outcome"] == "declined").count(),
        1
    );
    assert_eq!(relayed_charges(&http, &stack, &b).await.len(), 2);
    assert_eq!(relayed_charges(&http, &stack, &session()).await, vec![]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_source_reads_its_stream_with_a_demo_access_token_only() {
    let stack = demo_stack(&[]).await;
    let http = client::http();
    let token = session();
    let body = client::body("cart-es", 100, "tok_visa");
    assert_eq!(
        client::checkout(&http, stack.url(), &token, "es-1", &body)
            .await
            .status,
        201
    );
    let url = format!("{}/api/events?x=1&access_token={token}", stack.url());
    let stream = http.get(url).send().await.unwrap();
    assert_eq!(stream.status(), 200);
    let seen = read_stream(stream, "\"saved\"", Duration::from_secs(5)).await;
    assert!(
        seen.contains("\"es-1\"") && seen.contains("\"saved\""),
        "{seen}"
    );
    for refused in [TENANT_A.0, "demo-nope"] {
        let url = format!("{}/api/claims?access_token={refused}", stack.url());
        let a = client::answer(http.get(url).send().await.unwrap()).await;
        assert_eq!(a.status, 401, "{refused}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cors_lets_the_demo_page_switch_faults_and_resume_its_stream() {
    let stack = demo_stack(&["--cors-origin", ORIGIN]).await;
    let http = client::http();
    let preflight = client::answer(
        http.request(
            reqwest::Method::OPTIONS,
            format!("{}/api/demo/faults", stack.url()),
        )
        .header("Origin", ORIGIN)
        .header("Access-Control-Request-Method", "PUT")
        .header(
            "Access-Control-Request-Headers",
            "authorization,content-type,last-event-id",
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(
        preflight.header("access-control-allow-origin"),
        Some(ORIGIN)
    );
    let methods = preflight.header("access-control-allow-methods").unwrap();
    assert!(methods.contains("PUT"), "{methods}");
    let headers = preflight
        .header("access-control-allow-headers")
        .unwrap()
        .to_lowercase();
    assert!(headers.contains("last-event-id"), "{headers}");
}
