//! The SQL tables' own guarantees (`storage/mod.rs`) on PostgreSQL, and what only a
//! server database shows: several servers on one table, and the server going away.

#[path = "../../store/tests/shared/mod.rs"]
mod shared;
mod storage;
mod support;
mod tables;

use idem_server::db::Finish;
use idem_server::db::{Begin, Db};
use support::postgres::Postgres;
use tables::Kind::Postgres as Pg;

#[tokio::test]
async fn the_claim_and_its_recovery_point_commit_together() {
    storage::the_claim_and_its_recovery_point_commit_together(Pg).await;
}

#[tokio::test]
async fn a_fenced_commit_rolls_the_handlers_writes_back() {
    storage::a_fenced_commit_rolls_the_handlers_writes_back(Pg).await;
}

#[tokio::test]
async fn the_recovery_point_outlives_a_release_for_the_same_request_only() {
    storage::the_recovery_point_outlives_a_release_for_the_same_request_only(Pg).await;
}

#[tokio::test]
async fn begin_with_writes_the_claim_its_row_and_its_point_together() {
    storage::begin_with_writes_the_claim_its_row_and_its_point_together(Pg).await;
}

#[tokio::test]
async fn begin_with_resumes_a_released_request_and_refuses_another_payload() {
    storage::begin_with_resumes_a_released_request_and_refuses_another_payload(Pg).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_tasks_creating_on_one_key_give_exactly_one_row() {
    storage::many_tasks_creating_on_one_key_give_exactly_one_row(Pg, 30).await;
}

#[tokio::test]
async fn a_failure_on_a_saving_route_is_replayed() {
    storage::a_failure_on_a_saving_route_is_replayed(Pg).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_tasks_claiming_one_key_give_exactly_one_execute() {
    storage::many_tasks_claiming_one_key_give_exactly_one_execute(Pg, 1, 50, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_servers_on_one_table_give_exactly_one_execute() {
    storage::many_tasks_claiming_one_key_give_exactly_one_execute(Pg, 3, 60, false).await;
}

#[tokio::test]
async fn corrupt_rows_are_clear_errors() {
    storage::corrupt_rows_are_clear_errors(Pg).await;
}

#[tokio::test]
async fn the_database_clock_ages_leases_whatever_the_callers_clock() {
    storage::the_database_clock_ages_leases_whatever_the_callers_clock(Pg).await;
}

#[tokio::test]
async fn a_version_2_server_reads_a_released_row_as_an_in_flight_claim() {
    storage::a_version_2_server_reads_a_released_row_as_an_in_flight_claim(Pg).await;
}

#[tokio::test]
async fn prune_deletes_in_batches() {
    storage::prune_deletes_in_batches(Pg).await;
}

/// The server stops: calls fail as unavailable (503), never panic, nothing half-written;
/// it comes back: the same table serves again, the earlier claim intact.
#[tokio::test]
async fn a_stopped_server_is_unavailable_and_service_resumes() {
    let pg = Postgres::start();
    let db = Db::open(pg.url(), storage::options()).await.unwrap();
    let first = match db.begin(0, storage_request("a")).await.unwrap() {
        Begin::Execute(claim) => claim.commit().await.unwrap(),
        other => panic!("{other:?}"),
    };
    pg.stop();
    let err = db.begin(1, storage_request("b")).await.unwrap_err();
    assert!(err.is_unavailable(), "{err}");
    assert_eq!(err.status(), 503);
    let err = db.finish(1, &first, Finish::Release).await.unwrap_err();
    assert!(err.is_unavailable(), "{err}");
    pg.resume();
    // The pool reconnects on its own.
    let mut resumed = None;
    for _ in 0..50 {
        match db.begin(2, storage_request("b")).await {
            Ok(begin) => {
                resumed = Some(begin);
                break;
            }
            Err(e) if e.is_unavailable() => {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert!(matches!(resumed, Some(Begin::Execute(_))), "{resumed:?}");
    assert!(matches!(
        db.begin(3, storage_request("a")).await.unwrap(),
        Begin::Answer(idem_store::Begin::InFlight { .. })
    ));
    db.finish(3, &first, Finish::Release).await.unwrap();
}

fn storage_request(key: &'static str) -> idem_server::db::Request<'static> {
    idem_server::db::Request {
        first_sent: None,
        scope: "tenant-a",
        key: Some(key),
        body: storage::BODY,
        route: &storage::CHECKOUT,
        target: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_tasks_taking_over_one_stale_claim_give_exactly_one_execute() {
    storage::many_tasks_claiming_one_key_give_exactly_one_execute(Pg, 2, 50, true).await;
}

#[tokio::test]
async fn a_version_1_database_migrates_to_version_2() {
    storage::a_version_1_database_migrates_to_version_2(Pg).await;
}

#[tokio::test]
async fn a_fenced_commit_with_writes_all_of_them_or_none() {
    storage::a_fenced_commit_with_writes_all_of_them_or_none(Pg).await;
}

#[tokio::test]
async fn a_fenced_commit_with_never_applies_the_routes_update() {
    storage::a_fenced_commit_with_never_applies_the_routes_update(Pg).await;
}

/// A takeover that found the old worker saving its recovery point (`Db::save_recovery`: the
/// row held, the point written, not yet committed) waits for that commit and resumes from the
/// point. Its conditional `UPDATE … RETURNING (SELECT point …)` alone would not see it: under
/// READ COMMITTED the subquery reads the statement's first snapshot, from before the commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_takeover_that_waited_for_a_saved_point_resumes_from_it() {
    let url = Postgres::shared().fresh_database("point_race").await;
    let db = Db::open(&url, storage::options()).await.unwrap();
    let old = match db.begin(0, storage_request("race")).await.unwrap() {
        Begin::Execute(claim) => claim.commit().await.unwrap(),
        other => panic!("{other:?}"),
    };
    // The old worker, saving: `Db::save_recovery`'s two statements, on a connection of its own.
    let observer = sqlx::PgPool::connect(&url).await.unwrap();
    let mut saving = observer.begin().await.unwrap();
    let token = i64::try_from(old.lease().token).unwrap();
    let fingerprint = idem_store::fingerprint(&storage::CHECKOUT.operation, storage::BODY).unwrap();
    let held = sqlx::query(
        "UPDATE idem_claims SET token = token \
         WHERE scope = $1 AND key = $2 AND status = 'in_flight' AND token = $3",
    )
    .bind("tenant-a")
    .bind("race")
    .bind(token)
    .execute(&mut *saving)
    .await
    .unwrap();
    assert_eq!(held.rows_affected(), 1);
    sqlx::query(
        "INSERT INTO idem_recovery (scope, key, fingerprint, point, expires_at) \
         VALUES ($1, $2, $3, $4, $5)",
    )
    .bind("tenant-a")
    .bind("race")
    .bind(fingerprint.0.to_vec())
    .bind(b"downstream key 7".to_vec())
    .bind(i64::MAX)
    .execute(&mut *saving)
    .await
    .unwrap();
    // The takeover starts and waits for the row.
    let taker = db.clone();
    let stale = storage::LOCK_MS + 10;
    let taking = tokio::spawn(async move { taker.begin(stale, storage_request("race")).await });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    if taking.is_finished() {
        panic!("the takeover did not wait: {:?}", taking.await.unwrap());
    }
    saving.commit().await.unwrap();
    match taking.await.unwrap().unwrap() {
        Begin::Execute(claim) => {
            assert_eq!(
                claim.recovery(),
                Some(&b"downstream key 7"[..]),
                "the saved point"
            );
            claim.commit().await.unwrap();
        }
        other => panic!("expected the takeover, got {other:?}"),
    }
}

#[tokio::test]
async fn a_route_write_that_names_no_plain_column_is_refused_and_writes_nothing() {
    storage::a_route_write_that_names_no_plain_column_is_refused_and_writes_nothing(Pg).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_work_renews_its_lease_and_a_lost_one_stops() {
    storage::held_work_renews_its_lease_and_a_lost_one_stops(Pg).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_completer_takes_abandoned_claims_with_a_point_once() {
    storage::the_completer_takes_abandoned_claims_with_a_point_once(Pg).await;
}
