//! idem-client: one idempotency key per logical operation, persisted before the first send.
//!
//! A checkout page (or the idem simulator) describes one logical operation, say
//! `checkout:cart-42` with a JSON payload, and this crate makes retrying it safe:
//!
//! - a UUID v4 key is minted once per operation and written to a [`Journal`] together with the
//!   canonical payload bytes (RFC 8785) and their SHA-256 fingerprint *before* the first attempt
//!   may be sent; every retry, even after a page reload, sends the same key and the same bytes
//!   (natively the payload is a `serde_json::Value` canonicalized by serde_json_canonicalizer; the
//!   browser bindings canonicalize the JS value with the browser's own JSON number formatting and
//!   pass a [`CanonicalPayload`], so the package ships neither serde_json nor its float code);
//! - replies are classified by status: 2xx succeeds (or is a replay, from
//!   `Idempotent-Replayed: true`), 409 and 429 wait and retry, 5xx, network errors and timeouts
//!   retry with backoff, 422 and the other 4xx are final rejections; a `Retry-After` shorter
//!   than the backoff floor is not trusted ([`retry_delay_ms`]);
//! - when the [`RetryPolicy`]'s window closes, the outcome is [`OutcomeKind::Unknown`]: reconcile
//!   (ask the server's key-state endpoint, [`KeyState`], [`Operation::handle_key_state`]), never
//!   mint a new key;
//! - a final answer replaces the record by a [`SettledRecord`] (key and fingerprint, no body)
//!   kept for the rest of the retry window: starting the same request again re-sends under the
//!   same key, so the server replays; another payload under the name is refused until the entry
//!   is removed ([`Operation::start`] has the table). Where two writers share the journal
//!   without a lock (two tabs without Web Locks), [`Operation::start_unlocked`] makes a minted
//!   key wait and be confirmed, so both end up with one key.
//!
//! # What this crate does not do
//!
//! The core ([`Operation`]) is sans-IO, in the spirit of quinn-proto: it contains no networking
//! code, reads no clock and draws no randomness of its own. Time comes in as `now: u64`
//! milliseconds, randomness (backoff jitter, key minting) is injected, and decisions come out as
//! values ([`Action`]). The same machine is driven by the simulator (`idem-sim`) and, on
//! `wasm32`, by the `fetch` driver and the JavaScript bindings in this crate. It does not decide
//! what the server does with a key: that is the store's job, and the two agree on the wire
//! (status codes, `Retry-After`, `Idempotent-Replayed`, `application/problem+json`) and on one
//! rule, the store's request fingerprint, which the SDK computes for its own payload to check that
//! a key-state answer is its own request's ([`KeyState::from_reply`]). It holds no
//! lock and shares no promise: serialising two tabs (Web Locks) and joining two calls of one
//! page are the bindings' job, on top of the journal rules here. How it sits among the other
//! crates, and where each rule lives: `ARCHITECTURE.md` at the repository's root.
//!
//! # Features
//!
//! - `js-api` (default): on wasm32, the JavaScript package (`IdempotentClient`) and what it
//!   needs; turns on `fetch-driver`.
//! - `fetch-driver`: on wasm32, the `driver` module alone (attempts over `fetch`, waits, the
//!   key-state question), for a Rust page that drives [`Operation`] itself: the demo's
//!   real-server mode. The JS package's `#[wasm_bindgen]` exports stay in any binary that links
//!   them, so a Rust page leaves `js-api` off.
//! - `package-allocator`: the npm package's allocator (talc).
#![warn(missing_docs)]

mod backoff;
mod digest;
mod error;
pub mod journal;
mod json;
mod key;
mod method;
mod operation;
mod outcome;
mod payload;
mod policy;
mod reconcile;
mod reply;

// The JS package: payload canonicalisation in JS terms and the bindings, behind the default
// `js-api` feature so a Rust-only wasm user (the demo) does not carry their exports; the fetch
// driver alone is the `fetch-driver` feature (which `js-api` turns on).
#[cfg(all(target_arch = "wasm32", feature = "js-api"))]
mod canonical_js;
#[cfg(all(target_arch = "wasm32", feature = "fetch-driver"))]
pub mod driver;
#[cfg(all(target_arch = "wasm32", feature = "js-api"))]
mod js;

/// The npm package's allocator (the `package-allocator` feature): talc, not dlmalloc, smaller on
/// wasm32; the page is single-threaded.
#[cfg(all(
    target_arch = "wasm32",
    feature = "package-allocator",
    not(target_feature = "atomics")
))]
#[global_allocator]
static ALLOCATOR: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();

pub use backoff::{backoff_delay_ms, retry_delay_ms};
pub use error::StartError;
/// The JSON reader the journal, the problem details and the key-state answer are read with
/// (idem-store's, shared with idem-checkout's receipt), for Rust pages that read a server's
/// JSON next to the SDK (the demo's real-server mode reads idem-server's events and views with
/// it) without a second parser.
pub use idem_store::json::Json;
pub use journal::{
    Entry, Journal, JournalError, MemoryJournal, Record, RecordState, SettledRecord,
};
pub use key::{KeyMinter, RandomKeys, RngKeys};
pub use method::{KeyUse, Method};
pub use operation::{
    Action, Attempt, IntoCanonical, Operation, OperationSpec, Persistence, Unconfirmed,
};
pub use outcome::{Durability, Failure, Outcome, OutcomeKind, Problem};
pub use payload::CanonicalPayload;
pub use policy::RetryPolicy;
pub use reconcile::KeyState;
pub use reply::{
    is_replayed_header, parse_retry_after, retry_after_ms, Reply, ReplyClass, FIRST_SENT_HEADER,
    IDEMPOTENCY_KEY_HEADER, REPLAYED_HEADER, RETRY_AFTER_HEADER,
};
