//! What the SQL tables add to the rules, written once and run over SQLite and PostgreSQL
//! (`storage_sqlite.rs`, `storage_postgres.rs`): the atomic write (claim + recovery point
//! in one transaction; business writes + saved response in one fenced transaction), the
//! recovery point across a takeover and a release, real concurrency on one key, corrupt
//! rows, the database clock, and prune batches.

#![allow(dead_code)]

use idem_server::db::Finish;
use std::{
    sync::Arc,
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use idem_server::{
    db::{
        AppMigrations, Begin, BeginWith, Claim, ClaimTx, Clock, Db, DbError, DbOptions, Request,
        RouteInsert,
    },
    with_tx,
};
use idem_store::{Begin as StoreBegin, ErrorPolicy, RouteConfig, SavedResponse, StoreConfig};

use crate::tables::{self, Kind};

pub static CHECKOUT: RouteConfig =
    RouteConfig::required("POST /api/checkout", ErrorPolicy::ReleaseClaim);
pub static SAVING: RouteConfig =
    RouteConfig::required("POST /api/checkout", ErrorPolicy::SaveResponse);
pub const BODY: &[u8] = br#"{"cart":"c-1","amount":4200}"#;
pub const OTHER_BODY: &[u8] = br#"{"cart":"c-1","amount":9900}"#;
pub const LOCK_MS: u64 = 1_000;

/// A test route's own table, through [`Db::migrate`]: the same DDL on both backends.
const ORDERS: AppMigrations = AppMigrations {
    name: "test_orders",
    sqlite: &[
        (
            1,
            "orders",
            "CREATE TABLE orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL)",
        ),
        (
            2,
            "messages",
            "CREATE TABLE messages (order_id BIGINT PRIMARY KEY, note TEXT NOT NULL)",
        ),
    ],
    postgres: &[
        (
            1,
            "orders",
            "CREATE TABLE orders (id BIGINT PRIMARY KEY, status TEXT NOT NULL)",
        ),
        (
            2,
            "messages",
            "CREATE TABLE messages (order_id BIGINT PRIMARY KEY, note TEXT NOT NULL)",
        ),
    ],
};

pub fn options() -> DbOptions {
    DbOptions {
        store: StoreConfig {
            first_sent_tolerance_ms: None,
            lock_ms: LOCK_MS,
            retention_ms: 60_000,
            max_body_bytes: 1_024,
            event_capacity: 1_024,
        },
        ..DbOptions::default()
    }
}

async fn table(kind: Kind) -> Db {
    let db = tables::fresh(kind, options()).await;
    db.migrate(&ORDERS).await.expect("the route's migrations");
    db
}

fn request<'a>(key: &'a str, body: &'a [u8], route: &'a RouteConfig) -> Request<'a> {
    Request {
        first_sent: None,
        scope: "tenant-a",
        key: Some(key),
        body,
        route,
        target: None,
    }
}

async fn execute(db: &Db, now: u64, key: &str, body: &[u8], route: &RouteConfig) -> ClaimTx {
    match db
        .begin(now, request(key, body, route))
        .await
        .expect("begin")
    {
        Begin::Execute(claim) => claim,
        other => panic!("expected a claim, got {other:?}"),
    }
}

async fn answer(db: &Db, now: u64, key: &str, body: &[u8]) -> StoreBegin {
    match db
        .begin(now, request(key, body, &CHECKOUT))
        .await
        .expect("begin")
    {
        Begin::Answer(answer) => answer,
        other => panic!("expected an answer, got {other:?}"),
    }
}

/// Key `k` claimed at 0 with order 7 inserted (the zombie, whose lease then goes stale), and
/// taken over at `LOCK_MS` (the winner): both claims, their transactions committed.
async fn zombie_and_winner(db: &Db, route: &RouteConfig) -> (Claim, Claim) {
    let mut first = execute(db, 0, "k", BODY, route).await;
    insert_order(&mut first, 7).await;
    let zombie = first.commit().await.unwrap();
    let winner = execute(db, LOCK_MS, "k", BODY, route)
        .await
        .commit()
        .await
        .unwrap();
    (zombie, winner)
}

async fn insert_order(claim: &mut ClaimTx, id: i64) {
    with_tx!(claim.tx(), |conn| {
        sqlx::query("INSERT INTO orders (id, status) VALUES ($1, 'pending')")
            .bind(id)
            .execute(conn)
            .await
            .map(|_| ())
    })
    .expect("insert the order");
}

async fn orders(db: &Db) -> Vec<(i64, String)> {
    let sql = "SELECT id, status FROM orders ORDER BY id";
    if let Some(pool) = db.sqlite_pool() {
        sqlx::query_as(sql).fetch_all(pool).await.expect("orders")
    } else {
        let pool = db.postgres_pool().expect("a pool");
        sqlx::query_as(sql).fetch_all(pool).await.expect("orders")
    }
}

async fn raw(db: &Db, sql: &'static str) {
    if let Some(pool) = db.sqlite_pool() {
        sqlx::query(sql).execute(pool).await.expect("raw sql");
    } else {
        let pool = db.postgres_pool().expect("a pool");
        sqlx::query(sql).execute(pool).await.expect("raw sql");
    }
}

fn created(order: i64) -> SavedResponse {
    SavedResponse::json(201, format!(r#"{{"order":{order}}}"#).into_bytes())
}

/// The claim and the route's first write commit together, or neither exists.
pub async fn the_claim_and_its_recovery_point_commit_together(kind: Kind) {
    let db = table(kind).await;
    let mut claim = execute(&db, 0, "k", BODY, &CHECKOUT).await;
    assert_eq!(claim.recovery(), None);
    insert_order(&mut claim, 1).await;
    claim.set_recovery(b"1").await.unwrap();
    drop(claim); // a crash before the commit
    assert_eq!(orders(&db).await, vec![]);
    assert_eq!(tables::count(&db).await, 0, "no claim without its order");
    // The key is free: the retry claims it afresh, and nothing was recovered.
    let mut claim = execute(&db, 1, "k", BODY, &CHECKOUT).await;
    assert!(!claim.claim().taken_over());
    assert_eq!(claim.recovery(), None);
    insert_order(&mut claim, 2).await;
    claim.set_recovery(b"2").await.unwrap();
    claim.commit().await.unwrap();
    assert_eq!(orders(&db).await, vec![(2, "pending".into())]);
    assert_eq!(tables::count(&db).await, 1);
}

/// A zombie's fenced commit rolls its business writes back; the holder's lands.
pub async fn a_fenced_commit_rolls_the_handlers_writes_back(kind: Kind) {
    let db = table(kind).await;
    let mut first = execute(&db, 0, "k", BODY, &CHECKOUT).await;
    insert_order(&mut first, 7).await;
    first.set_recovery(b"7").await.unwrap();
    let zombie = first.commit().await.unwrap();
    // The lease goes stale; a retry takes it over and resumes order 7.
    let taker = execute(&db, LOCK_MS, "k", BODY, &CHECKOUT).await;
    assert!(taker.claim().taken_over());
    assert_eq!(taker.recovery(), Some(&b"7"[..]));
    let winner = taker.commit().await.unwrap();

    let mut late = db.finish_tx(&zombie).await.unwrap();
    with_tx!(late.tx(), |conn| {
        sqlx::query("UPDATE orders SET status = 'paid by the zombie' WHERE id = 7")
            .execute(conn)
            .await
            .map(|_| ())
    })
    .unwrap();
    let err = late
        .finish(LOCK_MS + 1, Finish::Commit(created(7)))
        .await
        .unwrap_err();
    assert!(err.is_fenced(), "{err}");
    assert_eq!(
        orders(&db).await,
        vec![(7, "pending".into())],
        "rolled back"
    );

    let mut done = db.finish_tx(&winner).await.unwrap();
    with_tx!(done.tx(), |conn| {
        sqlx::query("UPDATE orders SET status = 'paid' WHERE id = 7")
            .execute(conn)
            .await
            .map(|_| ())
    })
    .unwrap();
    done.finish(LOCK_MS + 2, Finish::Commit(created(7)))
        .await
        .unwrap();
    assert_eq!(orders(&db).await, vec![(7, "paid".into())]);
    assert_eq!(
        answer(&db, LOCK_MS + 3, "k", BODY).await,
        StoreBegin::Replay(created(7))
    );
    // The zombie can neither release nor fail the winner's saved answer.
    assert!(db
        .finish(LOCK_MS + 4, &zombie, Finish::Release)
        .await
        .unwrap_err()
        .is_fenced());
    let declined = SavedResponse::json(402, b"{}".to_vec());
    assert!(db
        .finish(LOCK_MS + 4, &zombie, zombie.failed(declined))
        .await
        .unwrap_err()
        .is_fenced());
}

/// The same with the route's one update carried by the fenced commit itself
/// (`Db::finish_with`, one statement on PostgreSQL): a zombie's update is never applied,
/// whether it commits or fails (release or save); the holder's is, with its response.
pub async fn a_fenced_commit_with_never_applies_the_routes_update(kind: Kind) {
    use idem_server::db::{RouteUpdate, RouteWrite};

    let db = table(kind).await;
    let status = |s: &'static str| {
        [RouteWrite::from(
            RouteUpdate::new("orders").set("status", s).filter("id", 7),
        )]
    };
    for route in [&CHECKOUT, &SAVING] {
        raw(&db, "DELETE FROM orders").await;
        tables::wipe(&db).await;
        let (zombie, winner) = zombie_and_winner(&db, route).await;
        let late = db
            .finish_with(
                LOCK_MS + 1,
                &zombie,
                Finish::Commit(created(7)),
                &status("paid by the zombie"),
            )
            .await;
        assert!(late.unwrap_err().is_fenced());
        let declined = SavedResponse::json(402, b"{}".to_vec());
        let failed = db
            .finish_with(
                LOCK_MS + 1,
                &zombie,
                zombie.failed(declined),
                &status("declined by the zombie"),
            )
            .await;
        assert!(failed.unwrap_err().is_fenced());
        assert_eq!(orders(&db).await, vec![(7, "pending".into())], "{route:?}");

        db.finish_with(
            LOCK_MS + 2,
            &winner,
            Finish::Commit(created(7)),
            &status("paid"),
        )
        .await
        .unwrap();
        assert_eq!(orders(&db).await, vec![(7, "paid".into())]);
        assert_eq!(
            answer(&db, LOCK_MS + 3, "k", BODY).await,
            StoreBegin::Replay(created(7))
        );
        let row = db.row(LOCK_MS + 3, "tenant-a", "k").await.unwrap().unwrap();
        assert_eq!(row.expires_at, LOCK_MS + 2 + options().store.retention_ms);
    }
    // finish_with follows the route's policy: release (the key free for the same request, the
    // order declined) or save the 402 (replayed).
    for (route, replayed) in [(&CHECKOUT, false), (&SAVING, true)] {
        let key = if replayed { "saved" } else { "released" };
        let claim = execute(&db, 0, key, BODY, route)
            .await
            .commit()
            .await
            .unwrap();
        let declined = SavedResponse::json(402, b"{}".to_vec());
        db.finish_with(
            1,
            &claim,
            claim.failed(declined.clone()),
            &status("declined"),
        )
        .await
        .unwrap();
        assert_eq!(orders(&db).await, vec![(7, "declined".into())]);
        match db.begin(2, request(key, BODY, route)).await.unwrap() {
            Begin::Answer(StoreBegin::Replay(r)) => {
                assert!(replayed, "{key}");
                assert_eq!(r, declined);
            }
            Begin::Execute(_) => assert!(!replayed, "{key}: released, runs again"),
            other => panic!("{key}: {other:?}"),
        }
        raw(&db, "UPDATE orders SET status = 'paid'").await;
    }
}

/// Several route writes with the fenced commit (`Db::finish_with` with an update and an
/// insert, the checkout's order paid and its outbox message; one statement on PostgreSQL):
/// a zombie's writes never land, the holder's all do with its answer, and a write that fails
/// (a duplicate key) fails the whole call: nothing written, the claim still in flight.
pub async fn a_fenced_commit_with_writes_all_of_them_or_none(kind: Kind) {
    use idem_server::db::{RouteInsert, RouteUpdate, RouteWrite};

    let db = table(kind).await;
    let writes = |order: i64, note: &'static str| -> [RouteWrite<'static>; 2] {
        [
            RouteUpdate::new("orders")
                .set("status", "paid")
                .filter("id", order)
                .into(),
            RouteInsert::new("messages")
                .value("order_id", order)
                .value("note", note)
                .into(),
        ]
    };
    let messages = async |db: &Db| -> Vec<(i64, String)> {
        let sql = "SELECT order_id, note FROM messages ORDER BY order_id";
        match (db.sqlite_pool(), db.postgres_pool()) {
            (Some(pool), _) => sqlx::query_as(sql).fetch_all(pool).await,
            (None, Some(pool)) => sqlx::query_as(sql).fetch_all(pool).await,
            (None, None) => unreachable!(),
        }
        .expect("messages")
    };
    let (zombie, winner) = zombie_and_winner(&db, &CHECKOUT).await;
    let late = db
        .finish_with(
            LOCK_MS + 1,
            &zombie,
            Finish::Commit(created(7)),
            &writes(7, "zombie"),
        )
        .await;
    assert!(late.unwrap_err().is_fenced());
    assert_eq!(orders(&db).await, vec![(7, "pending".into())]);
    assert_eq!(
        messages(&db).await,
        vec![],
        "a fenced commit writes no message"
    );
    db.finish_with(
        LOCK_MS + 2,
        &winner,
        Finish::Commit(created(7)),
        &writes(7, "winner"),
    )
    .await
    .unwrap();
    assert_eq!(orders(&db).await, vec![(7, "paid".into())]);
    assert_eq!(messages(&db).await, vec![(7, "winner".into())]);

    // A write that fails: order 8's message is there already.
    let mut claim = execute(&db, 0, "k8", BODY, &CHECKOUT).await;
    insert_order(&mut claim, 8).await;
    let claim = claim.commit().await.unwrap();
    raw(
        &db,
        "INSERT INTO messages (order_id, note) VALUES (8, 'before')",
    )
    .await;
    let failed = db
        .finish_with(1, &claim, Finish::Commit(created(8)), &writes(8, "again"))
        .await;
    assert!(matches!(failed, Err(ref e) if !e.is_fenced()), "{failed:?}");
    assert_eq!(
        orders(&db).await,
        vec![(7, "paid".into()), (8, "pending".into())],
        "the update went with the failed insert"
    );
    assert!(
        matches!(
            answer(&db, 2, "k8", BODY).await,
            StoreBegin::InFlight { .. }
        ),
        "nothing saved: the claim is still in flight"
    );
}

/// A failure under a releasing route, with the route's own write, in one fenced
/// transaction; the row stays, released, and the next worker with the same request claims
/// it again and resumes the same order; another payload under the released key is 422.
pub async fn the_recovery_point_outlives_a_release_for_the_same_request_only(kind: Kind) {
    let db = table(kind).await;
    let mut claim = execute(&db, 0, "k", BODY, &CHECKOUT).await;
    insert_order(&mut claim, 3).await;
    claim.set_recovery(b"3").await.unwrap();
    let claim = claim.commit().await.unwrap();
    let mut failing = db.finish_tx(&claim).await.unwrap();
    with_tx!(failing.tx(), |conn| {
        sqlx::query("UPDATE orders SET status = 'retrying' WHERE id = 3")
            .execute(conn)
            .await
            .map(|_| ())
    })
    .unwrap();
    let timeout = SavedResponse::json(502, b"{}".to_vec());
    failing.finish(1, claim.failed(timeout)).await.unwrap();
    let row = db.row(1, "tenant-a", "k").await.unwrap().expect("kept");
    assert_eq!(
        row.state,
        idem_store::RowState::Released,
        "released by the route's policy"
    );
    assert_eq!(row.token, Some(claim.lease().token));
    assert_eq!(orders(&db).await, vec![(3, "retrying".into())]);
    assert_eq!(answer(&db, 2, "k", OTHER_BODY).await, StoreBegin::Mismatch);

    let again = execute(&db, 2, "k", BODY, &CHECKOUT).await;
    assert!(
        !again.claim().taken_over(),
        "a claim again after the release, not a takeover"
    );
    assert!(again.claim().lease().token > claim.lease().token);
    assert_eq!(
        again.recovery(),
        Some(&b"3"[..]),
        "the same request resumes order 3"
    );
    let again = again.commit().await.unwrap();
    db.finish(3, &again, Finish::Release).await.unwrap();
    // A release is final for its lease: neither lease can write any more.
    for lease in [&claim, &again] {
        let late = db.finish(4, lease, Finish::Commit(created(3))).await;
        assert!(matches!(late, Err(DbError::Fenced)), "{late:?}");
        let late = db.finish(4, lease, Finish::Release).await;
        assert!(matches!(late, Err(DbError::Fenced)), "{late:?}");
    }
    assert_eq!(answer(&db, 4, "k", OTHER_BODY).await, StoreBegin::Mismatch);
    assert_eq!(orders(&db).await, vec![(3, "retrying".into())]);
}

/// A route write whose names are not plain identifiers is refused before anything is
/// written: `begin_with` leaves no claim and no row (the retry with a fixed route claims
/// afresh), `finish_with` leaves the claim held and the row as it was.
pub async fn a_route_write_that_names_no_plain_column_is_refused_and_writes_nothing(kind: Kind) {
    let db = table(kind).await;
    let injected = RouteInsert::new("orders")
        .value("id", 1)
        .value("status) VALUES (2, 'x'); --", "pending");
    let refused = db
        .begin_with(0, request("k", BODY, &CHECKOUT), &injected)
        .await;
    assert!(
        matches!(refused, Err(DbError::InvalidWrite(_))),
        "{refused:?}"
    );
    assert!(db.row(0, "tenant-a", "k").await.unwrap().is_none());
    assert_eq!(orders(&db).await, vec![]);

    let BeginWith::Created { claim, id } = begin_with(&db, 1, "k", BODY, 1).await else {
        panic!("the key is still free");
    };
    let everything = idem_server::db::RouteUpdate::new("orders").set("status", "paid");
    let refused = db
        .finish_with(2, &claim, Finish::Commit(created(id)), &[everything.into()])
        .await;
    assert!(
        matches!(refused, Err(DbError::InvalidWrite(_))),
        "{refused:?}"
    );
    assert_eq!(orders(&db).await, vec![(1, "pending".into())]);
    let row = db.row(3, "tenant-a", "k").await.unwrap().unwrap();
    assert_eq!(
        row.state,
        idem_store::RowState::InFlight,
        "the claim is still held"
    );
}

/// The test route's first row for `Db::begin_with`: an order with the given id.
fn first_order(id: i64) -> RouteInsert<'static> {
    RouteInsert::new("orders")
        .value("id", id)
        .value("status", "pending")
}

async fn begin_with(db: &Db, now: u64, key: &str, body: &[u8], order: i64) -> BeginWith {
    db.begin_with(now, request(key, body, &CHECKOUT), &first_order(order))
        .await
        .expect("begin_with")
}

/// `Db::begin_with` (one statement on PostgreSQL): the claim, the route's first row and its
/// id as the recovery point are written together, or none of them is.
pub async fn begin_with_writes_the_claim_its_row_and_its_point_together(kind: Kind) {
    let db = table(kind).await;
    let BeginWith::Created { claim, id } = begin_with(&db, 0, "k1", BODY, 1).await else {
        panic!("a new key creates");
    };
    assert_eq!(id, 1);
    assert_eq!(claim.lease().locked_at, 0);
    assert_eq!(orders(&db).await, vec![(1, "pending".into())]);
    let row = db
        .row(0, "tenant-a", "k1")
        .await
        .unwrap()
        .expect("the claim");
    assert_eq!(row.state, idem_store::RowState::InFlight);
    assert!(matches!(
        answer(&db, 1, "k1", BODY).await,
        StoreBegin::InFlight { .. }
    ));

    // The row cannot be written (its id is taken): no claim and no recovery point either.
    let failed = db
        .begin_with(2, request("k2", BODY, &CHECKOUT), &first_order(1))
        .await;
    assert!(failed.is_err(), "{failed:?}");
    assert!(
        db.row(2, "tenant-a", "k2").await.unwrap().is_none(),
        "no claim without its row"
    );
    let BeginWith::Created { id, .. } = begin_with(&db, 3, "k2", BODY, 2).await else {
        panic!("nothing was left to resume");
    };
    assert_eq!(id, 2);

    // The lease goes stale: the takeover resumes row 1 from the point written with it and
    // creates nothing.
    let BeginWith::Resume(mut taker) = begin_with(&db, LOCK_MS, "k1", BODY, 9).await else {
        panic!("a takeover resumes");
    };
    assert!(taker.claim().taken_over());
    assert_eq!(taker.recovery(), Some(&RouteInsert::point(1)[..]));
    assert_eq!(RouteInsert::id_of(taker.recovery().unwrap()), Some(1));
    // A route whose point names nothing usable creates anew in the claim's transaction; the
    // next worker resumes that.
    assert_eq!(taker.create(&first_order(9)).await.unwrap(), 9);
    taker.commit().await.unwrap();
    let BeginWith::Resume(next) = begin_with(&db, 2 * LOCK_MS, "k1", BODY, 10).await else {
        panic!("a takeover resumes");
    };
    assert_eq!(next.recovery(), Some(&b"9"[..]));
    assert_eq!(
        orders(&db).await,
        vec![
            (1, "pending".into()),
            (2, "pending".into()),
            (9, "pending".into())
        ]
    );
}

/// A released claim's point is resumed by `Db::begin_with` for the same request (the read
/// finds the released row: the claim again takes the transactional path, as a takeover);
/// another payload under the key is 422 and creates nothing.
pub async fn begin_with_resumes_a_released_request_and_refuses_another_payload(kind: Kind) {
    let db = table(kind).await;
    let BeginWith::Created { claim, .. } = begin_with(&db, 0, "k", BODY, 3).await else {
        panic!("a new key creates");
    };
    db.finish(1, &claim, Finish::Release).await.unwrap();
    let BeginWith::Resume(again) = begin_with(&db, 2, "k", BODY, 4).await else {
        panic!("the same request resumes");
    };
    assert!(
        !again.claim().taken_over(),
        "a claim again after the release"
    );
    assert_eq!(again.recovery(), Some(&b"3"[..]));
    let again = again.commit().await.unwrap();
    db.finish(3, &again, Finish::Release).await.unwrap();
    let other = begin_with(&db, 4, "k", OTHER_BODY, 5).await;
    assert!(
        matches!(other, BeginWith::Answer(StoreBegin::Mismatch)),
        "another payload never runs under the key: {other:?}"
    );
    assert_eq!(orders(&db).await, vec![(3, "pending".into())]);
}

/// `tasks` concurrent `Db::begin_with` on one key, each with a row of its own: exactly one
/// creates (one claim, one row), every other is a 409.
pub async fn many_tasks_creating_on_one_key_give_exactly_one_row(kind: Kind, tasks: usize) {
    let url = tables::fresh_url(kind).await;
    let options = DbOptions {
        max_connections: 16,
        ..options()
    };
    let db = Db::open(&url, options).await.expect("open");
    db.migrate(&ORDERS).await.expect("the route's migrations");
    open_connections(&db, 16).await;
    let start = Arc::new(tokio::sync::Barrier::new(tasks));
    let mut handles = Vec::new();
    for i in 0..tasks {
        let (db, start) = (db.clone(), Arc::clone(&start));
        handles.push(tokio::spawn(async move {
            start.wait().await;
            let order = i64::try_from(i).unwrap();
            match db
                .begin_with(5, request("one-key", BODY, &CHECKOUT), &first_order(order))
                .await
            {
                Ok(BeginWith::Created { .. }) => "created",
                Ok(BeginWith::Answer(StoreBegin::InFlight { .. })) => "409",
                other => panic!("unexpected {other:?}"),
            }
        }));
    }
    let mut created = 0;
    for h in handles {
        if h.await.expect("no task panics") == "created" {
            created += 1;
        }
    }
    assert_eq!(created, 1, "exactly one creates");
    assert_eq!(orders(&db).await.len(), 1, "exactly one row");
    assert_eq!(tables::count(&db).await, 1);
}

/// Open `n` connections of the pool at once, so racing tasks find them ready instead of
/// queueing behind the first while the others connect (which would serialize the race).
async fn open_connections(db: &Db, n: usize) {
    if let Some(pool) = db.sqlite_pool() {
        let mut held = Vec::new();
        for _ in 0..n {
            held.push(pool.acquire().await.expect("a connection"));
        }
    } else {
        let pool = db.postgres_pool().expect("a pool");
        let mut held = Vec::new();
        for _ in 0..n {
            held.push(pool.acquire().await.expect("a connection"));
        }
    }
}

/// Under the saving policy the failure is saved and replayed.
pub async fn a_failure_on_a_saving_route_is_replayed(kind: Kind) {
    let db = table(kind).await;
    let claim = execute(&db, 0, "k", BODY, &SAVING)
        .await
        .commit()
        .await
        .unwrap();
    let declined = SavedResponse::json(402, br#"{"error":"declined"}"#.to_vec());
    db.finish(1, &claim, claim.failed(declined.clone()))
        .await
        .unwrap();
    let got = db.begin(2, request("k", BODY, &SAVING)).await.unwrap();
    assert!(
        matches!(&got, Begin::Answer(StoreBegin::Replay(r)) if *r == declined),
        "{got:?}"
    );
}

/// `tasks` concurrent requests on one key, spread over `servers` tables on the same
/// database (several server processes): exactly one claims it, every other is a 409.
/// With `stale`, the key holds a stale claim first, so they race to take it over.
pub async fn many_tasks_claiming_one_key_give_exactly_one_execute(
    kind: Kind,
    servers: usize,
    tasks: usize,
    stale: bool,
) {
    let url = tables::fresh_url(kind).await;
    let mut dbs = Vec::new();
    for _ in 0..servers {
        let options = DbOptions {
            max_connections: 16,
            ..options()
        };
        dbs.push(Db::open(&url, options).await.expect("open"));
    }
    let now = if stale {
        execute(&dbs[0], 0, "one-key", BODY, &CHECKOUT)
            .await
            .commit()
            .await
            .unwrap();
        LOCK_MS
    } else {
        5
    };
    let start = Arc::new(tokio::sync::Barrier::new(tasks));
    let mut handles = Vec::new();
    for i in 0..tasks {
        let db = dbs[i % servers].clone();
        let start = Arc::clone(&start);
        handles.push(tokio::spawn(async move {
            start.wait().await;
            match db.begin(now, request("one-key", BODY, &CHECKOUT)).await {
                Ok(Begin::Execute(claim)) => {
                    assert_eq!(claim.claim().taken_over(), stale);
                    claim.commit().await.map(|_| "execute")
                }
                Ok(Begin::Answer(StoreBegin::InFlight { .. })) => Ok("409"),
                Ok(other) => panic!("unexpected {other:?}"),
                Err(e) => Err(e),
            }
        }));
    }
    let mut executes = 0;
    let mut in_flight = 0;
    for h in handles {
        match h.await.expect("no task panics") {
            Ok("execute") => executes += 1,
            Ok(_) => in_flight += 1,
            Err(e) => panic!("database error under contention: {e}"),
        }
    }
    assert_eq!(executes, 1, "exactly one execute");
    assert_eq!(in_flight, tasks - 1);
    assert_eq!(tables::count(&dbs[0]).await, 1);
}

/// The columns of one hand-written row (what a broken tool or migration could leave).
struct Forged {
    fingerprint: Vec<u8>,
    on_error: &'static str,
    status: &'static str,
    token: i64,
    headers: Option<&'static str>,
    body: Option<Vec<u8>>,
}

impl Forged {
    fn good() -> Self {
        Self {
            fingerprint: vec![0; 32],
            on_error: "save-response",
            status: "done",
            token: 1,
            headers: Some("[]"),
            body: Some(b"{}".to_vec()),
        }
    }
}

async fn forge(db: &Db, row: Forged) {
    tables::wipe(db).await;
    let sql = "INSERT INTO idem_claims (scope, key, fingerprint, on_error, status, token, \
        locked_at, created_at, expires_at, response_status, response_content_type, \
        response_headers, response_body) \
        VALUES ('tenant-a', 'k', $1, $2, $3, $4, 0, 0, 60000, 201, 'application/json', $5, $6)";
    macro_rules! bind {
        ($pool:expr) => {
            sqlx::query(sql)
                .bind(&row.fingerprint)
                .bind(row.on_error)
                .bind(row.status)
                .bind(row.token)
                .bind(row.headers)
                .bind(&row.body)
                .execute($pool)
                .await
                .map(|_| ())
        };
    }
    if let Some(pool) = db.sqlite_pool() {
        bind!(pool).expect("forge a row");
    } else {
        bind!(db.postgres_pool().expect("a pool")).expect("forge a row");
    }
}

/// Rows nobody could have written through the API: a clear error naming the row and
/// what is wrong, from `begin`, `row` and `rows`; never a panic, and the row is left alone.
pub async fn corrupt_rows_are_clear_errors(kind: Kind) {
    let db = table(kind).await;
    let cases: Vec<(Forged, &str)> = vec![
        (
            Forged {
                status: "paused",
                ..Forged::good()
            },
            "unknown status \"paused\"",
        ),
        (
            Forged {
                fingerprint: vec![1, 2],
                ..Forged::good()
            },
            "fingerprint is 2 bytes, not 32",
        ),
        (
            Forged {
                on_error: "retry-forever",
                ..Forged::good()
            },
            "unknown on_error policy \"retry-forever\"",
        ),
        (
            Forged {
                status: "in_flight",
                token: -5,
                ..Forged::good()
            },
            "token is negative (-5)",
        ),
        (
            Forged {
                body: None,
                ..Forged::good()
            },
            "a done row has no response_body",
        ),
        (
            Forged {
                headers: Some("{"),
                ..Forged::good()
            },
            "response_headers is not a list",
        ),
    ];
    for (row, reason) in cases {
        forge(&db, row).await;
        let expect_corrupt = |got: DbError| match got {
            DbError::Corrupt {
                scope,
                key,
                reason: why,
            } => {
                assert_eq!((scope.as_str(), key.as_str()), ("tenant-a", "k"));
                assert!(why.starts_with(reason), "{why:?} should say {reason:?}");
                assert_eq!(
                    DbError::Corrupt {
                        scope,
                        key,
                        reason: why
                    }
                    .status(),
                    500
                );
            }
            other => panic!("expected a corrupt-row error, got {other}"),
        };
        expect_corrupt(db.begin(1, request("k", BODY, &SAVING)).await.unwrap_err());
        expect_corrupt(db.row(1, "tenant-a", "k").await.unwrap_err());
        expect_corrupt(db.rows(1, "tenant-a", "", 10).await.unwrap_err());
        assert_eq!(tables::count(&db).await, 1, "the row is left alone");
    }
}

/// SQLite keeps any type in any column: text where the token belongs is a corrupt row too.
pub async fn a_column_of_the_wrong_type_is_a_corrupt_row(db: &Db) {
    tables::wipe(db).await;
    let pool = db.sqlite_pool().expect("sqlite");
    sqlx::query(
        "INSERT INTO idem_claims (scope, key, fingerprint, on_error, status, token, \
        locked_at, created_at, expires_at) VALUES ('tenant-a', 'k', $1, 'save-response', \
        'in_flight', 'not a number', 0, 0, 60000)",
    )
    .bind(vec![0u8; 32])
    .execute(pool)
    .await
    .expect("forge");
    let err = db.begin(1, request("k", BODY, &SAVING)).await.unwrap_err();
    assert!(
        matches!(&err, DbError::Corrupt { reason, .. } if reason.contains("token")),
        "{err}"
    );
}

fn wall_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("after 1970");
    u64::try_from(since.as_millis()).expect("ms fit")
}

/// The production clock: leases are stamped and aged on the database's clock, whatever
/// `now` the caller passes (two servers whose clocks disagree still agree on a lease).
pub async fn the_database_clock_ages_leases_whatever_the_callers_clock(kind: Kind) {
    let year = 365 * 24 * 3_600_000;
    let options = DbOptions {
        clock: Clock::Database,
        store: StoreConfig {
            lock_ms: 60_000,
            retention_ms: 2 * year,
            ..options().store
        },
        ..options()
    };
    let db = tables::fresh(kind, options).await;
    let before = wall_ms();
    // A caller whose clock is at the epoch.
    let claim = execute(&db, 0, "k", BODY, &CHECKOUT)
        .await
        .commit()
        .await
        .unwrap();
    let after = wall_ms();
    let locked_at = claim.lease().locked_at;
    assert!(
        (before - 1_000..=after + 1_000).contains(&locked_at),
        "locked at {locked_at}, wall clock {before}..{after}"
    );
    // A caller a year ahead: on its clock the lease is long stale, on the database's it
    // is live, so this is a 409, not a takeover.
    match answer(&db, after + year, "k", BODY).await {
        StoreBegin::InFlight { retry_after_ms } => {
            assert!(
                retry_after_ms > 50_000 && retry_after_ms <= 60_000,
                "{retry_after_ms}"
            )
        }
        other => panic!("expected 409 on the database clock, got {other:?}"),
    }
    // The same table on the caller's clock would have let it take over.
    let caller = tables::fresh(
        kind,
        DbOptions {
            clock: Clock::Caller,
            ..db.options().clone()
        },
    )
    .await;
    execute(&caller, 0, "k", BODY, &CHECKOUT)
        .await
        .commit()
        .await
        .unwrap();
    let taken = execute(&caller, year, "k", BODY, &CHECKOUT).await;
    assert!(taken.claim().taken_over());
    // Retention from the save is on the database clock too.
    db.finish(0, &claim, Finish::Commit(created(1)))
        .await
        .unwrap();
    let row = db.row(wall_ms(), "tenant-a", "k").await.unwrap().unwrap();
    assert!(
        row.expires_at >= before + db.config().retention_ms,
        "{row:?}"
    );
}

/// Prune deletes in batches until nothing expired is left, released rows included, and
/// takes the recovery points of released keys with them once their retention is over.
pub async fn prune_deletes_in_batches(kind: Kind) {
    let options = DbOptions {
        prune_batch: 3,
        ..options()
    };
    let db = tables::fresh(kind, options).await;
    for i in 0..10 {
        let key = format!("k{i}");
        let claim = execute(&db, 0, &key, BODY, &CHECKOUT)
            .await
            .commit()
            .await
            .unwrap();
        db.finish(0, &claim, Finish::Commit(created(i)))
            .await
            .unwrap();
    }
    let mut held = execute(&db, 0, "released", BODY, &CHECKOUT).await;
    held.set_recovery(b"9").await.unwrap();
    let held = held.commit().await.unwrap();
    db.finish(0, &held, Finish::Release).await.unwrap();
    let live = execute(&db, 60_000, "live", BODY, &CHECKOUT)
        .await
        .commit()
        .await
        .unwrap();
    assert_eq!(db.prune(59_999).await.unwrap(), 0);
    assert_eq!(
        db.row(59_999, "tenant-a", "released")
            .await
            .unwrap()
            .map(|r| r.state),
        Some(idem_store::RowState::Released)
    );
    assert_eq!(db.prune(60_000).await.unwrap(), 11);
    assert_eq!(tables::count(&db).await, 1, "the live claim stays");
    let again = execute(&db, 60_001, "released", BODY, &CHECKOUT).await;
    assert_eq!(
        again.recovery(),
        None,
        "the released key's recovery point was pruned"
    );
    drop(again);
    let _ = live;
    let pruned = db
        .events_since(0)
        .iter()
        .filter(|e| *e.kind() == idem_store::EventKind::Pruned)
        .count();
    assert_eq!(pruned, 11);
}

/// Schema version 1 as it shipped (the claim table before retention per route), per backend.
const V1_SQLITE: &str = include_str!("../../../axum/migrations/sqlite/0001_claims.sql");
const V1_POSTGRES: &str = include_str!("../../../axum/migrations/postgres/0001_claims.sql");

/// A database left by version 1, with a done row and an in-flight one: opening it migrates
/// to version 2; the old rows read as kept the old default (24 h) and keep it for their
/// later writes, a takeover included; new claims get the configured retention.
pub async fn a_version_1_database_migrates_to_version_2(kind: Kind) {
    use sqlx::migrate::{Migration, MigrationType, Migrator};
    use sqlx::SqlSafeStr;

    let url = tables::fresh_url(kind).await;
    let day = idem_store::StoreConfig::DEFAULT_RETENTION_MS;
    let fp = idem_store::fingerprint("POST /api/checkout", BODY)
        .expect("fingerprint")
        .0
        .to_vec();
    let v1 = |sql: &'static str| {
        let mut m = Migrator::with_migrations(vec![Migration::new(
            1,
            "claims".into(),
            MigrationType::Simple,
            sql.into_sql_str(),
            false,
        )]);
        m.dangerous_set_table_name("_idem_claims_migrations");
        m
    };
    // Version 1's columns only: no retention_ms.
    let rows = "INSERT INTO idem_claims (scope, key, fingerprint, on_error, status, token, \
        locked_at, created_at, expires_at, response_status, response_content_type, \
        response_headers, response_body) VALUES \
        ('tenant-a', 'done', $1, 'release-claim', 'done', 1, 0, 0, $2, 201, \
         'application/json', '[]', $3), \
        ('tenant-a', 'flight', $1, 'release-claim', 'in_flight', 2, 0, 0, $2, NULL, NULL, \
         NULL, NULL)";
    let response = br#"{"order":1}"#.to_vec();
    macro_rules! version_1 {
        ($pool:expr, $sql:expr) => {{
            let pool = $pool;
            v1($sql).run(&pool).await.expect("version 1");
            sqlx::query(rows)
                .bind(&fp)
                .bind(i64::try_from(day).expect("fits"))
                .bind(&response)
                .execute(&pool)
                .await
                .expect("version 1 rows");
            pool.close().await;
        }};
    }
    match kind {
        Kind::Sqlite => {
            use std::str::FromStr;
            let options = sqlx::sqlite::SqliteConnectOptions::from_str(&url)
                .expect("url")
                .create_if_missing(true);
            let pool = sqlx::SqlitePool::connect_with(options)
                .await
                .expect("sqlite");
            version_1!(pool, V1_SQLITE);
            let pool = sqlx::SqlitePool::connect(&url).await.expect("sqlite");
            sqlx::query("UPDATE idem_lease_token SET last = 2")
                .execute(&pool)
                .await
                .expect("tokens handed out by version 1");
            pool.close().await;
        }
        Kind::Postgres => {
            let pool = sqlx::PgPool::connect(&url).await.expect("postgres");
            version_1!(pool, V1_POSTGRES);
            let pool = sqlx::PgPool::connect(&url).await.expect("postgres");
            sqlx::query("SELECT setval('idem_lease_token', 2)")
                .execute(&pool)
                .await
                .expect("tokens handed out by version 1");
            pool.close().await;
        }
    }

    let db = Db::open(&url, options()).await.expect("open migrates");
    let versions: Vec<i64> = {
        let sql = "SELECT version FROM _idem_claims_migrations ORDER BY version";
        if let Some(pool) = db.sqlite_pool() {
            sqlx::query_scalar(sql).fetch_all(pool).await
        } else {
            let pool = db.postgres_pool().expect("a pool");
            sqlx::query_scalar(sql).fetch_all(pool).await
        }
        .expect("versions")
    };
    assert_eq!(versions, vec![1, 2, 3]);
    let done = db.row(10, "tenant-a", "done").await.unwrap().expect("kept");
    assert_eq!((done.retention_ms, done.expires_at), (day, day));
    assert_eq!(
        answer(&db, 10, "done", BODY).await,
        StoreBegin::Replay(SavedResponse::json(201, response.clone()))
    );
    // The stale version-1 claim is taken over: the row keeps its 24 h.
    let taken = execute(&db, 5_000, "flight", BODY, &CHECKOUT).await;
    assert!(taken.claim().taken_over());
    assert_eq!(taken.claim().retention_ms(), day);
    let taken = taken.commit().await.unwrap();
    let row = db.row(5_000, "tenant-a", "flight").await.unwrap().unwrap();
    assert_eq!((row.retention_ms, row.expires_at), (day, 5_000 + day));
    db.finish(6_000, &taken, Finish::Commit(created(2)))
        .await
        .unwrap();
    let row = db.row(6_000, "tenant-a", "flight").await.unwrap().unwrap();
    assert_eq!(row.expires_at, 6_000 + day);
    // A new claim: the store's configured retention (60 s here).
    execute(&db, 5_000, "new", BODY, &CHECKOUT)
        .await
        .commit()
        .await
        .unwrap();
    let new = db.row(5_000, "tenant-a", "new").await.unwrap().unwrap();
    assert_eq!((new.retention_ms, new.expires_at), (60_000, 65_000));
}

/// Schema version 2's statements as they shipped (`crates/axum/src/db/sql.rs` before
/// version 3), which a server of that version still sends to a database this one migrated:
/// its read (the columns it knows), its takeover and its fenced commit. `{token}` is the
/// backend's next fencing token.
const V2_READ: &str = "SELECT status, token, locked_at, fingerprint FROM idem_claims \
    WHERE scope = $1 AND key = $2";
const V2_TAKE_OVER: &str = "UPDATE idem_claims SET token = {token}, locked_at = $5, \
    expires_at = $6 WHERE scope = $1 AND key = $2 AND status = 'in_flight' AND token = $4 \
    RETURNING token, (SELECT r.point FROM idem_recovery AS r \
    WHERE r.scope = $1 AND r.key = $2 AND r.fingerprint = $3) AS point";
const V2_COMMIT: &str = "UPDATE idem_claims SET status = 'done', expires_at = $4, \
    response_status = $5, response_content_type = $6, response_headers = $7, \
    response_body = $8 \
    WHERE scope = $1 AND key = $2 AND status = 'in_flight' AND token = $3";

/// A rolling upgrade: a server of schema version 2 shares the database with this one. A row
/// this one released is, to the older server, an in-flight claim under the released lease (a
/// status it knows, never a corrupt row: no 500): its rules answer 409 while that lease is
/// live, 422 to another payload, and a takeover for the same request once it is stale, which
/// resumes the recovery point. After that takeover the row is in flight for this server too
/// (it answers 409, it does not claim the row again beside the older server's worker), and
/// the older server's commit is replayed by both.
pub async fn a_version_2_server_reads_a_released_row_as_an_in_flight_claim(kind: Kind) {
    use idem_store::{rules, Fingerprint, Lease, Record, Status};
    use sqlx::Row;

    let db = table(kind).await;
    let mut claim = execute(&db, 0, "k", BODY, &CHECKOUT).await;
    claim.set_recovery(b"3").await.unwrap();
    let claim = claim.commit().await.unwrap();
    db.finish(10, &claim, Finish::Release).await.unwrap();
    let fp = idem_store::fingerprint("POST /api/checkout", BODY).expect("fingerprint");
    let other = idem_store::fingerprint("POST /api/checkout", OTHER_BODY).expect("fingerprint");

    // Version 2's read and decoding: `status` is one it knows, the lease the released one.
    macro_rules! read_v2 {
        ($pool:expr) => {{
            let r = sqlx::query(V2_READ)
                .bind("tenant-a")
                .bind("k")
                .fetch_one($pool)
                .await
                .expect("version 2's read");
            let status: String = r.get("status");
            let token: i64 = r.get("token");
            let locked_at: i64 = r.get("locked_at");
            let fingerprint: Vec<u8> = r.get("fingerprint");
            (status, token, locked_at, fingerprint)
        }};
    }
    let (status, token, locked_at, fingerprint) = match (db.sqlite_pool(), db.postgres_pool()) {
        (Some(pool), _) => read_v2!(pool),
        (_, Some(pool)) => read_v2!(pool),
        _ => unreachable!("one backend"),
    };
    assert_eq!(status, "in_flight", "a status version 2 decodes");
    let seen = Lease {
        locked_at: u64::try_from(locked_at).unwrap(),
        token: u64::try_from(token).unwrap(),
    };
    assert_eq!(seen, *claim.lease());
    assert_eq!(fingerprint, fp.0.to_vec());
    // Version 2's record of it, decided by the same rules.
    let as_v2 = Record {
        fingerprint: Fingerprint(fingerprint.try_into().unwrap()),
        on_error: ErrorPolicy::ReleaseClaim,
        status: Status::InFlight { lease: seen },
        created_at: 0,
        expires_at: 60_000,
        retention_ms: 60_000,
    };
    assert_eq!(
        rules::decide(Some(&as_v2), 500, &fp, LOCK_MS),
        rules::Step::Answer(rules::Answer::InFlight {
            retry_after_ms: 500
        })
    );
    assert_eq!(
        rules::decide(Some(&as_v2), LOCK_MS, &other, LOCK_MS),
        rules::Step::Answer(rules::Answer::Mismatch)
    );
    assert_eq!(
        rules::decide(Some(&as_v2), LOCK_MS, &fp, LOCK_MS),
        rules::Step::Write(rules::Write::TakeOver { seen })
    );

    // Version 2's takeover, in its own transaction: it resumes the recovery point.
    let now = i64::try_from(LOCK_MS).unwrap();
    macro_rules! take_over_v2 {
        ($pool:expr, $token:expr, $bump:expr) => {{
            let mut tx = $pool.begin().await.expect("begin");
            if let Some(bump) = $bump {
                sqlx::query(bump).execute(&mut *tx).await.expect("bump");
            }
            let sql = V2_TAKE_OVER.replace("{token}", $token);
            let (token, point): (i64, Option<Vec<u8>>) = sqlx::query_as(sqlx::AssertSqlSafe(sql))
                .bind("tenant-a")
                .bind("k")
                .bind(&fp.0[..])
                .bind(token)
                .bind(now)
                .bind(now + 60_000)
                .fetch_one(&mut *tx)
                .await
                .expect("version 2's takeover");
            tx.commit().await.expect("commit");
            (token, point)
        }};
    }
    let (v2_token, point) = match (db.sqlite_pool(), db.postgres_pool()) {
        (Some(pool), _) => take_over_v2!(
            pool,
            "(SELECT last FROM idem_lease_token)",
            Some("UPDATE idem_lease_token SET last = last + 1")
        ),
        (_, Some(pool)) => take_over_v2!(pool, "nextval('idem_lease_token')", None::<&str>),
        _ => unreachable!("one backend"),
    };
    assert_eq!(point.as_deref(), Some(&b"3"[..]), "the same order resumes");
    assert!(v2_token > token);

    // To this server the row is in flight again, under the older server's lease.
    let row = db.row(LOCK_MS + 1, "tenant-a", "k").await.unwrap().unwrap();
    assert_eq!(row.state, idem_store::RowState::InFlight);
    assert_eq!(row.token, Some(u64::try_from(v2_token).unwrap()));
    assert_eq!(
        answer(&db, LOCK_MS + 1, "k", BODY).await,
        StoreBegin::InFlight {
            retry_after_ms: LOCK_MS - 1
        }
    );
    assert_eq!(
        answer(&db, LOCK_MS + 1, "k", OTHER_BODY).await,
        StoreBegin::Mismatch
    );

    // The older server's worker commits (version 2's fenced commit); both replay it.
    let response = created(3);
    macro_rules! commit_v2 {
        ($pool:expr) => {
            sqlx::query(V2_COMMIT)
                .bind("tenant-a")
                .bind("k")
                .bind(v2_token)
                .bind(now + 60_000)
                .bind(i64::from(response.status))
                .bind(response.content_type.as_str())
                .bind("[]")
                .bind(response.body.as_slice())
                .execute($pool)
                .await
                .expect("version 2's commit")
                .rows_affected()
        };
    }
    let committed = match (db.sqlite_pool(), db.postgres_pool()) {
        (Some(pool), _) => commit_v2!(pool),
        (_, Some(pool)) => commit_v2!(pool),
        _ => unreachable!("one backend"),
    };
    assert_eq!(committed, 1);
    assert_eq!(
        answer(&db, LOCK_MS + 2, "k", BODY).await,
        StoreBegin::Replay(response)
    );
}

/// Work that takes three leases, held with [`Db::hold`] on the wall clock: every retry while
/// it runs is a 409, never a takeover, and its commit afterwards (with the renewed claim)
/// lands. A worker that stopped renewing is taken over a lease later, and when it comes back
/// its next renewal is fenced: `hold` stops its work before its next write.
pub async fn held_work_renews_its_lease_and_a_lost_one_stops(kind: Kind) {
    // Renewed every 200 ms: a beat late by up to 400 ms (a loaded machine) still holds.
    let lock_ms = 600;
    let options = DbOptions {
        store: StoreConfig {
            lock_ms,
            ..options().store
        },
        ..options()
    };
    let db = tables::fresh(kind, options).await;
    let mut claim = execute(&db, wall_ms(), "long", BODY, &CHECKOUT)
        .await
        .commit()
        .await
        .unwrap();
    let work = tokio::time::sleep(Duration::from_millis(3 * lock_ms + 100));
    let worker = {
        let db = db.clone();
        tokio::spawn(async move {
            let held = db.hold(&mut claim, work).await;
            (held, claim)
        })
    };
    let mut retries = 0;
    while !worker.is_finished() {
        match answer(&db, wall_ms(), "long", BODY).await {
            StoreBegin::InFlight { .. } => retries += 1,
            other => panic!("a renewed claim must stay in flight, got {other:?}"),
        }
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    let (held, claim) = worker.await.unwrap();
    assert!(held.is_ok(), "{held:?}");
    assert!(
        retries >= 15,
        "retries ran across the three leases: {retries}"
    );
    db.finish(wall_ms(), &claim, Finish::Commit(created(1)))
        .await
        .expect("the renewed claim still holds the row");

    // A worker that stopped renewing (stalled, say): one retry takes it over a lease later.
    let mut stalled = execute(&db, wall_ms(), "stalled", BODY, &CHECKOUT)
        .await
        .commit()
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(lock_ms + 20)).await;
    let winner = execute(&db, wall_ms(), "stalled", BODY, &CHECKOUT).await;
    assert!(winner.claim().taken_over());
    winner.commit().await.unwrap();
    // Back, it holds its work again: the first renewal is fenced and the work never finishes.
    let never = std::future::pending::<()>();
    let held = tokio::time::timeout(Duration::from_secs(5), db.hold(&mut stalled, never)).await;
    assert!(
        matches!(held, Ok(Err(DbError::Fenced))),
        "the stalled worker stops: {held:?}"
    );
}

/// The completer's side of the table: only claims in flight past the age, with a recovery
/// point of their own request, are listed; a claim without one is left to its client or to
/// expire; two completers on two handles of one database race for a claim and one wins.
pub async fn the_completer_takes_abandoned_claims_with_a_point_once(kind: Kind) {
    use idem_server::completer::{Completer, CompleterConfig, Resumed};
    use std::sync::{
        atomic::{AtomicU32, Ordering},
        Arc,
    };

    let url = tables::fresh_url(kind).await;
    let db = Db::open(&url, options()).await.expect("open");
    db.migrate(&ORDERS).await.expect("the route's migrations");
    let other = Db::open(&url, options()).await.expect("a second handle");
    // With a point (the order, written with the claim), and without one.
    let BeginWith::Created { .. } = begin_with(&db, 100, "with-point", BODY, 1).await else {
        panic!("a new key creates");
    };
    execute(&db, 100, "no-point", BODY, &CHECKOUT)
        .await
        .commit()
        .await
        .unwrap();
    let after_ms = 5 * LOCK_MS;
    // Not abandoned yet: younger than the age.
    let at = 100 + after_ms;
    let young = db.abandoned(at - 1, after_ms, 10).await.unwrap();
    assert!(young.is_empty(), "{young:?}");
    let listed = db.abandoned(at, after_ms, 10).await.unwrap();
    let keys: Vec<&str> = listed.iter().map(|a| a.id.key().as_str()).collect();
    assert_eq!(
        keys,
        ["with-point"],
        "a claim without a point is not listed"
    );

    let resumed = Arc::new(AtomicU32::new(0));
    let completer = |db: &Db| {
        let (db2, resumed) = (db.clone(), Arc::clone(&resumed));
        let config = CompleterConfig {
            abandoned_after: Duration::from_millis(after_ms),
            ..CompleterConfig::default()
        };
        Completer::new(db.clone(), CHECKOUT.clone(), config, move |claim_tx| {
            let (db, resumed) = (db2.clone(), Arc::clone(&resumed));
            async move {
                resumed.fetch_add(1, Ordering::SeqCst);
                assert_eq!(claim_tx.recovery(), Some(&RouteInsert::point(1)[..]));
                let claim = claim_tx.commit().await?;
                db.finish(after_ms, &claim, Finish::Commit(created(1)))
                    .await?;
                Ok(Resumed::Finished)
            }
        })
    };
    let (a, b) = (completer(&db), completer(&other));
    let (pass_a, pass_b) = tokio::join!(a.run_once(at), b.run_once(at));
    let (pass_a, pass_b) = (pass_a.unwrap(), pass_b.unwrap());
    assert_eq!(
        pass_a.completed + pass_b.completed,
        1,
        "{pass_a:?} {pass_b:?}: one winner"
    );
    assert_eq!(
        resumed.load(Ordering::SeqCst),
        1,
        "the work was resumed once"
    );
    assert_eq!(
        answer(&db, at + 1, "with-point", BODY).await,
        StoreBegin::Replay(created(1)),
        "the completer's answer is replayed"
    );
    // The claim without a point is untouched, long after: still the first lease.
    let row = db
        .row(10 * after_ms, "tenant-a", "no-point")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (row.state, row.locked_at),
        (idem_store::RowState::Stale, Some(100))
    );
    assert_eq!(a.run_once(10 * after_ms).await.unwrap(), Default::default());
}
