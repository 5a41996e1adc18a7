//! 200 concurrent identical checkouts over HTTP: exactly one execution and one PayCo charge;
//! every other answer is a 409 or a byte-for-byte replay. On SQLite with one server, and on
//! one PostgreSQL shared by two server processes with the requests alternating.

use std::{sync::Arc, time::Duration};

use tokio::sync::Barrier;

use crate::{
    client::{self, Answer},
    stack::Stack,
    support::{
        latency::LatencyProxy,
        postgres::Postgres,
        process::{checkout_args, checkout_args_via, Service, TENANT_A},
    },
};

const REQUESTS: usize = 200;

/// Fire `REQUESTS` copies of one checkout at once, request `i` to `servers[i % len]`.
async fn storm(servers: &[&str], key: &str, body: &str) -> Vec<Answer> {
    let http = client::http();
    let barrier = Arc::new(Barrier::new(REQUESTS));
    let mut tasks = Vec::with_capacity(REQUESTS);
    for i in 0..REQUESTS {
        let (http, barrier) = (http.clone(), barrier.clone());
        let (server, key, body) = (
            servers[i % servers.len()].to_owned(),
            key.to_owned(),
            body.to_owned(),
        );
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            client::checkout(&http, &server, TENANT_A.0, &key, &body).await
        }));
    }
    let mut answers = Vec::with_capacity(REQUESTS);
    for t in tasks {
        answers.push(t.await.expect("request task"));
    }
    answers
}

/// One first answer (201), the rest 409 with `Retry-After` or replays of exactly it.
fn assert_one_execution(answers: &[Answer]) -> Answer {
    assert_one_execution_with(answers, true)
}

/// [`assert_one_execution`]; `conflicts`: whether a 409 may be among the answers (not in wait
/// mode, where every duplicate waits for the first answer).
fn assert_one_execution_with(answers: &[Answer], conflicts: bool) -> Answer {
    let firsts: Vec<_> = answers
        .iter()
        .filter(|a| a.status == 201 && !a.is_replay())
        .collect();
    assert_eq!(firsts.len(), 1, "exactly one execution answers first");
    let first = firsts[0].clone();
    let (mut in_flight, mut replays) = (0, 0);
    for a in answers {
        match a.status {
            201 if a.is_replay() => {
                assert_eq!(a.body, first.body, "a replay is byte for byte");
                assert_eq!(a.header("location"), first.header("location"));
                replays += 1;
            }
            201 => {}
            409 if conflicts => {
                assert!(a.header("retry-after").is_some(), "409 carries Retry-After");
                a.problem();
                in_flight += 1;
            }
            other => panic!("unexpected answer {other}: {}", a.text()),
        }
    }
    eprintln!("1 execution, {in_flight} answered 409, {replays} replays");
    first
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_identical_requests_execute_once_on_sqlite() {
    let stack = Stack::sqlite(&[]).await;
    let body = client::body("cart-storm", 4200, "tok_visa");
    let answers = storm(&[stack.url()], "storm-1", &body).await;
    assert_one_execution(&answers);
    let http = client::http();
    assert_eq!(
        client::orders(&http, stack.url(), TENANT_A.0).await.len(),
        1,
        "one order"
    );
    let charges = client::charges_per_order(&http, &stack.payco).await;
    assert_eq!(charges.len(), 1, "one order charged: {charges:?}");
    assert_eq!(charges[0].1, 1, "charged once: {charges:?}");
}

/// `serve --wait-ms`: the 199 duplicates wait for the first answer and get it, none a 409;
/// on two servers sharing PostgreSQL (a waiting request reads the row again, whichever server
/// holds the claim). PayCo is slowed so every duplicate arrives while the first one works.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn wait_mode_answers_two_hundred_duplicates_with_the_first_answer() {
    let url = Postgres::shared().fresh_database("wait_storm").await;
    let dir = tempfile::tempdir().unwrap();
    let payco = Service::payco(dir.path()).await;
    let slow = LatencyProxy::start(payco.addr().parse().unwrap(), Duration::from_millis(300)).await;
    let slow_url = format!("http://{}", slow.addr());
    let wait = ["--wait-ms", "8000"];
    let one = Service::start(&checkout_args_via(&url, &payco, &slow_url, &wait)).await;
    let two = Service::start(&checkout_args_via(&url, &payco, &slow_url, &wait)).await;
    let body = client::body("cart-wait-storm", 770, "tok_visa");
    let answers = storm(&[&one.url, &two.url], "wait-storm-1", &body).await;
    assert_one_execution_with(&answers, false);
    let replays = answers.iter().filter(|a| a.is_replay()).count();
    assert_eq!(
        replays,
        REQUESTS - 1,
        "every duplicate got the first answer"
    );
    let charges = client::charges_per_order(&client::http(), &payco).await;
    assert_eq!(charges.iter().map(|c| c.1).collect::<Vec<_>>(), [1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_on_one_postgres_execute_once() {
    let url = Postgres::shared().fresh_database("storm").await;
    let dir = tempfile::tempdir().unwrap();
    let payco = Service::payco(dir.path()).await;
    let one = Service::start(&checkout_args(&url, &payco, &[])).await;
    let two = Service::start(&checkout_args(&url, &payco, &[])).await;
    let body = client::body("cart-pg-storm", 990, "tok_visa");
    let answers = storm(&[&one.url, &two.url], "pg-storm-1", &body).await;
    let first = assert_one_execution(&answers);
    let http = client::http();
    // Both servers see the one order and replay the one answer.
    for server in [&one.url, &two.url] {
        assert_eq!(client::orders(&http, server, TENANT_A.0).await.len(), 1);
        let again = client::checkout(&http, server, TENANT_A.0, "pg-storm-1", &body).await;
        assert!(again.is_replay());
        assert_eq!(again.body, first.body);
    }
    let charges = client::charges_per_order(&http, &payco).await;
    assert_eq!(charges.len(), 1, "{charges:?}");
    assert_eq!(charges[0].1, 1, "{charges:?}");
}
