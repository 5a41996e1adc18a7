//! A small HTTP client for the tests: checkouts, PayCo charges and listings, each answer
//! kept whole (status, headers, body bytes) so replays can be compared byte for byte.

#![allow(dead_code)]

use std::time::Duration;

use idem_store::http::Problem;
use serde_json::Value;

use super::process::{Service, MERCHANT};

/// One answer, whole.
#[derive(Debug, Clone)]
pub struct Answer {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    pub fn is_replay(&self) -> bool {
        self.header("idempotent-replayed") == Some("true")
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    /// The RFC 9457 body, checking its content type and that its status matches.
    pub fn problem(&self) -> Problem {
        assert_eq!(
            self.header("content-type"),
            Some("application/problem+json"),
            "{self:?}"
        );
        let p: Problem = serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)));
        assert_eq!(p.status, self.status);
        p
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(30))
        .build()
        .expect("reqwest client")
}

/// A client that opens a new connection for every request. For tests that send bodies the
/// server refuses before reading them (413): the server then closes that connection, and a
/// pooled client could pick the closing connection for its next request and fail with
/// "connection closed" (a client-side race, not the server's answer).
pub fn http_fresh_connections() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("reqwest client")
}

/// The answer, whole. A problem body's `type` must be one the services describe at
/// `GET /problems/{name}` (`idem_server::problems::all()`; `problems.rs` checks over HTTP that
/// every entry resolves): so every type any HTTP test sees resolves to 200. A 401 must carry
/// its Bearer challenge (RFC 9110 §15.5.2; `challenge.rs` checks each route's exact value).
pub async fn answer(response: reqwest::Response) -> Answer {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response.bytes().await.expect("read the body").to_vec();
    let answer = Answer {
        status,
        headers,
        body,
    };
    if answer.header("content-type") == Some("application/problem+json") {
        let kind = answer.problem().kind;
        assert!(
            idem_server::problems::describe(&kind).is_some(),
            "problem type {kind} has no description at GET /problems/..."
        );
    }
    if answer.status == 401 {
        let challenge = answer.header("www-authenticate").unwrap_or_default();
        assert!(
            challenge.starts_with(r#"Bearer realm="idem""#),
            "a 401 without its challenge: {answer:?}"
        );
    }
    answer
}

/// `POST url` as `token` with `key` (sent as given: a bare token or a structured-field
/// string) and a JSON `body`; `None` when the connection failed.
pub async fn try_post(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    key: &str,
    body: &str,
) -> Option<Answer> {
    let sent = http
        .post(url)
        .bearer_auth(token)
        .header("Idempotency-Key", key)
        .header("Content-Type", "application/json")
        .body(body.to_owned())
        .send()
        .await;
    match sent {
        Ok(response) => Some(answer(response).await),
        Err(_) => None,
    }
}

/// [`try_post`] that must get an answer.
pub async fn post(http: &reqwest::Client, url: &str, token: &str, key: &str, body: &str) -> Answer {
    try_post(http, url, token, key, body)
        .await
        .unwrap_or_else(|| panic!("POST {url} got no answer"))
}

/// `POST /api/checkout` as tenant `token` with `key` and `body`.
pub async fn checkout(
    http: &reqwest::Client,
    server: &str,
    token: &str,
    key: &str,
    body: &str,
) -> Answer {
    post(http, &format!("{server}/api/checkout"), token, key, body).await
}

/// Retry a checkout as a well-behaved client does (the same key and bytes), waiting out
/// 409s, 502/503s and refused connections, until another answer comes or `within` passes.
pub async fn checkout_until_settled(
    http: &reqwest::Client,
    server: &str,
    token: &str,
    key: &str,
    body: &str,
    within: Duration,
) -> Answer {
    let deadline = tokio::time::Instant::now() + within;
    let url = format!("{server}/api/checkout");
    loop {
        match try_post(http, &url, token, key, body).await {
            Some(a) if ![409, 502, 503].contains(&a.status) => return a,
            other => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "checkout {key} not settled in {within:?}; last: {other:?}"
                );
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        }
    }
}

pub fn body(cart: &str, amount: i64, card: &str) -> String {
    format!(r#"{{"cart":"{cart}","amount":{amount},"card":"{card}"}}"#)
}

/// `GET path` as `token`, as JSON.
pub async fn get_json(http: &reqwest::Client, url: &str, token: &str) -> Value {
    let a = answer(
        http.get(url)
            .bearer_auth(token)
            .send()
            .await
            .expect("send GET"),
    )
    .await;
    assert_eq!(a.status, 200, "GET {url}: {}", a.text());
    a.json()
}

/// PayCo's ledger rows for the tests' merchant.
pub async fn ledger(http: &reqwest::Client, payco: &Service) -> Vec<Value> {
    let v = get_json(http, &format!("{}/ledger", payco.url), MERCHANT.0).await;
    v.as_array().cloned().expect("the ledger is an array")
}

/// How many `charged` ledger rows each order has, as (order, count) with count > 0.
pub async fn charges_per_order(http: &reqwest::Client, payco: &Service) -> Vec<(i64, usize)> {
    let mut counts = std::collections::BTreeMap::new();
    for row in ledger(http, payco).await {
        if row["outcome"] == "charged" {
            *counts.entry(row["order"].as_i64().unwrap()).or_insert(0) += 1;
        }
    }
    counts.into_iter().collect()
}

/// The tenant's orders, as JSON objects.
pub async fn orders(http: &reqwest::Client, server: &str, token: &str) -> Vec<Value> {
    let v = get_json(http, &format!("{server}/api/orders"), token).await;
    v.as_array().cloned().expect("orders are an array")
}

/// Read the SSE stream until `until` appears in it or `within` passes; what was read.
pub async fn read_stream(mut response: reqwest::Response, until: &str, within: Duration) -> String {
    let mut seen = String::new();
    let _ = tokio::time::timeout(within, async {
        while let Ok(Some(chunk)) = response.chunk().await {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains(until) {
                return;
            }
        }
    })
    .await;
    seen
}
