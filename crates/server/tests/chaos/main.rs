//! Chaos over real HTTP: the real `idem-server serve` (on SQLite, on PostgreSQL, and two of
//! them sharing one PostgreSQL), the real PayCo, idem's SDK as the clients, and between them
//! the faults a network, a database across a network and an operator bring: `fault_proxy`
//! between the clients and `serve`, the shared latency proxy (`support::latency`) between
//! `serve` and PostgreSQL, and the `nemesis`. After a final SIGKILL of every `serve`,
//! `checker` holds what each client was told against PayCo's ledger and the checkout's
//! orders: at most one charge per checkout, and the client told the truth.
//!
//! Each run is bounded (36 checkouts over 11 s, each client's retry window 8 s) and seeded:
//! a failing run prints its seed (the fault schedule), a command that runs it again with
//! `IDEM_CHAOS_SEED`, and the path of its exchange log. PostgreSQL gets two seeds per
//! configuration: a request cut while its server waits on the database strikes by timing,
//! and more runs catch it more surely. The simulator (idem-sim) cannot see this class: its
//! in-memory store has no transactions, so it exists only here.

#[path = "../support/mod.rs"]
mod support;

mod checker;
mod clients;
mod fault_proxy;
mod log;
mod nemesis;
mod pg_sessions;
mod plan;
mod run;

use clients::Style;
use run::{assert_caught, assert_holds, Backend, Config};

/// One careful configuration.
fn careful(
    name: &'static str,
    backend: Backend,
    on_error: &'static str,
    seeds: &'static [u64],
) -> Config {
    Config {
        name,
        backend,
        on_error,
        seeds,
        style: Style::Careful,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_release_claim() {
    let name = "sqlite_release_claim";
    assert_holds(careful(name, Backend::Sqlite, "release-claim", &[1])).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_save_response() {
    let name = "sqlite_save_response";
    assert_holds(careful(name, Backend::Sqlite, "save-response", &[2])).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_release_claim() {
    let name = "postgres_release_claim";
    assert_holds(careful(name, Backend::Postgres, "release-claim", &[3, 13])).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_save_response() {
    let name = "postgres_save_response";
    assert_holds(careful(name, Backend::Postgres, "save-response", &[4, 14])).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_postgres_release_claim() {
    let name = "two_servers_on_postgres_release_claim";
    let backend = Backend::TwoServersOnPostgres;
    assert_holds(careful(name, backend, "release-claim", &[5, 15])).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_postgres_save_response() {
    let name = "two_servers_on_postgres_save_response";
    let backend = Backend::TwoServersOnPostgres;
    assert_holds(careful(name, backend, "save-response", &[6, 16])).await;
}

/// The control: pages that mint a new key per attempt must be caught charging twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_a_new_key_per_attempt_is_caught_charging_twice() {
    assert_caught(Config {
        name: "control_a_new_key_per_attempt_is_caught_charging_twice",
        backend: Backend::Sqlite,
        on_error: "release-claim",
        seeds: &[7],
        style: Style::NewKeyPerAttempt,
    })
    .await;
}
