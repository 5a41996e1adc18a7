//! Chaos over real HTTP: the real `idem-server serve` (on SQLite, on PostgreSQL, and two of
//! them sharing one PostgreSQL), the real PayCo, idem's SDK as the clients, and between them
//! the faults a network, a database across a network and an operator bring: idem-check's
//! fault proxy (`idem_check::proxy`) between the clients and `serve`, the shared latency proxy (`support::latency`) between
//! `serve` and PostgreSQL, and the `nemesis`. After a final SIGKILL of every `serve`,
//! `checker` holds what each client was told against PayCo's ledger and the checkout's
//! orders: at most one charge per checkout, and the client told the truth; and, once the
//! outbox is drained, the receipts service's receipts against the orders: one per paid order,
//! none for any other.
//!
//! Each run is bounded (36 checkouts over 11 s, each client's retry window 8 s) and seeded:
//! a failing run prints its seed (the fault schedule, and whether `serve` runs in wait mode:
//! a duplicate in flight waits for the first answer instead of a 409), a command that runs it again with
//! `IDEM_CHAOS_SEED`, and the path of its exchange log. PostgreSQL gets two seeds per
//! configuration: a request cut while its server waits on the database strikes by timing,
//! and more runs catch it more surely. The simulator (idem-sim) cannot see this class: its
//! in-memory store has no transactions, so it exists only here.

#[path = "../support/mod.rs"]
mod support;

mod checker;
mod clients;
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
    assert_holds(careful(
        name,
        Backend::Sqlite,
        "release-claim",
        SQLITE_RELEASE,
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_save_response() {
    let name = "sqlite_save_response";
    assert_holds(careful(name, Backend::Sqlite, "save-response", SQLITE_SAVE)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_release_claim() {
    let name = "postgres_release_claim";
    assert_holds(careful(
        name,
        Backend::Postgres,
        "release-claim",
        PG_RELEASE,
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_save_response() {
    let name = "postgres_save_response";
    assert_holds(careful(name, Backend::Postgres, "save-response", PG_SAVE)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_postgres_release_claim() {
    let name = "two_servers_on_postgres_release_claim";
    let backend = Backend::TwoServersOnPostgres;
    assert_holds(careful(name, backend, "release-claim", TWO_RELEASE)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_on_postgres_save_response() {
    let name = "two_servers_on_postgres_save_response";
    let backend = Backend::TwoServersOnPostgres;
    assert_holds(careful(name, backend, "save-response", TWO_SAVE)).await;
}

/// The control: pages that mint a new key per attempt must be caught charging twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn control_a_new_key_per_attempt_is_caught_charging_twice() {
    assert_caught(Config {
        name: "control_a_new_key_per_attempt_is_caught_charging_twice",
        backend: Backend::Sqlite,
        on_error: "release-claim",
        seeds: CONTROL,
        style: Style::NewKeyPerAttempt,
    })
    .await;
}

/// Whether each run draws wait mode is the seed's (`plan::Plan::wait_ms`); these seeds give
/// both on every backend and in the control, which the test below holds.
const SQLITE_RELEASE: &[u64] = &[1];
const SQLITE_SAVE: &[u64] = &[9];
const PG_RELEASE: &[u64] = &[3, 13];
const PG_SAVE: &[u64] = &[4, 14];
const TWO_RELEASE: &[u64] = &[5, 15];
const TWO_SAVE: &[u64] = &[6, 16];
const CONTROL: &[u64] = &[7, 8];

/// A checker is only as good as the faults it draws: the chosen seeds arm every checkpoint the
/// server has (`Point::ALL`: the checkout's and the outbox's), and nothing else.
#[test]
fn the_nemesis_draws_every_checkpoint() {
    use std::collections::BTreeSet;

    let every: BTreeSet<&str> = idem_server::checkout::checkpoint::Point::ALL
        .iter()
        .map(|p| p.name())
        .collect();
    assert_eq!(plan::every_step().collect::<BTreeSet<_>>(), every);
    let mut drawn = BTreeSet::new();
    for (servers, seeds) in [
        (1, SQLITE_RELEASE),
        (1, SQLITE_SAVE),
        (1, PG_RELEASE),
        (1, PG_SAVE),
        (2, TWO_RELEASE),
        (2, TWO_SAVE),
    ] {
        for &seed in seeds {
            let plan = plan::Plan::draw(seed, plan::Sizes::of_run(true, servers));
            for event in plan.nemesis {
                if let plan::Action::Failpoint { step, .. } = event.action {
                    drawn.insert(step);
                }
            }
        }
    }
    assert_eq!(drawn, every, "the chosen seeds arm every checkpoint");
}

/// Wait mode is a server option, so the swarm draws it: every backend runs with it and
/// without it, and the control must be caught both ways.
#[test]
fn the_seeds_run_each_backend_and_the_control_with_and_without_wait_mode() {
    let draws = |careful, servers, seeds: &[&[u64]]| -> Vec<bool> {
        let seeds = seeds.iter().flat_map(|s| s.iter());
        let sizes = plan::Sizes::of_run(careful, servers);
        seeds
            .map(|&seed| plan::Plan::draw(seed, sizes).wait_ms.is_some())
            .collect()
    };
    for (what, waits) in [
        ("SQLite", draws(true, 1, &[SQLITE_RELEASE, SQLITE_SAVE])),
        ("PostgreSQL", draws(true, 1, &[PG_RELEASE, PG_SAVE])),
        ("two servers", draws(true, 2, &[TWO_RELEASE, TWO_SAVE])),
        ("the control", draws(false, 1, &[CONTROL])),
    ] {
        assert!(
            waits.contains(&true) && waits.contains(&false),
            "{what}: {waits:?}"
        );
    }
}
