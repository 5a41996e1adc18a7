//! The load generator: `c` tasks, each on a keep-alive HTTP/1.1 connection of its own, send
//! `n` checkouts in all, each waiting for its answer before the next (closed loop); latency
//! per request, the run's requests/s, and the answers' statuses.
//!
//! The timed loop speaks through hyper's bare connection (`hyper::client::conn::http1`), not
//! reqwest: the load shares CPU 0 with the server in the pinned runs, and the limit it is
//! compared with has no HTTP client at all, so the generator should cost as little as a
//! client can (as wrk or pgbench would), without reqwest's pool, URL parsing and middleware. A
//! reqwest client stays for the readiness probe and the wait-mode bursts, which are not
//! timed against a limit.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::json;

pub fn client(c: usize) -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(c)
        .timeout(Duration::from_secs(30))
        .build()
        .expect("client")
}

pub async fn wait_ready(client: &reqwest::Client, url: &str) {
    for _ in 0..200 {
        if let Ok(r) = client.get(format!("{url}/readyz")).send().await {
            if r.status().is_success() {
                return;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the checkout did not become ready");
}

/// Run `n` requests; `request(i)` gives key (empty: none) and body of the i-th.
pub async fn run(
    url: &str,
    n: usize,
    c: usize,
    request: impl Fn(usize) -> (String, String) + Send + Sync + 'static + Clone,
) -> serde_json::Value {
    let authority = url
        .strip_prefix("http://")
        .expect("an http:// URL")
        .to_owned();
    let bearer = format!("Bearer {}", crate::TOKEN);
    let mut senders = Vec::with_capacity(c);
    for _ in 0..c {
        senders.push(connect(&authority).await);
    }
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for mut sender in senders {
        let (authority, bearer, next, request) = (
            authority.clone(),
            bearer.clone(),
            next.clone(),
            request.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    return (latencies, statuses);
                }
                let (key, body) = request(i);
                let t = Instant::now();
                let mut post = hyper::Request::post("/api/checkout")
                    .header(hyper::header::HOST, &authority)
                    .header(hyper::header::AUTHORIZATION, &bearer)
                    .header(hyper::header::CONTENT_TYPE, "application/json");
                // An empty key: the unkeyed comparison route.
                if !key.is_empty() {
                    post = post.header("Idempotency-Key", key);
                }
                let post = post.body(Full::new(Bytes::from(body))).expect("request");
                let r = sender.send_request(post).await.expect("send");
                let status = r.status().as_u16();
                let _ = r.into_body().collect().await.expect("body");
                latencies.push(t.elapsed().as_secs_f64() * 1000.0);
                *statuses.entry(status).or_default() += 1;
            }
        }));
    }
    let mut all = Vec::with_capacity(n);
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for t in tasks {
        let (l, s) = t.await.expect("load task");
        all.extend(l);
        for (k, v) in s {
            *statuses.entry(k).or_default() += v;
        }
    }
    let secs = started.elapsed().as_secs_f64();
    all.sort_by(f64::total_cmp);
    let pct = |p: f64| all[((all.len() as f64 * p) as usize).min(all.len() - 1)];
    json!({
        "rps": n as f64 / secs,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "statuses": statuses,
    })
}

/// A keep-alive HTTP/1.1 connection to `authority`, its driver running on a task of its own.
async fn connect(authority: &str) -> SendRequest<Full<Bytes>> {
    let stream = tokio::net::TcpStream::connect(authority)
        .await
        .expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .expect("handshake");
    tokio::spawn(async move {
        // Ends when the run drops its sender.
        let _ = connection.await;
    });
    sender
}
