//! Wait mode under a burst: the first checkout of a key is in flight (PayCo's stub holds it
//! [`stub::SLOW_MS`](crate::stub::SLOW_MS)) when 50 duplicates of it arrive at once; with wait
//! mode each duplicate waits for the first answer and is answered its replay, instead of a 409.
//! Measured: the duplicates' answers per second (from the burst's start to its last answer) and
//! their latency, p50 and p99, over several bursts, each on a fresh key.

use std::time::{Duration, Instant};

use serde_json::json;

/// Duplicates per burst.
pub const DUPLICATES: usize = 50;
/// Bursts measured.
const BURSTS: usize = 10;
/// How long after the first request the duplicates are sent (it must be in flight).
const AFTER_FIRST: Duration = Duration::from_millis(20);

fn slow_body(i: usize) -> String {
    format!(
        r#"{{"cart":"burst-{i}","amount":{},"card":"{}"}}"#,
        2000 + i,
        crate::stub::SLOW_CARD
    )
}

async fn post(client: &reqwest::Client, url: &str, key: &str, body: String) -> (u16, bool, f64) {
    let t = Instant::now();
    let r = client
        .post(format!("{url}/api/checkout"))
        .bearer_auth(crate::TOKEN)
        .header("Content-Type", "application/json")
        .header("Idempotency-Key", key)
        .body(body)
        .send()
        .await
        .expect("send");
    let status = r.status().as_u16();
    let replayed = r.headers().contains_key("idempotent-replayed");
    let _ = r.bytes().await.expect("body");
    (status, replayed, t.elapsed().as_secs_f64() * 1000.0)
}

/// The bursts against the wait-mode checkout at `url`.
pub async fn run(url: &str) -> serde_json::Value {
    let client = crate::load::client(DUPLICATES + 1);
    let run = std::process::id();
    let mut latencies = Vec::with_capacity(BURSTS * DUPLICATES);
    let mut statuses = std::collections::BTreeMap::<String, usize>::new();
    let mut busy = 0.0;
    for b in 0..BURSTS {
        let key = format!("burst-{run}-{b}");
        let first = tokio::spawn({
            let (client, url, key) = (client.clone(), url.to_owned(), key.clone());
            async move { post(&client, &url, &key, slow_body(b)).await }
        });
        tokio::time::sleep(AFTER_FIRST).await;
        let started = Instant::now();
        let duplicates: Vec<_> = (0..DUPLICATES)
            .map(|_| {
                let (client, url, key) = (client.clone(), url.to_owned(), key.clone());
                tokio::spawn(async move { post(&client, &url, &key, slow_body(b)).await })
            })
            .collect();
        for d in duplicates {
            let (status, replayed, ms) = d.await.expect("duplicate");
            let kind = if replayed { "replayed" } else { "first-time" };
            *statuses.entry(format!("{status} {kind}")).or_default() += 1;
            latencies.push(ms);
        }
        busy += started.elapsed().as_secs_f64();
        let (status, _, _) = first.await.expect("first");
        assert_eq!(status, 201, "the burst's first request");
    }
    latencies.sort_by(f64::total_cmp);
    let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    json!({
        "duplicates": DUPLICATES,
        "bursts": BURSTS,
        "first_held_ms": crate::stub::SLOW_MS,
        "answers_per_s": (BURSTS * DUPLICATES) as f64 / busy,
        "p50_ms": pct(0.50),
        "p99_ms": pct(0.99),
        "statuses": statuses,
    })
}
