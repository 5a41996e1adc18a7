//! The claim → save → replay cycle against a raw `HashMap` doing the same three
//! operations (insert, overwrite, get + clone the response) on the same keys.
//!
//! `cargo bench -p idem-store`. Knobs (environment): `IDEM_BENCH_KEYS` (default 10000),
//! `IDEM_BENCH_ROUNDS` (default 30; the best round counts), `IDEM_BENCH_CASE` (0-3: run
//! only that store case). Under callgrind, counting only the timed loops:
//!
//! ```text
//! cargo bench -p idem-store --bench cycle --no-run
//! IDEM_BENCH_ROUNDS=1 IDEM_BENCH_CASE=0 valgrind --tool=callgrind \
//!     --toggle-collect=cycle::store_round target/release/deps/cycle-<hash>
//! ```
//! (and `--toggle-collect=cycle::map_round` for the baseline).

use std::{collections::HashMap, hint::black_box, time::Instant};

use idem_store::{fingerprint, Begin, ErrorPolicy, RouteConfig, SavedResponse, Store, StoreConfig};

const ROUTE: RouteConfig = RouteConfig::required("POST /api/checkout", ErrorPolicy::SaveResponse);
const BODY: &[u8] = br#"{"cart":"c-1","amount":4200,"currency":"EUR"}"#;
const SCOPE: &str = "tenant-a";
const OPS_PER_KEY: u32 = 3;

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn response(i: usize) -> SavedResponse {
    SavedResponse::json(201, format!(r#"{{"order":{i}}}"#).into_bytes())
}

#[inline(never)]
fn store_round(
    keys: &[String],
    responses: &[SavedResponse],
    config: StoreConfig,
    hashed: bool,
) -> f64 {
    let fp = fingerprint(&ROUTE.operation, BODY).expect("valid body");
    let mut store = Store::new(config);
    let start = Instant::now();
    for (i, key) in keys.iter().enumerate() {
        let begin = |store: &mut Store, now| {
            if hashed {
                store.begin(now, SCOPE, Some(key), BODY, &ROUTE)
            } else {
                store.begin_with_fingerprint(now, SCOPE, Some(key), fp, &ROUTE)
            }
        };
        let Begin::Execute { id, lease, .. } = begin(&mut store, 1) else {
            panic!("claim")
        };
        store
            .save(2, &id, &lease, responses[i].clone())
            .expect("save");
        let _ = black_box(begin(&mut store, 3));
    }
    let elapsed = start.elapsed().as_nanos() as f64;
    drop(black_box(store));
    elapsed
}

enum Slot {
    InFlight(u64),
    Done(SavedResponse),
}

#[inline(never)]
fn map_round(keys: &[String], responses: &[SavedResponse]) -> f64 {
    let mut map: HashMap<String, Slot> = HashMap::new();
    let start = Instant::now();
    for (i, key) in keys.iter().enumerate() {
        let token = i as u64;
        map.insert(key.clone(), Slot::InFlight(token));
        // The save checks its token, as the store's fenced save does.
        if let Some(slot) = map.get_mut(key.as_str()) {
            if matches!(slot, Slot::InFlight(t) if *t == token) {
                *slot = Slot::Done(responses[i].clone());
            }
        }
        let replay = match map.get(key.as_str()) {
            Some(Slot::Done(r)) => Some(r.clone()),
            _ => None,
        };
        black_box(replay);
    }
    let elapsed = start.elapsed().as_nanos() as f64;
    drop(black_box(map));
    elapsed
}

/// A random-looking v4 UUID string, as clients send them (splitmix64 of `i`).
fn uuid_like(i: u64) -> String {
    let mix = |mut z: u64| {
        z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let (a, b) = (mix(2 * i), mix(2 * i + 1));
    format!(
        "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        b >> 52,
        b & 0xffff_ffff_ffff
    )
}

fn main() {
    let n = env("IDEM_BENCH_KEYS", 10_000);
    let rounds = env("IDEM_BENCH_ROUNDS", 30);
    let only = std::env::var("IDEM_BENCH_CASE")
        .ok()
        .and_then(|v| v.parse::<usize>().ok());
    let keys: Vec<String> = (0..n as u64).map(uuid_like).collect();
    let responses: Vec<SavedResponse> = (0..n).map(response).collect();
    let events_on = StoreConfig::default();
    let events_off = StoreConfig {
        event_capacity: 0,
        ..StoreConfig::default()
    };

    println!("claim -> save -> replay, {n} keys, best of {rounds} rounds, ns per operation");
    let cases = [
        (
            "store, precomputed fingerprint, events off",
            events_off,
            false,
        ),
        (
            "store, precomputed fingerprint, events on ",
            events_on,
            false,
        ),
        (
            "store, fingerprint per request, events off",
            events_off,
            true,
        ),
        (
            "store, fingerprint per request, events on ",
            events_on,
            true,
        ),
    ];
    // Rounds interleave the cases, so a burst of load on a shared machine hits them all;
    // the best round of each counts.
    let mut map_best = f64::MAX;
    let mut store_best = [f64::MAX; 4];
    for _ in 0..rounds {
        map_best = map_best.min(map_round(&keys, &responses));
        for (i, (best, &(_, config, hashed))) in store_best.iter_mut().zip(&cases).enumerate() {
            if only.is_none_or(|only| only == i) {
                *best = best.min(store_round(&keys, &responses, config, hashed));
            }
        }
    }
    let per_op = |ns: f64| ns / (n as f64 * f64::from(OPS_PER_KEY));
    let map = per_op(map_best);
    println!("  raw HashMap (insert, overwrite, get+clone)      {map:8.1} ns/op");
    for (&(name, ..), ns) in cases
        .iter()
        .zip(store_best)
        .filter(|(_, ns)| *ns < f64::MAX)
    {
        let ns = per_op(ns);
        println!("  {name}  {ns:8.1} ns/op  ratio {:5.2}x", ns / map);
    }
}
