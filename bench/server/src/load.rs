//! The load generator: `c` tasks on one keep-alive reqwest client send `n` checkouts in all,
//! each waiting for its answer before the next (closed loop); latency per request, the
//! run's requests/s, and the answers' statuses.

use std::{
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
    time::{Duration, Instant},
};

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
    client: &reqwest::Client,
    url: &str,
    n: usize,
    c: usize,
    request: impl Fn(usize) -> (String, String) + Send + Sync + 'static + Clone,
) -> serde_json::Value {
    let next = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..c {
        let (client, url, next, request) = (
            client.clone(),
            url.to_owned(),
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
                let mut post = client
                    .post(format!("{url}/api/checkout"))
                    .bearer_auth(crate::TOKEN)
                    .header("Content-Type", "application/json")
                    .body(body);
                // An empty key: the unkeyed comparison route.
                if !key.is_empty() {
                    post = post.header("Idempotency-Key", key);
                }
                let r = post.send().await.expect("send");
                let status = r.status().as_u16();
                let _ = r.bytes().await.expect("body");
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
