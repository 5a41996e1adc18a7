//! The one exception to "every error is a problem body": a request hyper refuses while it
//! parses the head never reaches axum, and hyper 1 answers it itself with a status line and
//! no body (`on_parse_error` in hyper's `proto/h1/conn.rs`; its server builder has no hook
//! for that answer). This pins what a client gets today, over a raw connection: 431 for a
//! head over hyper's buffer or with over 100 header fields, 414 for a request target over
//! 65,534 bytes, 400 for a malformed head; each with `content-length: 0`, no content type,
//! and the connection closed; and the server serves the next client. If a hyper upgrade
//! changes any of it, this test says so (crates/server/README.md, "HTTP").

use std::time::Duration;

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::TcpStream,
};

use crate::{client, stack::Stack, support::process::TENANT_A};

/// hyper's default `max_buf_size` (8,192 + 4,096 × 100 bytes): a head still incomplete at
/// this size is refused. Exactly this many bytes are sent, so the server has read them all
/// when it answers (unread bytes would make its close a reset, losing the answer).
const HYPER_MAX_BUF: usize = 8192 + 4096 * 100;

/// What the server wrote before it closed the connection, after `request`.
async fn exchange(addr: &str, request: &[u8]) -> String {
    let mut tcp = TcpStream::connect(addr).await.expect("connect");
    tcp.write_all(request).await.expect("write the request");
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), tcp.read_to_end(&mut answer))
        .await
        .expect("the server answers and closes within 10 s")
        .expect("read the answer");
    String::from_utf8(answer).expect("a text answer")
}

/// Checks `answer` is hyper's own: `status`, `content-length: 0`, no content type, no body.
fn assert_bodyless(answer: &str, status: &str, what: &str) {
    let (head, body) = answer
        .split_once("\r\n\r\n")
        .unwrap_or_else(|| panic!("{what}: no complete head in {answer:?}"));
    assert!(
        head.starts_with(&format!("HTTP/1.1 {status}")),
        "{what}: {head}"
    );
    let head = head.to_ascii_lowercase();
    assert!(head.contains("\r\ncontent-length: 0"), "{what}: {head}");
    assert!(!head.contains("content-type"), "{what}: {head}");
    assert_eq!(body, "", "{what}: a body");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hyper_answers_head_errors_itself_without_a_body() {
    let stack = Stack::sqlite(&[]).await;
    let addr = stack.server.addr().to_owned();

    let mut many = String::from("GET /api/orders HTTP/1.1\r\nHost: x\r\n");
    for i in 0..100 {
        many.push_str(&format!("X-Field-{i}: v\r\n"));
    }
    many.push_str("\r\n");
    let answer = exchange(&addr, many.as_bytes()).await;
    assert_bodyless(&answer, "431", "101 header fields");

    let start = "GET /api/orders HTTP/1.1\r\nHost: x\r\nCookie: ";
    let big = format!("{start}{}", "c".repeat(HYPER_MAX_BUF - start.len()));
    assert_eq!(big.len(), HYPER_MAX_BUF);
    let answer = exchange(&addr, big.as_bytes()).await;
    assert_bodyless(&answer, "431", "a head over hyper's buffer");

    let long = format!(
        "GET /problems/{} HTTP/1.1\r\nHost: x\r\n\r\n",
        "a".repeat(65_535)
    );
    let answer = exchange(&addr, long.as_bytes()).await;
    assert_bodyless(&answer, "414", "a target over 65,534 bytes");

    let malformed = "GET /api/orders HTTP/1.1\r\nHost: x\r\nNo colon here\r\n\r\n";
    let answer = exchange(&addr, malformed.as_bytes()).await;
    assert_bodyless(&answer, "400", "a header line without a colon");

    // A target just under hyper's limit reaches the routes, and gets a problem body.
    let under = format!(
        "GET /problems/{} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        "a".repeat(65_000)
    );
    let answer = exchange(&addr, under.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 404"), "{answer:.200}");
    assert!(answer.contains("application/problem+json"), "{answer:.400}");

    // And the server still serves.
    let orders = client::orders(&client::http(), stack.url(), TENANT_A.0).await;
    assert!(orders.is_empty());
}
