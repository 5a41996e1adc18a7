//! Graceful shutdown over the real binary: SIGTERM while checkouts are in flight lets them
//! commit (every accepted request gets its 201, replayed after a restart, one charge
//! each); a request still stuck at the drain deadline leaves a claim that the restarted
//! server takes over, one charge, nothing lost.
//!
//! To have requests in flight at the moment of SIGTERM, PayCo is reached through this
//! file's `slow_proxy`, which holds each answer 600 ms (a slow network; PayCo itself is
//! the real service).

use std::time::Duration;

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

use crate::{
    client::{body, charges_per_order, checkout, checkout_until_settled, http},
    stack::Stack,
    support::process::{checkout_args, Service},
};

/// A TCP proxy to `upstream` that waits `delay` before passing each answer back.
async fn slow_proxy(upstream: String, delay: Duration) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind proxy");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let upstream = upstream.clone();
            tokio::spawn(async move {
                let Ok(mut server) = TcpStream::connect(&upstream).await else {
                    return;
                };
                let (mut cr, mut cw) = client.split();
                let (mut sr, mut sw) = server.split();
                let up = tokio::io::copy(&mut cr, &mut sw);
                let down = async {
                    let mut buf = vec![0u8; 16 * 1024];
                    loop {
                        let n = sr.read(&mut buf).await.unwrap_or(0);
                        if n == 0 {
                            return;
                        }
                        tokio::time::sleep(delay).await;
                        if cw.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                };
                let _ = tokio::join!(up, down);
            });
        }
    });
    format!("http://{addr}")
}

fn sigterm(pid: u32) {
    let ok = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .expect("kill -TERM");
    assert!(ok.success());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_in_flight_checkouts_commit() {
    let stack = Stack::sqlite(&[]).await;
    let proxy = slow_proxy(stack.payco.addr().to_owned(), Duration::from_millis(600)).await;
    let db = Stack::checkout_db(&stack.dir);
    let mut args = checkout_args(&db, &stack.payco, &["--drain-ms", "5000"]);
    let at = args.iter().position(|a| a == "--payco").expect("--payco") + 1;
    args[at] = proxy;
    let mut server = Service::start(&args).await;
    let client = http();
    let mut requests = Vec::new();
    for i in 0..5 {
        let (client, url) = (client.clone(), server.url.clone());
        requests.push(tokio::spawn(async move {
            let order = body(&format!("cart-{i}"), 1000 + i, "tok_visa");
            (
                order.clone(),
                checkout(&client, &url, "token-a", &format!("s{i}"), &order).await,
            )
        }));
    }
    tokio::time::sleep(Duration::from_millis(250)).await;
    sigterm(server.pid());
    let mut orders = Vec::new();
    for (i, r) in requests.into_iter().enumerate() {
        let (order, answer) = r.await.expect("request task");
        assert_eq!(
            answer.status, 201,
            "in-flight checkout s{i} committed during the drain"
        );
        orders.push(order);
    }
    let exit = server.wait_exit(Duration::from_secs(10)).await;
    assert!(exit.success(), "clean exit after the drain: {exit:?}");

    // After a restart every key replays its committed answer, and PayCo charged once each.
    let server = Service::start(&checkout_args(&db, &stack.payco, &[])).await;
    for (i, order) in orders.iter().enumerate() {
        let again = checkout(&client, &server.url, "token-a", &format!("s{i}"), order).await;
        assert!(
            again.is_replay(),
            "s{i} replays after the restart: {}",
            again.status
        );
    }
    let charges = charges_per_order(&client, &stack.payco).await;
    assert_eq!(charges.len(), 5);
    assert!(charges.iter().all(|(_, n)| *n == 1), "{charges:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_stuck_past_the_deadline_is_taken_over_after_restart() {
    let stack = Stack::sqlite(&[]).await;
    let db = Stack::checkout_db(&stack.dir);
    let mut server = Service::start(&checkout_args(
        &db,
        &stack.payco,
        &[
            "--drain-ms",
            "300",
            "--lock-ms",
            "1000",
            "--failpoint",
            "after-charge=hang",
        ],
    ))
    .await;
    let client = http();
    let order = body("cart-x", 4200, "tok_visa");
    let stuck = {
        let (client, url, order) = (client.clone(), server.url.clone(), order.clone());
        tokio::spawn(async move {
            client
                .post(format!("{url}/api/checkout"))
                .bearer_auth("token-a")
                .header("Idempotency-Key", "stuck")
                .header("Content-Type", "application/json")
                .body(order)
                .send()
                .await
        })
    };
    server
        .wait_for_stderr("failpoint after-charge reached", Duration::from_secs(10))
        .await;
    sigterm(server.pid());
    let exit = server.wait_exit(Duration::from_secs(5)).await;
    assert!(exit.success(), "exits at the drain deadline: {exit:?}");
    assert!(
        stuck.await.expect("task").is_err(),
        "the stuck request was cut off"
    );

    let server = Service::start(&checkout_args(&db, &stack.payco, &["--lock-ms", "1000"])).await;
    let settled = checkout_until_settled(
        &client,
        &server.url,
        "token-a",
        "stuck",
        &order,
        Duration::from_secs(15),
    )
    .await;
    assert_eq!(
        settled.status, 201,
        "the retry took the claim over and finished"
    );
    let charges = charges_per_order(&client, &stack.payco).await;
    assert_eq!(charges.len(), 1);
    assert_eq!(charges[0].1, 1, "PayCo charged once: {charges:?}");
}

/// An `/api/events` stream is a response that never ends on its own: before, it held a
/// SIGTERM for the whole drain deadline. It ends when draining starts, while the checkouts
/// in flight still commit, and the process exits well before the deadline.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_event_stream_ends_at_sigterm_and_in_flight_work_still_commits() {
    const DRAIN: Duration = Duration::from_secs(20);
    let stack = Stack::sqlite(&[]).await;
    let proxy = slow_proxy(stack.payco.addr().to_owned(), Duration::from_millis(600)).await;
    let db = Stack::checkout_db(&stack.dir);
    let drain_ms = DRAIN.as_millis().to_string();
    let mut args = checkout_args(&db, &stack.payco, &["--drain-ms", &drain_ms]);
    let at = args.iter().position(|a| a == "--payco").expect("--payco") + 1;
    args[at] = proxy;
    let mut server = Service::start(&args).await;
    let client = http();

    // The event stream, read until the server ends it.
    let mut events = client
        .get(format!("{}/api/events", server.url))
        .bearer_auth("token-a")
        .send()
        .await
        .expect("open the event stream");
    assert_eq!(events.status(), 200);
    let stream = tokio::spawn(async move {
        let mut text = String::new();
        while let Ok(Some(chunk)) = events.chunk().await {
            text.push_str(&String::from_utf8_lossy(&chunk));
        }
        text
    });

    let mut requests = Vec::new();
    for i in 0..3 {
        let (client, url) = (client.clone(), server.url.clone());
        requests.push(tokio::spawn(async move {
            let order = body(&format!("cart-{i}"), 2000 + i, "tok_visa");
            checkout(&client, &url, "token-a", &format!("e{i}"), &order).await
        }));
    }
    tokio::time::sleep(Duration::from_millis(250)).await;
    let signalled = std::time::Instant::now();
    sigterm(server.pid());
    for (i, r) in requests.into_iter().enumerate() {
        let answer = r.await.expect("request task");
        assert_eq!(
            answer.status, 201,
            "checkout e{i} committed during the drain"
        );
    }
    let text = tokio::time::timeout(Duration::from_secs(5), stream)
        .await
        .expect("the event stream ended when draining started")
        .expect("stream task");
    assert!(
        text.contains("event: store"),
        "the stream carried the checkouts' events before it ended: {text:?}"
    );
    let exit = server.wait_exit(Duration::from_secs(8)).await;
    assert!(exit.success(), "clean exit: {exit:?}");
    let took = signalled.elapsed();
    assert!(
        took < DRAIN / 4,
        "exited {took:?} after SIGTERM, nowhere near the {DRAIN:?} drain deadline"
    );
}

/// Draining turns `/readyz` to 503 (a load balancer stops routing here) and fires every
/// [`Draining`] signal handed out before or after.
#[tokio::test]
async fn draining_turns_readiness_off_and_fires_the_signal() {
    use axum::extract::State;
    use idem_server::ops::health::{readyz, Health};

    let (db, _dir) = crate::db::sqlite().await;
    let health = Health::new(&db);
    let mut before = health.draining();
    assert_eq!(readyz(State(health.clone())).await.status(), 200);
    let early = tokio::time::timeout(Duration::from_millis(50), before.started()).await;
    assert!(early.is_err(), "no signal before draining starts");
    health.start_draining();
    assert_eq!(readyz(State(health.clone())).await.status(), 503);
    tokio::time::timeout(Duration::from_secs(1), before.started())
        .await
        .expect("a signal taken before draining fires");
    tokio::time::timeout(Duration::from_secs(1), health.draining().started())
        .await
        .expect("one taken after fires at once");
}
