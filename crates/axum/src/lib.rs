//! idem-axum: idem-store's rules on a real database, behind axum, for an application's own
//! routes.
//!
//! What it does: keeps the claim table on SQLite or PostgreSQL and drives idem-store's one
//! rule core over it ([`db`]); reads what every idempotent request carries, the scope (tenant),
//! the `Idempotency-Key`, the body and, for a route that is not one fixed operation, the whole
//! request the key is bound to ([`request`]); puts all of it in front of any axum route as one
//! tower layer ([`two_step`]: a two-step save, an atomic mode whose writes commit with the
//! saved answer, a typed recovery point for work that calls another system, wait mode); answers
//! "what became of this key?" ([`reconcile`]); prunes after retention ([`retention`]); processes
//! an at-least-once stream once ([`consumer`]); and gives an operator a server's health,
//! metrics, graceful shutdown and connection limits ([`ops`], [`layers`], [`serve`], [`cors`]).
//! Every error body is an RFC 9457 problem ([`problems`], [`wire`]).
//!
//! What it does not do: hold a decision rule of its own (the decision table and the fingerprint
//! rule are idem-store's), hand-write an error body, or know any application: the example
//! checkout, PayCo, demo mode, failpoints and the `idem-server` binary are an application
//! built on this crate's public API (the `idem-server` package). TLS is left to a proxy in
//! front. How it sits among the crates: `ARCHITECTURE.md` at the repository's root.
#![warn(missing_docs)]

pub mod completer;
pub mod consumer;
pub mod cors;
pub mod db;
pub mod layers;
pub mod ops;
pub mod periodic;
pub mod problems;
pub mod reconcile;
pub mod request;
pub mod retention;
pub mod serve;
pub mod sql;
pub mod two_step;
pub mod wire;

use idem_store::http::HttpResponse;

/// The answer for a storage failure: 503 with `Retry-After` when the database cannot be
/// reached (the client retries with the same key; nothing was committed), 409 (lease lost)
/// for a fenced write, 500 otherwise (a corrupt row, a bug), logged either way. The status
/// is `db`'s classification.
pub fn storage_error(e: &db::DbError) -> HttpResponse {
    if e.is_unavailable() {
        tracing::warn!(error = %e, "database unavailable");
        idem_store::http::unavailable(1)
    } else if e.is_fenced() {
        idem_store::http::lease_lost()
    } else {
        tracing::error!(error = %e, "storage error");
        idem_store::http::internal_error()
    }
}
