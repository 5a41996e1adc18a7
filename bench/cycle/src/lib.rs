//! The claim → save → replay cycle of `idem-store` and a raw `HashMap` doing the same three
//! operations (insert, fenced overwrite, get + clone the response) on the same keys, for
//! `make bench`.
//!
//! The same code runs natively (the `idem-bench-cycle` binary: callgrind instruction counts and
//! wall time) and on `wasm32-unknown-unknown`, where the module exports [`fixture_new`] and
//! [`fixture_run`] with plain numbers so node can load it without wasm-bindgen glue and time
//! the call itself.
//!
//! # What this crate does not do
//!
//! It reads no clock and does no I/O: callers time [`run`] (the wasm module cannot read a
//! clock without imports, and callgrind counts instructions, not time).
#![warn(missing_docs)]

use std::{collections::HashMap, hint::black_box};

use idem_store::{
    fingerprint, Begin, ErrorPolicy, Fingerprint, RouteConfig, SavedResponse, Store, StoreConfig,
};

/// Store operations per key: claim, save, replay.
pub const OPS_PER_KEY: u32 = 3;

const ROUTE: RouteConfig = RouteConfig::required("POST /api/checkout", ErrorPolicy::SaveResponse);
const BODY: &[u8] = br#"{"cart":"c-1","amount":4200,"currency":"EUR"}"#;
const SCOPE: &str = "tenant-a";

/// Which loop to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// Nothing: the setup alone, the baseline callgrind subtracts.
    Setup,
    /// Raw `HashMap<String, Slot>`: insert, fenced overwrite, get + clone.
    Map,
    /// The store with its default config (event log on), precomputed fingerprint.
    Store,
    /// The store with the event log off, precomputed fingerprint.
    StoreNoEvents,
    /// The store with its default config, fingerprint (canonical JSON + SHA-256) per request.
    StoreHashed,
}

impl Variant {
    /// Every variant, in the order of their wasm codes.
    pub const ALL: [Variant; 5] = [
        Variant::Setup,
        Variant::Map,
        Variant::Store,
        Variant::StoreNoEvents,
        Variant::StoreHashed,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Setup => "setup",
            Variant::Map => "map",
            Variant::Store => "store",
            Variant::StoreNoEvents => "store-noevents",
            Variant::StoreHashed => "store-hashed",
        }
    }

    /// The variant called `name`.
    pub fn parse(name: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.name() == name)
    }
}

/// Keys, saved responses and the body's fingerprint, built before any loop runs.
pub struct Fixture {
    keys: Vec<String>,
    responses: Vec<SavedResponse>,
    fingerprint: Fingerprint,
}

impl Fixture {
    /// `n` random-looking UUID keys (splitmix64, deterministic) and one response each.
    pub fn new(n: usize) -> Fixture {
        Fixture {
            keys: (0..n as u64).map(uuid_like).collect(),
            responses: (0..n)
                .map(|i| SavedResponse::json(201, format!(r#"{{"order":{i}}}"#).into_bytes()))
                .collect(),
            // BODY is a constant valid JSON object.
            fingerprint: fingerprint(&ROUTE.operation, BODY).unwrap_or(Fingerprint([0; 32])),
        }
    }

    /// Keys in the fixture.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the fixture has no keys.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// Run one loop over every key of `fixture`; the number of replays seen (equals the key count
/// when the loop is right), so nothing is optimised away. The store or map is leaked rather
/// than dropped when `leak` is set, so callgrind counts the loop and not the teardown.
pub fn run(fixture: &Fixture, variant: Variant, leak: bool) -> u32 {
    match variant {
        Variant::Setup => 0,
        Variant::Map => map_loop(fixture, leak),
        Variant::Store => store_loop(fixture, StoreConfig::default(), false, leak),
        Variant::StoreNoEvents => {
            let config = StoreConfig {
                event_capacity: 0,
                ..StoreConfig::default()
            };
            store_loop(fixture, config, false, leak)
        }
        Variant::StoreHashed => store_loop(fixture, StoreConfig::default(), true, leak),
    }
}

fn store_loop(fixture: &Fixture, config: StoreConfig, hashed: bool, leak: bool) -> u32 {
    let mut store = Store::new(config);
    let mut replays = 0;
    for (key, response) in fixture.keys.iter().zip(&fixture.responses) {
        let begin = |store: &mut Store, now| {
            if hashed {
                store.begin(now, SCOPE, Some(key), BODY, &ROUTE)
            } else {
                store.begin_with_fingerprint(now, SCOPE, Some(key), fixture.fingerprint, &ROUTE)
            }
        };
        let Begin::Execute { id, lease, .. } = begin(&mut store, 1) else {
            continue;
        };
        if store.save(2, &id, &lease, response.clone()).is_err() {
            continue;
        }
        if let Begin::Replay(saved) = black_box(begin(&mut store, 3)) {
            replays += u32::from(saved.status == 201);
        }
    }
    finish(store, leak);
    replays
}

enum Slot {
    InFlight(u64),
    Done(SavedResponse),
}

fn map_loop(fixture: &Fixture, leak: bool) -> u32 {
    let mut map: HashMap<String, Slot> = HashMap::new();
    let mut replays = 0;
    for (token, (key, response)) in fixture.keys.iter().zip(&fixture.responses).enumerate() {
        let token = token as u64;
        map.insert(key.clone(), Slot::InFlight(token));
        // The save checks its token, as the store's fenced save does.
        if let Some(slot) = map.get_mut(key.as_str()) {
            if matches!(slot, Slot::InFlight(t) if *t == token) {
                *slot = Slot::Done(response.clone());
            }
        }
        let replay = match map.get(key.as_str()) {
            Some(Slot::Done(r)) => Some(r.clone()),
            _ => None,
        };
        if let Some(saved) = black_box(replay) {
            replays += u32::from(saved.status == 201);
        }
    }
    finish(map, leak);
    replays
}

fn finish<T>(value: T, leak: bool) {
    let value = black_box(value);
    if leak {
        std::mem::forget(value);
    }
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

/// wasm32 entry point: a fixture of `n` keys, owned by the caller until [`fixture_free`].
#[cfg(target_arch = "wasm32")]
#[no_mangle]
pub extern "C" fn fixture_new(n: u32) -> *mut Fixture {
    Box::into_raw(Box::new(Fixture::new(n as usize)))
}

/// wasm32 entry point: run variant `code` (index into [`Variant::ALL`]) once; the replay
/// count, or `u32::MAX` for an unknown code.
///
/// # Safety
/// `fixture` must come from [`fixture_new`] and not have been freed.
#[cfg(target_arch = "wasm32")]
#[no_mangle]
pub unsafe extern "C" fn fixture_run(fixture: *const Fixture, code: u32) -> u32 {
    let Some(&variant) = Variant::ALL.get(code as usize) else {
        return u32::MAX;
    };
    // SAFETY: the caller passes a live pointer from `fixture_new`.
    run(unsafe { &*fixture }, variant, false)
}

/// wasm32 entry point: free a fixture.
///
/// # Safety
/// `fixture` must come from [`fixture_new`] and not have been freed.
#[cfg(target_arch = "wasm32")]
#[no_mangle]
pub unsafe extern "C" fn fixture_free(fixture: *mut Fixture) {
    // SAFETY: the caller passes a live pointer from `fixture_new`, once.
    drop(unsafe { Box::from_raw(fixture) });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_loop_replays_every_key() {
        let fixture = Fixture::new(100);
        for variant in Variant::ALL {
            let want = if variant == Variant::Setup { 0 } else { 100 };
            assert_eq!(run(&fixture, variant, false), want, "{}", variant.name());
        }
    }

    #[test]
    fn names_round_trip() {
        for variant in Variant::ALL {
            assert_eq!(Variant::parse(variant.name()), Some(variant));
        }
    }
}
