//! Bad input over HTTP: malformed and oversized keys, bodies over the limit (declared and
//! chunked), invalid JSON, duplicate JSON members, wrong parameters, bad tokens, a key
//! reused across tenants, slow-loris clients. Each gets a clear 4xx with a problem body (or
//! the connection is closed on time); never a 5xx, never a panic, never another tenant's
//! answer.

use std::time::{Duration, Instant};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::{
    client::{self, Answer},
    stack::Stack,
    support::process::{TENANT_A, TENANT_B},
};

const LIMIT: usize = 1024;

async fn stack() -> Stack {
    Stack::sqlite(&[
        "--max-body-bytes",
        &LIMIT.to_string(),
        "--header-timeout-ms",
        "1000",
        "--body-timeout-ms",
        "1000",
    ])
    .await
}

fn good() -> String {
    client::body("cart-bad", 500, "tok_visa")
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    headers: &[(&str, &[u8])],
    body: reqwest::Body,
) -> Answer {
    let mut request = http.post(format!("{url}/api/checkout"));
    for (name, value) in headers {
        request = request.header(
            *name,
            reqwest::header::HeaderValue::from_bytes(value).expect("a sendable header"),
        );
    }
    client::answer(request.body(body).send().await.expect("send")).await
}

fn assert_problem(a: &Answer, status: u16, kind_contains: &str, what: &str) {
    assert_eq!(a.status, status, "{what}: {}", a.text());
    let p = a.problem();
    assert!(
        p.kind.contains(kind_contains),
        "{what}: problem type {} lacks {kind_contains}",
        p.kind
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_keys_bodies_and_tokens_get_clear_4xx() {
    let mut stack = stack().await;
    // The 413 cases leave their connection closing: one connection per request.
    let http = client::http_fresh_connections();
    let url = stack.url().to_owned();
    let auth = format!("Bearer {}", TENANT_A.0);
    let auth = auth.as_bytes();
    let json: (&str, &[u8]) = ("content-type", b"application/json");
    let long_key = "k".repeat(256);
    // (what, headers, body, status, a word of the problem type)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a [u8])>, Vec<u8>, u16, &'a str);
    let cases: Vec<Case> = vec![
        (
            "no key",
            vec![("authorization", auth), json],
            good().into(),
            400,
            "key-missing",
        ),
        (
            "empty key",
            vec![("authorization", auth), ("idempotency-key", b"\"\""), json],
            good().into(),
            400,
            "key-invalid",
        ),
        (
            "256-char key",
            vec![
                ("authorization", auth),
                ("idempotency-key", long_key.as_bytes()),
                json,
            ],
            good().into(),
            400,
            "key-invalid",
        ),
        (
            "unterminated sf-string",
            vec![("authorization", auth), ("idempotency-key", b"\"abc"), json],
            good().into(),
            400,
            "key-invalid",
        ),
        (
            "bad sf parameter",
            vec![
                ("authorization", auth),
                ("idempotency-key", b"\"abc\";V=1"),
                json,
            ],
            good().into(),
            400,
            "key-invalid",
        ),
        (
            "non-ascii key",
            vec![
                ("authorization", auth),
                ("idempotency-key", b"k\xc3\xa9"),
                json,
            ],
            good().into(),
            400,
            "key-invalid",
        ),
        (
            "two keys",
            vec![
                ("authorization", auth),
                ("idempotency-key", b"a"),
                ("idempotency-key", b"b"),
                json,
            ],
            good().into(),
            400,
            "key-invalid",
        ),
        (
            "invalid json",
            vec![
                ("authorization", auth),
                ("idempotency-key", b"bad-json"),
                json,
            ],
            b"{\"cart\":".to_vec(),
            400,
            "not-json",
        ),
        (
            "duplicate members",
            vec![("authorization", auth), ("idempotency-key", b"dup"), json],
            br#"{"cart":"c","amount":5,"amount":6000,"card":"tok_visa"}"#.to_vec(),
            400,
            "not-json",
        ),
        (
            "wrong parameters",
            vec![
                ("authorization", auth),
                ("idempotency-key", b"params"),
                json,
            ],
            br#"{"cart":"c","amount":-1,"card":"tok_visa"}"#.to_vec(),
            400,
            "invalid-parameters",
        ),
        (
            "declared body over the limit",
            vec![("authorization", auth), ("idempotency-key", b"big"), json],
            vec![b' '; LIMIT + 1],
            413,
            "too-large",
        ),
        (
            "no token",
            vec![("idempotency-key", b"k"), json],
            good().into(),
            401,
            "unauthorized",
        ),
        (
            "unknown token",
            vec![
                ("authorization", b"Bearer nobody"),
                ("idempotency-key", b"k"),
                json,
            ],
            good().into(),
            401,
            "unauthorized",
        ),
    ];
    for (what, headers, body, status, kind) in cases {
        let a = post(&http, &url, &headers, body.into()).await;
        assert_problem(&a, status, kind, what);
    }

    // A chunked body (no Content-Length) over the limit is cut off while it is read.
    let chunks = futures_util::stream::iter((0..64).map(|_| {
        Ok::<_, std::io::Error>(hyper::body::Frame::data(axum::body::Bytes::from(vec![
            b' ';
            100
        ])))
    }));
    let a = post(
        &http,
        &url,
        &[
            ("authorization", auth),
            ("idempotency-key", b"chunked"),
            json,
        ],
        reqwest::Body::wrap(http_body_util::StreamBody::new(chunks)),
    )
    .await;
    assert_problem(&a, 413, "too-large", "chunked body over the limit");

    // Unknown routes and methods are problems too.
    let a = client::answer(http.get(format!("{url}/nope")).send().await.unwrap()).await;
    assert_problem(&a, 404, "not-found", "unknown route");
    let a = client::answer(
        http.delete(format!("{url}/api/checkout"))
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_problem(&a, 405, "method-not-allowed", "unknown method");
    let a = client::answer(
        http.get(format!("{url}/api/orders/not-a-number"))
            .bearer_auth(TENANT_A.0)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_problem(&a, 404, "not-found", "bad order id");

    // None of it cost an order or a charge, and the server still serves.
    assert!(client::orders(&http, &url, TENANT_A.0).await.is_empty());
    let ok = client::checkout(&http, &url, TENANT_A.0, "after-bad", &good()).await;
    assert_eq!(ok.status, 201, "{}", ok.text());
    assert_no_panic(&mut stack).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_reused_by_another_tenant_never_replays_across_tenants() {
    let stack = stack().await;
    let http = client::http();
    let url = stack.url();
    let a = client::checkout(&http, url, TENANT_A.0, "shared-key", &good()).await;
    assert_eq!(a.status, 201, "{}", a.text());
    // Tenant B picks the same key, the same body and then another body.
    let b = client::checkout(&http, url, TENANT_B.0, "shared-key", &good()).await;
    assert_eq!(b.status, 201, "{}", b.text());
    assert!(
        !b.is_replay(),
        "tenant B must not be replayed tenant A's answer"
    );
    assert_ne!(
        b.json()["order"],
        a.json()["order"],
        "B got an order of its own"
    );
    let other = client::body("cart-b", 777, "tok_visa");
    let b2 = client::checkout(&http, url, TENANT_B.0, "shared-key", &other).await;
    assert_eq!(
        b2.status,
        422,
        "B's own key with another body: {}",
        b2.text()
    );
    // Each tenant sees only its own order.
    let orders_a = client::orders(&http, url, TENANT_A.0).await;
    let orders_b = client::orders(&http, url, TENANT_B.0).await;
    assert_eq!((orders_a.len(), orders_b.len()), (1, 1));
    assert_eq!(orders_a[0]["id"], a.json()["order"]);
    assert_eq!(orders_b[0]["id"], b.json()["order"]);
    // And A's replay is still A's.
    let again = client::checkout(&http, url, TENANT_A.0, "shared-key", &good()).await;
    assert!(again.is_replay());
    assert_eq!(again.body, a.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_loris_clients_are_cut_off_and_others_are_served() {
    let mut stack = stack().await;
    let addr = stack.server.addr().to_owned();

    // Headers trickling in, one byte every 200 ms: closed after the 1 s header timeout.
    let mut headers = TcpStream::connect(&addr).await.unwrap();
    headers
        .write_all(b"POST /api/checkout HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    let started = Instant::now();
    let trickle = async {
        for b in
            b"X-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa".iter()
        {
            if headers.write_all(&[*b]).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(15), trickle)
        .await
        .expect("the writes end when the server closes");
    let mut rest = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), headers.read_to_end(&mut rest)).await;
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "a slow header sender is cut off near the 1 s timeout, took {took:?}"
    );

    // An idle connection is closed too.
    let mut idle = TcpStream::connect(&addr).await.unwrap();
    let mut buf = [0u8; 1];
    let closed = tokio::time::timeout(Duration::from_secs(5), idle.read(&mut buf)).await;
    assert!(
        matches!(closed, Ok(Ok(0)) | Ok(Err(_))),
        "idle connection closed: {closed:?}"
    );

    // Headers on time, then a body that stalls: 408 with a problem body after 1 s.
    let mut body = TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /api/checkout HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nIdempotency-Key: slow-body\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"cart\"",
        TENANT_A.0
    );
    body.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), body.read_to_end(&mut answer)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "stalled body: {answer}");
    assert!(answer.contains("application/problem+json"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(5));

    // A declared length over the limit is refused before the body is read: the answer comes
    // at once, not after the body timeout.
    let mut huge = TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /api/checkout HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nIdempotency-Key: huge\r\nContent-Length: 100000000\r\n\r\n{{\"cart\"",
        TENANT_A.0
    );
    huge.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let mut first = vec![0u8; 64];
    let n = tokio::time::timeout(Duration::from_secs(5), huge.read(&mut first))
        .await
        .expect("an answer before the body timeout")
        .unwrap();
    let line = String::from_utf8_lossy(&first[..n]);
    assert!(line.starts_with("HTTP/1.1 413"), "{line}");
    assert!(
        started.elapsed() < Duration::from_millis(900),
        "{:?}",
        started.elapsed()
    );

    // While all that went on, others were served.
    let http = client::http();
    let ok = client::checkout(&http, stack.url(), TENANT_A.0, "punctual", &good()).await;
    assert_eq!(ok.status, 201, "{}", ok.text());
    assert_no_panic(&mut stack).await;
}

/// The server is alive and logged no panic.
async fn assert_no_panic(stack: &mut Stack) {
    let http = client::http();
    let a = client::answer(
        http.get(format!("{}/api/orders", stack.url()))
            .bearer_auth(TENANT_A.0)
            .send()
            .await
            .expect("the server is still up"),
    )
    .await;
    assert_eq!(a.status, 200);
    stack.server.assert_no_stderr("panicked").await;
}
