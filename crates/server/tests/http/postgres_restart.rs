//! PostgreSQL restarted mid-run: while it is down every request is answered 503 with a
//! problem body (never a hang, never a 500), nothing committed is lost, nothing is charged
//! twice, and once it is back the same keys finish: one charge per order.

use std::time::Duration;

use crate::{
    client,
    support::{
        postgres::Postgres,
        process::{checkout_args, Service, TENANT_A},
    },
};

const ORDERS: usize = 12;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_postgres_restart_answers_503_then_resumes_without_double_charges() {
    let pg = Postgres::start();
    let dir = tempfile::tempdir().unwrap();
    let payco = Service::payco(dir.path()).await;
    let server = Service::start(&checkout_args(pg.url(), &payco, &["--lock-ms", "1000"])).await;
    let http = client::http();
    let body = |i: usize| client::body(&format!("cart-pg-{i}"), 100 + i as i64, "tok_visa");

    // Half the orders finish before the restart.
    let mut before = Vec::new();
    for i in 0..ORDERS / 2 {
        let a =
            client::checkout(&http, &server.url, TENANT_A.0, &format!("pg-{i}"), &body(i)).await;
        assert_eq!(a.status, 201, "{}", a.text());
        before.push(a);
    }

    // The other half run while the database stops under them.
    let mut during = Vec::new();
    for i in ORDERS / 2..ORDERS {
        let (http, url, body) = (http.clone(), server.url.clone(), body(i));
        during.push(tokio::spawn(async move {
            client::checkout(&http, &url, TENANT_A.0, &format!("pg-{i}"), &body).await
        }));
    }
    pg.stop();
    for t in during {
        let a = t.await.unwrap();
        assert!(
            [201, 409, 502, 503].contains(&a.status),
            "during the stop: {} {}",
            a.status,
            a.text()
        );
        if a.status != 201 {
            a.problem();
        }
    }
    // Down: a clear 503 with a problem body and Retry-After, for writes and for reads.
    let down = client::checkout(&http, &server.url, TENANT_A.0, "pg-down", &body(99)).await;
    assert_eq!(down.status, 503, "{}", down.text());
    assert!(down.header("retry-after").is_some());
    down.problem();
    let read = client::answer(
        http.get(format!("{}/api/orders", server.url))
            .bearer_auth(TENANT_A.0)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(read.status, 503, "{}", read.text());
    read.problem();

    pg.resume();
    // Every key settles: the finished ones replay their first answer byte for byte, the
    // interrupted ones finish (after their dead leases go stale).
    for i in 0..ORDERS {
        let a = client::checkout_until_settled(
            &http,
            &server.url,
            TENANT_A.0,
            &format!("pg-{i}"),
            &body(i),
            Duration::from_secs(30),
        )
        .await;
        assert_eq!(a.status, 201, "pg-{i}: {}", a.text());
        if let Some(first) = before.get(i) {
            assert!(a.is_replay());
            assert_eq!(a.body, first.body, "nothing committed was lost");
        }
    }
    let orders = client::orders(&http, &server.url, TENANT_A.0).await;
    assert_eq!(
        orders.len(),
        ORDERS,
        "one order per key, none lost: {orders:?}"
    );
    let charges = client::charges_per_order(&http, &payco).await;
    assert_eq!(charges.len(), ORDERS, "{charges:?}");
    assert!(
        charges.iter().all(|&(_, n)| n == 1),
        "no order charged twice: {charges:?}"
    );
}
