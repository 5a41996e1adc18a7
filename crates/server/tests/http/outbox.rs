//! The transactional outbox end to end, on SQLite and PostgreSQL: the checkout writes an
//! `order.paid` message with each paid order's fenced commit, its relay delivers it at least
//! once to the receipts service, which sends one receipt per message through
//! `process_once`. Checked after each fault: the relay killed between the consumer's
//! acknowledgement and its own mark (it resends after its restart), the consumer killed
//! between its effect and its acknowledgement (the relay resends), and every message
//! delivered again by hand, twice, in reverse and at once: one receipt per paid order, none
//! for a declined one, and the outbox empty of unsent messages at the end.

use std::{
    collections::BTreeMap,
    time::{Duration, Instant},
};

use serde_json::{json, Value};
use tempfile::TempDir;

use idem_server::{
    checkout::outbox::table::{self, Unsent},
    db::{Db, DbOptions},
    with_pool,
};

use crate::{
    client,
    support::{
        postgres::Postgres,
        process::{checkout_args, receipts_args, Service, TENANT_A},
    },
};

/// Within how long a message must have become a receipt, or the outbox be empty.
const BOUND: Duration = Duration::from_secs(15);

/// The relay's settings in these tests: to the receipts service, a pass every 100 ms.
fn relay_to(receipts: &Service) -> Vec<String> {
    relay_every(receipts, "100")
}

/// The relay to the receipts service, a pass every `ms` (`0`: off).
fn relay_every(receipts: &Service, ms: &str) -> Vec<String> {
    ["--relay-to", &receipts.url, "--relay-interval-ms", ms]
        .map(str::to_owned)
        .to_vec()
}

/// The databases of one run: the checkout's and the receipts service's.
struct Databases {
    _dir: TempDir,
    checkout: String,
    receipts: String,
}

impl Databases {
    async fn new(backend: Backend, name: &str) -> Databases {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let (checkout, receipts) = match backend {
            Backend::Sqlite => (
                format!("sqlite:{}", dir.path().join("checkout.db").display()),
                format!("sqlite:{}", dir.path().join("receipts.db").display()),
            ),
            Backend::Postgres => {
                let pg = Postgres::shared();
                (
                    pg.fresh_database(&format!("{name}_checkout")).await,
                    pg.fresh_database(&format!("{name}_receipts")).await,
                )
            }
        };
        Databases {
            _dir: dir,
            checkout,
            receipts,
        }
    }

    /// The checkout's table, opened beside the server (to read its outbox).
    async fn checkout_db(&self) -> Db {
        Db::open(&self.checkout, DbOptions::default())
            .await
            .expect("open the checkout's database")
    }
}

/// A checkout server relaying to a receipts service, PayCo beside them, on one backend.
struct Run {
    dbs: Databases,
    _dir: TempDir,
    _payco: Service,
    receipts: Service,
    server: Service,
}

impl Run {
    /// Everything started, the relay a pass every 100 ms with `relay` added to its settings.
    async fn start(backend: Backend, name: &str, relay: &[&str]) -> Run {
        let dbs = Databases::new(backend, name).await;
        let dir = tempfile::tempdir().expect("a temporary folder");
        let payco = Service::payco(dir.path()).await;
        let receipts = Service::receipts(&dbs.receipts, &[]).await;
        let mut args = relay_to(&receipts);
        args.extend(relay.iter().map(|a| a.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let server = Service::start(&checkout_args(&dbs.checkout, &payco, &args)).await;
        Run {
            dbs,
            _dir: dir,
            _payco: payco,
            receipts,
            server,
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Backend {
    Sqlite,
    Postgres,
}

/// Check out `paid` carts with a good card and one with a declining card; the paid orders'
/// ids and the declined one's.
async fn pay(server: &Service, paid: usize) -> (Vec<i64>, i64) {
    let http = client::http();
    let mut ids = Vec::new();
    for n in 0..paid {
        let body = client::body(&format!("cart-{n}"), 1000 + n as i64, "tok_visa");
        let answer =
            client::checkout(&http, &server.url, TENANT_A.0, &format!("paid-{n}"), &body).await;
        assert_eq!(answer.status, 201, "{}", answer.text());
        ids.push(answer.json()["order"].as_i64().expect("an order id"));
    }
    let body = client::body("cart-declined", 999, "tok_decline");
    let declined = client::checkout(&http, &server.url, TENANT_A.0, "declined", &body).await;
    assert_eq!(declined.status, 402, "{}", declined.text());
    let orders = client::orders(&http, &server.url, TENANT_A.0).await;
    let declined = orders
        .iter()
        .find(|o| o["status"] == "declined")
        .and_then(|o| o["id"].as_i64())
        .expect("the declined order");
    (ids, declined)
}

/// The receipts of tenant A, counted per order.
async fn receipts_per_order(receipts: &Service) -> BTreeMap<i64, usize> {
    let url = format!("{}/api/receipts", receipts.url);
    let listed = client::get_json(&client::http(), &url, TENANT_A.0).await;
    let mut counts = BTreeMap::new();
    for receipt in listed.as_array().expect("receipts are an array") {
        *counts
            .entry(receipt["order"].as_i64().unwrap())
            .or_insert(0) += 1;
    }
    counts
}

/// Wait until the outbox has no unsent message, within [`BOUND`].
async fn outbox_drained(db: &Db) {
    let started = Instant::now();
    loop {
        let unsent = table::count_unsent(db).await.expect("read the outbox");
        if unsent == 0 {
            return;
        }
        assert!(
            started.elapsed() < BOUND,
            "{unsent} messages still unsent after {BOUND:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// One receipt for each of `paid`, none for anything else; checked again after a few more
/// relay passes, so a late duplicate would be seen.
async fn one_receipt_each(receipts: &Service, paid: &[i64]) {
    let expected: BTreeMap<i64, usize> = paid.iter().map(|&id| (id, 1)).collect();
    let started = Instant::now();
    loop {
        let seen = receipts_per_order(receipts).await;
        if seen.len() >= expected.len() {
            assert_eq!(
                seen, expected,
                "one receipt per paid order, none for others"
            );
            break;
        }
        assert!(
            started.elapsed() < BOUND,
            "receipts {seen:?}, expected {expected:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        receipts_per_order(receipts).await,
        expected,
        "and still one each"
    );
}

async fn paid_orders_get_one_receipt_each(backend: Backend, name: &str) {
    let run = Run::start(backend, name, &[]).await;
    let (paid, declined) = pay(&run.server, 3).await;
    one_receipt_each(&run.receipts, &paid).await;
    assert!(!paid.contains(&declined));
    let db = run.dbs.checkout_db().await;
    outbox_drained(&db).await;
    assert_eq!(
        table::count_all(&db).await.unwrap(),
        3,
        "sent rows are kept a day by default"
    );
}

#[tokio::test]
async fn paid_orders_get_one_receipt_each_and_a_declined_one_none_sqlite() {
    paid_orders_get_one_receipt_each(Backend::Sqlite, "outbox_paid").await;
}

#[tokio::test]
async fn paid_orders_get_one_receipt_each_and_a_declined_one_none_postgres() {
    paid_orders_get_one_receipt_each(Backend::Postgres, "outbox_paid").await;
}

/// Write `n` messages the relay cannot send (their payload is not JSON: refused before any
/// call) straight into the outbox, as a bug or a hand edit would.
async fn poison(db: &Db, n: usize) {
    for i in 0..n {
        with_pool!(db, |pool| {
            sqlx::query(
                "INSERT INTO outbox (scope, message_id, kind, payload, created_at) \
                 VALUES ($1, $2, 'order.paid', 'not json', 0)",
            )
            .bind(TENANT_A.1)
            .bind(format!("poison-{i}"))
            .execute(pool)
            .await
            .map(|_| ())
            .expect("write a poisoned message")
        });
    }
}

/// More refused messages than a pass reads (5, batch 2) ahead of the paid orders' messages:
/// each pass reads on from where the last one stopped, so the paid ones are delivered, and the
/// refused ones stay unsent, tried again.
async fn refused_messages_never_hold_back_later_ones(backend: Backend, name: &str) {
    let run = Run::start(backend, name, &["--relay-batch", "2"]).await;
    let db = run.dbs.checkout_db().await;
    poison(&db, 5).await;
    let (paid, _) = pay(&run.server, 2).await;
    one_receipt_each(&run.receipts, &paid).await;
    assert_eq!(
        table::count_unsent(&db).await.unwrap(),
        5,
        "the refused ones stay unsent"
    );
}

#[tokio::test]
async fn refused_messages_beyond_a_batch_never_hold_back_later_ones_sqlite() {
    refused_messages_never_hold_back_later_ones(Backend::Sqlite, "outbox_refused").await;
}

#[tokio::test]
async fn refused_messages_beyond_a_batch_never_hold_back_later_ones_postgres() {
    refused_messages_never_hold_back_later_ones(Backend::Postgres, "outbox_refused").await;
}

/// `--outbox-keep-ms 1`: once acknowledged, a message's row is deleted at a later pass; an
/// unsent (refused) one is kept.
async fn sent_rows_are_pruned_after_keep(backend: Backend, name: &str) {
    let run = Run::start(backend, name, &["--outbox-keep-ms", "1"]).await;
    let db = run.dbs.checkout_db().await;
    poison(&db, 1).await;
    let (paid, _) = pay(&run.server, 2).await;
    one_receipt_each(&run.receipts, &paid).await;
    let started = Instant::now();
    while table::count_all(&db).await.unwrap() > 1 {
        assert!(started.elapsed() < BOUND, "sent rows still there");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        table::count_unsent(&db).await.unwrap(),
        1,
        "the unsent one is kept"
    );
}

#[tokio::test]
async fn sent_rows_are_pruned_after_keep_and_unsent_ones_kept_sqlite() {
    sent_rows_are_pruned_after_keep(Backend::Sqlite, "outbox_prune").await;
}

#[tokio::test]
async fn sent_rows_are_pruned_after_keep_and_unsent_ones_kept_postgres() {
    sent_rows_are_pruned_after_keep(Backend::Postgres, "outbox_prune").await;
}

/// The relay crashes (SIGABRT, as a SIGKILL would) after the consumer acknowledged the first
/// message and before its mark: the restarted server sends it again, the consumer answers
/// `duplicate`, and the relay marks it.
async fn a_relay_killed_before_its_mark_resends(backend: Backend, name: &str) {
    let dbs = Databases::new(backend, name).await;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let payco = Service::payco(dir.path()).await;
    let receipts = Service::receipts(&dbs.receipts, &[]).await;
    // The relay off while the orders are paid, so the crash comes after they all are.
    let off = relay_every(&receipts, "0");
    let off: Vec<&str> = off.iter().map(String::as_str).collect();
    let server = Service::start(&checkout_args(&dbs.checkout, &payco, &off)).await;
    let relay = relay_to(&receipts);
    let (paid, _) = pay(&server, 2).await;
    let listen = server.addr().to_owned();
    server.kill().await;

    let mut crashing: Vec<&str> = relay.iter().map(String::as_str).collect();
    crashing.extend(["--failpoint", "relay-after-send=crash"]);
    let mut server =
        Service::start_on(&listen, &checkout_args(&dbs.checkout, &payco, &crashing)).await;
    server
        .wait_for_stderr("failpoint relay-after-send reached", BOUND)
        .await;
    let status = server.wait_exit(BOUND).await;
    assert!(!status.success(), "the relay's process crashed");
    let db = dbs.checkout_db().await;
    assert_eq!(
        table::count_unsent(&db).await.unwrap(),
        2,
        "acknowledged, never marked"
    );
    assert_eq!(
        receipts_per_order(&receipts).await.len(),
        1,
        "the consumer has it"
    );

    let relay: Vec<&str> = relay.iter().map(String::as_str).collect();
    let _server = Service::start_on(&listen, &checkout_args(&dbs.checkout, &payco, &relay)).await;
    outbox_drained(&db).await;
    one_receipt_each(&receipts, &paid).await;
}

#[tokio::test]
async fn a_relay_killed_between_sending_and_marking_resends_and_one_receipt_stays_sqlite() {
    a_relay_killed_before_its_mark_resends(Backend::Sqlite, "outbox_relay_crash").await;
}

#[tokio::test]
async fn a_relay_killed_between_sending_and_marking_resends_and_one_receipt_stays_postgres() {
    a_relay_killed_before_its_mark_resends(Backend::Postgres, "outbox_relay_crash").await;
}

/// The consumer crashes after its receipt committed and before it acknowledged: the relay
/// sees the connection fail, keeps the message (and the next one, paid while the consumer is
/// down), and sends it again to the restarted consumer, which answers `duplicate`: one
/// receipt each.
async fn a_consumer_killed_before_its_ack_gets_it_again(backend: Backend, name: &str) {
    let dbs = Databases::new(backend, name).await;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let payco = Service::payco(dir.path()).await;
    let failing = ["--failpoint", "consumer-after-effect=crash"];
    let mut receipts = Service::receipts(&dbs.receipts, &failing).await;
    let relay = relay_to(&receipts);
    let relay: Vec<&str> = relay.iter().map(String::as_str).collect();
    let server = Service::start(&checkout_args(&dbs.checkout, &payco, &relay)).await;
    let (paid, _) = pay(&server, 1).await;
    receipts
        .wait_for_stderr("failpoint consumer-after-effect reached", BOUND)
        .await;
    let status = receipts.wait_exit(BOUND).await;
    assert!(!status.success(), "the consumer's process crashed");
    let db = dbs.checkout_db().await;
    assert_eq!(
        table::count_unsent(&db).await.unwrap(),
        1,
        "never acknowledged"
    );
    // Another order paid while the consumer is down: the relay keeps failing to deliver it,
    // and keeps it.
    let http = client::http();
    let body = client::body("cart-later", 777, "tok_visa");
    let later = client::checkout(&http, &server.url, TENANT_A.0, "later", &body).await;
    let later = later.json()["order"].as_i64().expect("an order id");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(
        table::count_unsent(&db).await.unwrap(),
        2,
        "nothing acknowledged"
    );

    let listen = receipts.addr().to_owned();
    let receipts = Service::start_on(&listen, &receipts_args(&dbs.receipts, &[])).await;
    outbox_drained(&db).await;
    one_receipt_each(&receipts, &[paid[0], later]).await;
    drop(server);
}

#[tokio::test]
async fn a_consumer_killed_between_its_effect_and_its_ack_gets_it_again_and_one_receipt_stays_sqlite(
) {
    a_consumer_killed_before_its_ack_gets_it_again(Backend::Sqlite, "outbox_consumer_crash").await;
}

#[tokio::test]
async fn a_consumer_killed_between_its_effect_and_its_ack_gets_it_again_and_one_receipt_stays_postgres(
) {
    a_consumer_killed_before_its_ack_gets_it_again(Backend::Postgres, "outbox_consumer_crash")
        .await;
}

/// `POST /deliveries` with `body` as the relay (its token); the answer.
async fn deliver(http: &reqwest::Client, receipts: &Service, body: &str) -> client::Answer {
    let sent = http
        .post(format!("{}/deliveries", receipts.url))
        .bearer_auth("relay-token")
        .header("content-type", "application/json")
        .body(body.to_owned())
        .send()
        .await
        .expect("send a delivery");
    client::answer(sent).await
}

/// The delivery the relay would send for an outbox row.
fn delivery_of(message: &Unsent) -> String {
    let payload: Value = serde_json::from_str(&message.payload).expect("a JSON payload");
    json!({
        "id": message.message_id,
        "kind": message.kind,
        "scope": message.scope,
        "payload": payload,
    })
    .to_string()
}

/// The relay off: the checkout's real messages delivered by hand, each twice in order, then
/// all in reverse, then all at once: the first delivery of each is `applied`, every other
/// `duplicate`, and each paid order has one receipt.
async fn duplicates_and_reordering(backend: Backend, name: &str) {
    let dbs = Databases::new(backend, name).await;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let payco = Service::payco(dir.path()).await;
    let receipts = Service::receipts(&dbs.receipts, &[]).await;
    let off = ["--relay-interval-ms", "0"];
    let server = Service::start(&checkout_args(&dbs.checkout, &payco, &off)).await;
    let (paid, declined) = pay(&server, 3).await;
    let messages = table::unsent(&dbs.checkout_db().await, 0, 100)
        .await
        .unwrap();
    let ordered: Vec<i64> = messages
        .iter()
        .map(|m| {
            serde_json::from_str::<Value>(&m.payload).unwrap()["order"]
                .as_i64()
                .unwrap()
        })
        .collect();
    assert_eq!(
        ordered, paid,
        "a message per paid order, in order; none for {declined}"
    );

    let http = client::http();
    let mut handled = Vec::new();
    for message in &messages {
        for _ in 0..2 {
            let answer = deliver(&http, &receipts, &delivery_of(message)).await;
            assert_eq!(answer.status, 200, "{}", answer.text());
            handled.push(answer.json()["handled"].as_str().unwrap().to_owned());
        }
    }
    for message in messages.iter().rev() {
        let answer = deliver(&http, &receipts, &delivery_of(message)).await;
        assert_eq!(answer.json()["handled"], "duplicate");
    }
    let at_once = messages.iter().rev().chain(&messages).map(|message| {
        let (http, receipts) = (http.clone(), &receipts);
        async move { deliver(&http, receipts, &delivery_of(message)).await }
    });
    for answer in futures_util::future::join_all(at_once).await {
        assert_eq!(
            (answer.status, answer.json()["handled"].as_str()),
            (200, Some("duplicate"))
        );
    }
    assert_eq!(
        handled,
        ["applied", "duplicate"].repeat(messages.len()),
        "the first delivery of each applied, its repeat a duplicate"
    );
    one_receipt_each(&receipts, &paid).await;
    drop(server);
}

#[tokio::test]
async fn duplicates_and_reordering_give_one_receipt_per_paid_order_sqlite() {
    duplicates_and_reordering(Backend::Sqlite, "outbox_dupes").await;
}

#[tokio::test]
async fn duplicates_and_reordering_give_one_receipt_per_paid_order_postgres() {
    duplicates_and_reordering(Backend::Postgres, "outbox_dupes").await;
}

/// Bad deliveries get a clear 4xx problem and record nothing; the good one after them is
/// processed as usual.
#[tokio::test]
async fn bad_deliveries_are_refused_with_a_problem_and_lose_nothing() {
    let dbs = Databases::new(Backend::Sqlite, "outbox_bad").await;
    let receipts = Service::receipts(&dbs.receipts, &[]).await;
    let http = client::http();
    let good = json!({"id": "order-9-paid", "kind": "order.paid", "scope": "tenant-a",
        "payload": {"order": 9, "amount": 900, "charge": "ch_9"}});
    let with = |field: &str, value: Value| {
        let mut v = good.clone();
        v[field] = value;
        v.to_string()
    };
    for (body, status, kind) in [
        ("{".to_owned(), 400, "/problems/invalid-delivery"),
        ("[1,2]".to_owned(), 400, "/problems/invalid-delivery"),
        (
            with("payload", json!({"order": "9"})),
            400,
            "/problems/invalid-delivery",
        ),
        (
            with("id", json!("x".repeat(256))),
            400,
            "/problems/invalid-delivery",
        ),
        (with("id", json!("")), 400, "/problems/invalid-delivery"),
        (
            with("kind", json!("order.refunded")),
            422,
            "/problems/unknown-message-kind",
        ),
    ] {
        let answer = deliver(&http, &receipts, &body).await;
        assert_eq!(answer.status, status, "{body}: {}", answer.text());
        assert_eq!(answer.problem().kind, kind, "{body}");
    }
    let unsigned = http
        .post(format!("{}/deliveries", receipts.url))
        .body(good.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(client::answer(unsigned).await.status, 401);
    let tenant_token = http
        .post(format!("{}/deliveries", receipts.url))
        .bearer_auth(TENANT_A.0)
        .body(good.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(
        client::answer(tenant_token).await.status,
        401,
        "a tenant is no sender"
    );
    assert!(
        receipts_per_order(&receipts).await.is_empty(),
        "nothing recorded"
    );
    let answer = deliver(&http, &receipts, &good.to_string()).await;
    assert_eq!(answer.json()["handled"], "applied", "{}", answer.text());
    assert_eq!(
        receipts_per_order(&receipts).await,
        BTreeMap::from([(9, 1)])
    );
}
