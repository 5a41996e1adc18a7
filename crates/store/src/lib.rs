//! The server-side idempotency claim table and its rules.
//!
//! `idem-store` decides what a server does with a request that carries an
//! `Idempotency-Key`: claim the key and run the work, replay the saved answer,
//! ask the client to retry later (409), or reject (400 / 413 / 422). Its decision
//! table (how it sits among the other crates, and where each rule lives: `ARCHITECTURE.md`
//! at the repository's root):
//!
//! | state when the request arrives | [`Begin`] | HTTP |
//! |---|---|---|
//! | scope empty, over 255 bytes, or not visible ASCII | [`Begin::Invalid`] | 400 |
//! | key missing where the route requires one | [`Begin::Invalid`] | 400 |
//! | key empty, over 255 chars, or not printable ASCII | [`Begin::Invalid`] | 400 |
//! | body over [`StoreConfig::max_body_bytes`] | [`Begin::Invalid`] | 413 |
//! | body not JSON (where it is read as JSON: [`RequestTarget`] says when) | [`Begin::Invalid`] | 400 |
//! | no record (or record past retention) | [`Begin::Execute`] | result |
//! | record exists (in flight, released or done), fingerprint (operation + body; or the whole request, [`RequestTarget`]) differs | [`Begin::Mismatch`] | 422 |
//! | `Done`, same fingerprint | [`Begin::Replay`] | original + `Idempotent-Replayed: true` |
//! | `InFlight`, lease younger than `lock_ms` | [`Begin::InFlight`] | 409 + `Retry-After` |
//! | `InFlight`, lease stale | [`Begin::Execute`] with `taken_over: true` | result |
//! | `Released`, same fingerprint | [`Begin::Execute`] (claimed again: resume the recovery point) | result |
//! | no record, and `Repeatability-First-Sent` older than the route's retention plus [`StoreConfig::first_sent_tolerance_ms`] ([`first_sent`]) | [`Begin::KeyExpired`] | 412 |
//!
//! A key stays bound to its first request for its retention: a release
//! ([`Store::release`], or [`Store::fail`] under [`ErrorPolicy::ReleaseClaim`]) frees the
//! lease, not the key, so only that same request runs again ([`rules`] says why).
//!
//! Every write after the claim is *fenced* by the [`Lease`] the claim returned:
//! [`Store::commit`], [`Store::save`], [`Store::fail`] and [`Store::release`] change
//! the record only while it is still in flight under that exact lease, so a worker
//! whose claim was taken over (a zombie) can neither save nor release, and a released
//! lease writes nothing more.
//!
//! # What this crate does not do
//!
//! It is sans-IO. It contains no networking code, no storage API, no async runtime,
//! and it never reads a clock: every call that depends on time takes `now: u64`
//! milliseconds from the caller, and every decision comes back as a value. The same
//! code runs in the browser demo (`wasm32-unknown-unknown`), in the simulator, and
//! behind a real server. The decision table itself is one pure step, [`rules::decide`]
//! (with [`rules::check_request`] and [`rules::finish`]): the [`Store`] drives it over the
//! narrow [`Table`] trait and the deterministic in-memory [`MemoryTable`]; a server drives
//! the same step over its SQL tables (idem-server), so the rules exist once. The [`http`] module maps
//! decisions to status codes, headers and problem bodies, but sends nothing; [`json`] is the
//! small JSON reader the SDK and the checkout's receipt read with, without serde_json's float
//! parsing in a `wasm32` binary.
//!
//! # Call order
//!
//! 1. [`Store::begin`] (or [`Store::begin_with_fingerprint`]) once per request.
//! 2. On [`Begin::Execute`]: run the work through [`Store::commit`] (business change and
//!    saved response in one step), or, only where the caller wants a two-step write,
//!    do the work and then [`Store::save`]. On a work error call [`Store::fail`]: it
//!    follows the [`ErrorPolicy`] the claiming route declared ([`RouteConfig::on_error`]).
//! 3. Now and then [`Store::prune`]; read [`Store::events_since`] and [`Store::rows`] for
//!    display.
//!
//! ```
//! use idem_store::{Begin, ErrorPolicy, RouteConfig, SavedResponse, Store, StoreConfig};
//!
//! let mut store = Store::new(StoreConfig::default());
//! let route = RouteConfig::required("POST /api/checkout", ErrorPolicy::SaveResponse);
//! let body = br#"{"cart":"c-1","amount":4200}"#;
//!
//! let Begin::Execute { id, lease, .. } = store.begin(0, "tenant-a", Some("k-1"), body, &route)
//! else { unreachable!() };
//! let order = store
//!     .commit(5, &id, &lease, || {
//!         let order = 17; // the business change, e.g. insert the order
//!         (order, SavedResponse::json(201, br#"{"order":17}"#.to_vec()))
//!     })
//!     .expect("the lease is ours");
//! assert_eq!(order, 17);
//!
//! // The retry with the same key and the same body is answered from the table.
//! match store.begin(9, "tenant-a", Some("k-1"), body, &route) {
//!     Begin::Replay(saved) => assert_eq!(saved.body, br#"{"order":17}"#),
//!     other => panic!("expected a replay, got {other:?}"),
//! }
//! ```
#![warn(missing_docs)]

mod begin;
mod config;
mod error;
mod event;
mod fingerprint;
pub mod first_sent;
pub mod http;
pub mod http_date;
pub mod json;
mod key;
mod lease;
mod record;
pub mod rules;
mod store;
mod table;
mod target;
mod view;

pub use begin::Begin;
pub use config::{ErrorPolicy, KeyRequirement, RouteConfig, StoreConfig};
pub use error::{Fenced, RequestError};
pub use event::{Event, EventKind, EventLog, Rejection};
pub use fingerprint::{fingerprint, sha256, Fingerprint};
pub use key::{validate_scope, IdRef, IdempotencyKey, RecordId, MAX_KEY_LEN, MAX_SCOPE_LEN};
pub use lease::Lease;
pub use record::{Record, SavedResponse, Status};
pub use store::Store;
pub use table::{MemoryTable, Table};
pub use target::{BodyFields, BodyForm, RequestTarget};
pub use view::{RowState, RowView};

#[cfg(all(test, target_arch = "wasm32"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
