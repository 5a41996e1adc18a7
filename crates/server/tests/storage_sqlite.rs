//! The SQL tables' own guarantees (`storage/mod.rs`) on SQLite.

#[path = "../../store/tests/shared/mod.rs"]
mod shared;
mod storage;
mod support;
mod tables;

use tables::Kind::Sqlite;

#[tokio::test]
async fn the_claim_and_its_recovery_point_commit_together() {
    storage::the_claim_and_its_recovery_point_commit_together(Sqlite).await;
}

#[tokio::test]
async fn a_fenced_commit_rolls_the_handlers_writes_back() {
    storage::a_fenced_commit_rolls_the_handlers_writes_back(Sqlite).await;
}

#[tokio::test]
async fn the_recovery_point_outlives_a_release_for_the_same_request_only() {
    storage::the_recovery_point_outlives_a_release_for_the_same_request_only(Sqlite).await;
}

#[tokio::test]
async fn begin_with_writes_the_claim_its_row_and_its_point_together() {
    storage::begin_with_writes_the_claim_its_row_and_its_point_together(Sqlite).await;
}

#[tokio::test]
async fn begin_with_resumes_a_released_request_and_refuses_another_payload() {
    storage::begin_with_resumes_a_released_request_and_refuses_another_payload(Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn thirty_tasks_creating_on_one_key_give_exactly_one_row() {
    storage::many_tasks_creating_on_one_key_give_exactly_one_row(Sqlite, 30).await;
}

#[tokio::test]
async fn a_failure_on_a_saving_route_is_replayed() {
    storage::a_failure_on_a_saving_route_is_replayed(Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_tasks_claiming_one_key_give_exactly_one_execute() {
    storage::many_tasks_claiming_one_key_give_exactly_one_execute(Sqlite, 1, 50, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_pools_on_one_file_give_exactly_one_execute() {
    storage::many_tasks_claiming_one_key_give_exactly_one_execute(Sqlite, 2, 50, false).await;
}

#[tokio::test]
async fn corrupt_rows_are_clear_errors() {
    storage::corrupt_rows_are_clear_errors(Sqlite).await;
}

#[tokio::test]
async fn a_column_of_the_wrong_type_is_a_corrupt_row() {
    let db = tables::fresh(Sqlite, storage::options()).await;
    storage::a_column_of_the_wrong_type_is_a_corrupt_row(&db).await;
}

#[tokio::test]
async fn the_database_clock_ages_leases_whatever_the_callers_clock() {
    storage::the_database_clock_ages_leases_whatever_the_callers_clock(Sqlite).await;
}

#[tokio::test]
async fn a_version_2_server_reads_a_released_row_as_an_in_flight_claim() {
    storage::a_version_2_server_reads_a_released_row_as_an_in_flight_claim(Sqlite).await;
}

#[tokio::test]
async fn prune_deletes_in_batches() {
    storage::prune_deletes_in_batches(Sqlite).await;
}

#[tokio::test]
async fn the_schema_is_created_on_first_open_in_wal_mode() {
    let url = tables::fresh_url(Sqlite).await;
    let db = idem_server::db::Db::open(&url, storage::options())
        .await
        .unwrap();
    let pool = db.sqlite_pool().unwrap();
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    let versions: Vec<i64> = sqlx::query_scalar("SELECT version FROM _idem_claims_migrations")
        .fetch_all(pool)
        .await
        .unwrap();
    assert_eq!(versions, vec![1, 2, 3]);
    db.close().await;
    // Opening again runs nothing new and keeps the rows.
    let db = idem_server::db::Db::open(&url, storage::options())
        .await
        .unwrap();
    assert_eq!(tables::count(&db).await, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fifty_tasks_taking_over_one_stale_claim_give_exactly_one_execute() {
    storage::many_tasks_claiming_one_key_give_exactly_one_execute(Sqlite, 2, 50, true).await;
}

#[tokio::test]
async fn a_version_1_database_migrates_to_version_2() {
    storage::a_version_1_database_migrates_to_version_2(Sqlite).await;
}

#[tokio::test]
async fn a_fenced_commit_with_writes_all_of_them_or_none() {
    storage::a_fenced_commit_with_writes_all_of_them_or_none(Sqlite).await;
}

#[tokio::test]
async fn a_fenced_commit_with_never_applies_the_routes_update() {
    storage::a_fenced_commit_with_never_applies_the_routes_update(Sqlite).await;
}

/// Writers of one process take turns before SQLite's write lock; a task that already holds
/// a turn (its claim's transaction still open) and writes again is not stuck behind itself:
/// after `busy_timeout` it goes on without a turn, waits at most `busy_timeout` for the
/// writer's connection its own transaction holds, and fails as unavailable, as it would
/// without turns.
#[tokio::test]
async fn a_second_write_inside_an_open_claim_fails_instead_of_waiting_forever() {
    use idem_server::db::{Begin, DbError, DbOptions, Request};
    use std::time::Duration;

    let options = DbOptions {
        busy_timeout: Duration::from_millis(200),
        ..storage::options()
    };
    let db = tables::fresh(Sqlite, options).await;
    let request = |key| Request {
        first_sent: None,
        scope: "tenant-a",
        key: Some(key),
        body: storage::BODY,
        route: &storage::CHECKOUT,
        target: None,
    };
    let Begin::Execute(open) = db.begin(0, request("a")).await.unwrap() else {
        panic!("claim");
    };
    let second = tokio::time::timeout(Duration::from_secs(5), db.begin(0, request("b")))
        .await
        .expect("no deadlock on the writer turn");
    assert!(
        matches!(second, Err(DbError::Unavailable(_))),
        "SQLite's own answer: {second:?}"
    );
    open.commit().await.unwrap();
    assert!(matches!(
        db.begin(1, request("b")).await.unwrap(),
        Begin::Execute(_)
    ));
}

#[tokio::test]
async fn a_route_write_that_names_no_plain_column_is_refused_and_writes_nothing() {
    storage::a_route_write_that_names_no_plain_column_is_refused_and_writes_nothing(Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn held_work_renews_its_lease_and_a_lost_one_stops() {
    storage::held_work_renews_its_lease_and_a_lost_one_stops(Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_completer_takes_abandoned_claims_with_a_point_once() {
    storage::the_completer_takes_abandoned_claims_with_a_point_once(Sqlite).await;
}
