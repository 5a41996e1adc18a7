//! The server README's program for protecting an application's own routes
//! (`examples/protect_routes.rs`), run as written over real HTTP on SQLite and PostgreSQL: the
//! routes of its four patterns each answer once per key (the phases route's carrier books one
//! parcel even when its first answer is lost), and the application's own authentication
//! answers its refusals.

use std::{sync::atomic::Ordering, time::Duration};

use idem_server::{
    db::{Db, DbOptions},
    serve::{serve, ConnLimits},
};

use crate::{
    client::{self, Answer},
    support::postgres::Postgres,
};

#[allow(dead_code)] // Its `main` runs only as the example.
#[path = "../../examples/protect_routes.rs"]
mod protect_routes;

async fn post(url: &str, account: Option<&str>, key: &str, form: Option<&str>) -> Answer {
    let mut request = client::http()
        .post(url)
        .header("Idempotency-Key", format!("\"{key}\""));
    if let Some(account) = account {
        request = request.bearer_auth(account);
    }
    if let Some(form) = form {
        request = request
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form.to_owned());
    }
    client::answer(request.send().await.expect("send")).await
}

async fn the_example(db_url: &str) {
    let db = Db::open(db_url, DbOptions::default()).await.unwrap();
    let carrier = protect_routes::carrier::Carrier::default();
    let carrier_at = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let shipping = protect_routes::Shipping::new(
        format!("http://{}", carrier_at.local_addr().unwrap()),
        Duration::from_millis(500),
    );
    let routes = protect_routes::carrier::routes(carrier.clone());
    tokio::spawn(serve(carrier_at, routes, ConnLimits::default()));
    let app = protect_routes::app(db, shipping)
        .await
        .expect("the example's schema");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(serve(listener, app, ConnLimits::default()));
    let at = |path: &str| format!("{base}{path}");
    let acct = Some("acct_1");

    // The application's own refusal, untouched (read as it is: `client::answer` holds every
    // 401 to idem's own challenge).
    let anonymous = client::http().post(at("/v1/notes")).send().await.unwrap();
    let challenge = anonymous.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .to_owned();
    assert_eq!(anonymous.status(), 401);
    assert_eq!(challenge, r#"Bearer realm="shop""#);
    assert_eq!(anonymous.text().await.unwrap(), "sign in first");

    // The form route: once per key; the same key for another customer is 422.
    let charges = at("/v1/customers/cus_1/charges");
    let first = post(&charges, acct, "k-1", Some("amount=2590&currency=usd")).await;
    assert_eq!(first.status, 201, "{}", first.text());
    let again = post(&charges, acct, "k-1", Some("currency=usd&amount=2590")).await;
    assert!(again.is_replay() && again.body == first.body);
    let other = at("/v1/customers/cus_2/charges");
    assert_eq!(
        post(&other, acct, "k-1", Some("amount=2590&currency=usd"))
            .await
            .status,
        422
    );
    // Another account's same key is its own request.
    let theirs = post(
        &charges,
        Some("acct_2"),
        "k-1",
        Some("amount=2590&currency=usd"),
    )
    .await;
    assert_eq!(theirs.status, 201);
    assert!(!theirs.is_replay());

    // The body-less confirm in wait mode: a duplicate sent while it runs gets its answer.
    let confirm = at("/v1/payment_intents/pi_1/confirm");
    let (one, two) = tokio::join!(
        post(&confirm, acct, "k-2", None),
        post(&confirm, acct, "k-2", None)
    );
    assert_eq!((one.status, two.status), (200, 200));
    assert_eq!(one.body, two.body);
    assert!(
        one.is_replay() != two.is_replay(),
        "one ran, one waited for its answer"
    );

    // The atomic route: its note and audit line with the answer, once.
    let notes = at("/v1/notes");
    let note = post(&notes, acct, "k-3", None).await;
    assert_eq!(note.status, 201, "{}", note.text());
    assert!(post(&notes, acct, "k-3", None).await.is_replay());
    let fresh = post(&notes, acct, "k-4", None).await;
    assert_ne!(fresh.body, note.body, "a new key is a new note");

    // The phases route: the carrier booked the parcel but its answer came too late (502, the
    // claim released); the retry resumes the recorded label, and the carrier, asked the
    // same question again, books nothing more.
    let shipments = at("/v1/orders/o_1/shipments");
    carrier.lose_next_answer.store(true, Ordering::SeqCst);
    let lost = post(&shipments, acct, "k-5", None).await;
    assert_eq!(lost.status, 502, "{}", lost.text());
    let shipped = post(&shipments, acct, "k-5", None).await;
    assert_eq!(shipped.status, 201, "{}", shipped.text());
    assert!(
        shipped.text().contains(r#""tracking":"TRK0001""#),
        "{}",
        shipped.text()
    );
    assert!(post(&shipments, acct, "k-5", None).await.is_replay());
    let asked = carrier.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "asked twice: {asked:?}");
    assert_eq!(asked[0], asked[1], "under one label");
    assert_eq!(carrier.booked.lock().unwrap().len(), 1, "one parcel");
    // Another order under the same key is another request: 422, nothing booked.
    let other = post(&at("/v1/orders/o_2/shipments"), acct, "k-5", None).await;
    assert_eq!(other.status, 422);
    assert_eq!(carrier.booked.lock().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_program_protects_its_routes_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    the_example(&format!("sqlite:{}", dir.path().join("shop.db").display())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_program_protects_its_routes_on_postgres() {
    the_example(&Postgres::shared().fresh_database("shop_example").await).await;
}
