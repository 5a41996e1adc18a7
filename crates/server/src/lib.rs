//! idem-server: idem-store's rules behind real HTTP, on a real database.
//!
//! The HTTP half: an axum application whose idempotent routes read the scope (tenant), the
//! `Idempotency-Key` and the body ([`request`]), let the store decide ([`db`]), and answer
//! with the store's wire values ([`wire`], `idem_store::http`). It serves the example
//! checkout ([`checkout`]) and PayCo, the payment provider it charges ([`payco`]), each on
//! its own port with its own database, and offers a generic tower layer for routes whose work
//! cannot share the claim's transaction ([`two_step`]).
//!
//! What it does not do: the HTTP modules hold no decision rule of their own (the decision
//! table is idem-store's, the claim table's SQL is [`db`]'s), and hand-write no error body
//! (problem details come from `idem_store::http` and [`problems`]). TLS is left to a proxy in
//! front. How it sits among the crates: `ARCHITECTURE.md` at the repository's root.
#![warn(missing_docs)]

pub mod app;
pub mod checkout;
pub mod consumer;
pub mod cors;
pub mod db;
pub mod failpoint;
pub mod layers;
pub mod ops;
pub mod payco;
pub mod problems;
pub mod reconcile;
pub mod request;
pub mod retention;
pub mod serve;
pub mod sql;
pub mod two_step;
pub mod wire;

use std::net::SocketAddr;

use idem_store::http::HttpResponse;

/// Why a service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A failpoint setting was refused (not loopback, unknown step).
    #[error(transparent)]
    Failpoint(#[from] failpoint::FailpointError),
    /// Demo mode was refused (not loopback).
    #[error(transparent)]
    Demo(#[from] checkout::demo::DemoError),
    /// A CORS origin is not a valid header value.
    #[error(transparent)]
    Cors(#[from] cors::InvalidOrigin),
    /// The database could not be opened or migrated.
    #[error("database: {0}")]
    Db(#[from] db::DbError),
    /// The PayCo client could not be built.
    #[error("payco client: {0}")]
    Payco(String),
    /// The listen address could not be bound.
    #[error("listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
}

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
