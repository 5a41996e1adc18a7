//! idem-server in production (issue #12): key state, process_once, retention, probes,
//! metrics and graceful shutdown; over the library on SQLite and a throwaway PostgreSQL,
//! and over HTTP against the real binary. One test binary, so the crate links once.

#[path = "../support/mod.rs"]
mod support;

use support::client;
#[path = "../http/stack.rs"]
mod stack;

mod consumer;
mod db;
mod http_ops;
mod key_state;
mod metrics;
mod retention;
mod shutdown;
