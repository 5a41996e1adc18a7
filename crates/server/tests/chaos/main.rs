//! Chaos over real HTTP: the real `idem-server serve` (one on SQLite, one on PostgreSQL, two
//! sharing one PostgreSQL), the real PayCo, idem's SDK as the clients, and between them the
//! faults a network, a database across a network and an operator bring (`fault_proxy`,
//! `latency_proxy`, `nemesis`). After a final SIGKILL of every `serve`, `checker` holds what
//! each client was told against PayCo's ledger and the checkout's orders: at most one charge
//! per checkout, and the client told the truth.
//!
//! Each run is bounded (36 checkouts over 11 s, each client's retry window 8 s) and seeded:
//! a failing run prints its seed (the fault schedule), a command that runs it again with
//! `IDEM_CHAOS_SEED`, and the path of its exchange log. The simulator (idem-sim) cannot see
//! this class: its in-memory store has no transactions, so a request cut while the server
//! waits on its database exists only here.

#[path = "../support/mod.rs"]
mod support;

mod checker;
mod clients;
mod fault_proxy;
mod latency_proxy;
mod log;
mod nemesis;
mod pg_sessions;
mod plan;
mod run;

use clients::Style;
use run::{assert_caught, assert_holds, Backend, Config};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_release_claim() {
    assert_holds(Config {
        name: "sqlite_release_claim",
        backend: Backend::Sqlite,
        on_error: "release-claim",
        seed: 1,
        style: Style::Careful,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_save_response() {
    assert_holds(Config {
        name: "sqlite_save_response",
        backend: Backend::Sqlite,
        on_error: "save-response",
        seed: 2,
        style: Style::Careful,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_release_claim() {
    assert_holds(Config {
        name: "postgres_release_claim",
        backend: Backend::Postgres,
        on_error: "release-claim",
        seed: 3,
        style: Style::Careful,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_save_response() {
    assert_holds(Config {
        name: "postgres_save_response",
        backend: Backend::Postgres,
        on_error: "save-response",
        seed: 4,
        style: Style::Careful,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_postgres_release_claim() {
    assert_holds(Config {
        name: "two_servers_on_postgres_release_claim",
        backend: Backend::TwoServersOnPostgres,
        on_error: "release-claim",
        seed: 5,
        style: Style::Careful,
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_postgres_save_response() {
    assert_holds(Config {
        name: "two_servers_on_postgres_save_response",
        backend: Backend::TwoServersOnPostgres,
        on_error: "save-response",
        seed: 6,
        style: Style::Careful,
    })
    .await;
}

/// The control: pages that mint a new key per attempt must be caught charging twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_a_new_key_per_attempt_is_caught_charging_twice() {
    assert_caught(Config {
        name: "control_a_new_key_per_attempt_is_caught_charging_twice",
        backend: Backend::Sqlite,
        on_error: "release-claim",
        seed: 7,
        style: Style::NewKeyPerAttempt,
    })
    .await;
}
