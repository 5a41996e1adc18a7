//! idem-server: an application built on idem-axum's public API, and its binary.
//!
//! The example checkout ([`checkout`]), PayCo, the payment provider it charges ([`payco`]),
//! and `receipts`, the consumer of the checkout's outbox ([`receipts`]), each on its own port
//! with its own database ([`app`]: how a service starts), demo mode
//! (`checkout::demo`), the checkout's checkpoints (`checkout::checkpoint`: failpoints and demo
//! faults, one mechanism) and the `idem-server` command. Everything
//! about idempotency they use is idem-axum's, re-exported here under the same names
//! (`idem_server::db` is `idem_axum::db`) so the tests, benchmarks and the command read as
//! before; none of it reaches past idem-axum's public API.
//!
//! What it does not do: hold any rule of idempotency of its own. How it sits among the
//! crates: `ARCHITECTURE.md` at the repository's root.
#![warn(missing_docs)]

pub mod app;
pub mod checkout;
pub mod payco;
pub mod problems;
pub mod receipts;

pub use idem_axum::{
    completer, consumer, cors, db, layers, ops, periodic, reconcile, request, retention, serve,
    sql, storage_error, two_step, wire, with_pool, with_tx,
};

use std::net::SocketAddr;

/// Why a service could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Failpoints or demo faults were refused (not loopback, unknown point).
    #[error(transparent)]
    Checkpoint(#[from] checkout::checkpoint::CheckpointError),
    /// A CORS origin is not a valid header value.
    #[error(transparent)]
    Cors(#[from] cors::InvalidOrigin),
    /// The database could not be opened or migrated.
    #[error("database: {0}")]
    Db(#[from] db::DbError),
    /// The PayCo client could not be built.
    #[error("payco client: {0}")]
    Payco(String),
    /// The outbox relay's HTTP client could not be built.
    #[error("outbox relay: {0}")]
    Relay(String),
    /// The listen address could not be bound.
    #[error("listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
}
