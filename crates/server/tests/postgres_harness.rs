//! The throwaway cluster starts, answers on its URL, stops and starts again.

mod support;

use support::postgres::Postgres;

#[tokio::test]
async fn a_throwaway_cluster_starts_answers_and_restarts() {
    use sqlx::Connection;
    let pg = Postgres::start();
    let mut conn = sqlx::PgConnection::connect(pg.url())
        .await
        .expect("connect");
    let (one,): (i32,) = sqlx::query_as("SELECT 1")
        .fetch_one(&mut conn)
        .await
        .expect("select");
    assert_eq!(one, 1);
    drop(conn);
    pg.stop();
    assert!(
        sqlx::PgConnection::connect(pg.url()).await.is_err(),
        "a stopped server refuses"
    );
    pg.resume();
    let mut conn = sqlx::PgConnection::connect(pg.url())
        .await
        .expect("reconnect after restart");
    let (two,): (i32,) = sqlx::query_as("SELECT 2")
        .fetch_one(&mut conn)
        .await
        .expect("select");
    assert_eq!(two, 2);
}
