//! `process_once`: every message delivered 1–3 times, interleaved, to two consumer tasks →
//! each effect exactly once; a consumer killed between effect and acknowledgement, or in
//! the middle of its effect, redelivers and the effect still happens once. SQLite and
//! PostgreSQL.
//!
//! The broker is this file's `Queue` (a shared deque: a delivery is popped, and pushed back
//! when its consumer dies before acknowledging). No real broker is needed to produce
//! duplicate and interleaved deliveries; the effects and the dedupe are the real database.

use std::{collections::VecDeque, sync::Arc, time::Duration};

use idem_server::{
    consumer::{ConsumeError, Consumer, ConsumerConfig, Processed},
    db::Db,
    with_pool, with_tx,
};
use tokio::sync::Mutex;

use crate::db;

const MESSAGES: usize = 40;
const SCOPE: &str = "tenant-a";

type Queue = Arc<Mutex<VecDeque<String>>>;

/// Message `i` is delivered 1 + (i·7 mod 3) times; the deliveries are interleaved by a
/// fixed stride, so copies of one message sit apart and the two consumers race on them.
fn deliveries() -> VecDeque<String> {
    let mut all: Vec<String> = (0..MESSAGES)
        .flat_map(|i| std::iter::repeat_n(format!("msg-{i}"), 1 + (i * 7) % 3))
        .collect();
    let n = all.len();
    let mut interleaved = Vec::with_capacity(n);
    for start in 0..7 {
        interleaved.extend(all.iter().skip(start).step_by(7).cloned());
    }
    all.clear();
    interleaved.into()
}

async fn setup(db: &Db) -> Consumer {
    with_pool!(db, |pool| {
        sqlx::query("CREATE TABLE effects (message_id TEXT NOT NULL)")
            .execute(pool)
            .await
            .map(|_| ())
            .expect("create effects")
    });
    Consumer::open(db, ConsumerConfig::default())
        .await
        .expect("open consumer")
}

/// The effect: one row in `effects`, in the message's transaction.
async fn apply(consumer: &Consumer, id: &str) -> Result<Processed<()>, ConsumeError<sqlx::Error>> {
    let owned = id.to_owned();
    consumer
        .process_once(idem_server::sql::now_ms(), SCOPE, id, move |tx| {
            Box::pin(async move {
                with_tx!(tx, |conn| {
                    sqlx::query("INSERT INTO effects (message_id) VALUES ($1)")
                        .bind(&owned)
                        .execute(conn)
                        .await
                        .map(|_| ())
                })?;
                Ok(())
            })
        })
        .await
}

async fn effects(db: &Db) -> Vec<(String, i64)> {
    with_pool!(db, |pool| {
        sqlx::query_as::<_, (String, i64)>(
            "SELECT message_id, COUNT(*) FROM effects GROUP BY message_id ORDER BY message_id",
        )
        .fetch_all(pool)
        .await
        .expect("count effects")
    })
}

async fn two_consumers_each_effect_once(db: Db) {
    let consumer = setup(&db).await;
    let queue: Queue = Arc::new(Mutex::new(deliveries()));
    let total = queue.lock().await.len();
    assert!(
        total > MESSAGES,
        "some messages are delivered more than once"
    );
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let (consumer, queue) = (consumer.clone(), queue.clone());
        tasks.push(tokio::spawn(async move {
            let (mut applied, mut duplicates) = (0, 0);
            loop {
                let Some(id) = queue.lock().await.pop_front() else {
                    return (applied, duplicates);
                };
                match apply(&consumer, &id).await.expect("process") {
                    Processed::Applied(()) => applied += 1,
                    Processed::Duplicate => duplicates += 1,
                }
                tokio::task::yield_now().await;
            }
        }));
    }
    let mut applied = 0;
    let mut duplicates = 0;
    for t in tasks {
        let (a, d) = t.await.expect("consumer task");
        applied += a;
        duplicates += d;
    }
    assert_eq!(applied, MESSAGES);
    assert_eq!(applied + duplicates, total);
    let counted = effects(&db).await;
    assert_eq!(counted.len(), MESSAGES, "every message had its effect");
    assert!(
        counted.iter().all(|(_, n)| *n == 1),
        "an effect ran twice: {counted:?}"
    );
}

async fn killed_consumer_redelivers_effect_once(db: Db) {
    let consumer = setup(&db).await;
    // Killed between the effect's commit and the acknowledgement: the broker redelivers.
    let first = tokio::spawn({
        let consumer = consumer.clone();
        async move {
            apply(&consumer, "msg-k").await.expect("process");
            // The acknowledgement would go here; the task dies first.
            std::future::pending::<()>().await;
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    first.abort();
    assert_eq!(
        apply(&consumer, "msg-k").await.expect("redelivery"),
        Processed::Duplicate
    );

    // Killed in the middle of its effect (inside the open transaction): nothing commits,
    // the redelivery applies it.
    let (entered_tx, entered) = tokio::sync::oneshot::channel::<()>();
    let mid = tokio::spawn({
        let consumer = consumer.clone();
        async move {
            let _ = consumer
                .process_once(idem_server::sql::now_ms(), SCOPE, "msg-m", move |tx| {
                    Box::pin(async move {
                        with_tx!(tx, |conn| {
                            sqlx::query("INSERT INTO effects (message_id) VALUES ('msg-m')")
                                .execute(conn)
                                .await
                                .map(|_| ())
                        })?;
                        let _ = entered_tx.send(());
                        std::future::pending::<Result<(), sqlx::Error>>().await
                    })
                })
                .await;
        }
    });
    entered.await.expect("the effect started");
    mid.abort();
    let _ = mid.await;
    assert_eq!(
        apply(&consumer, "msg-m").await.expect("redelivery"),
        Processed::Applied(())
    );
    assert_eq!(
        effects(&db).await,
        vec![("msg-k".to_owned(), 1), ("msg-m".to_owned(), 1)]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_two_consumers_each_effect_once() {
    let (db, _dir) = db::sqlite().await;
    two_consumers_each_effect_once(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_two_consumers_each_effect_once() {
    two_consumers_each_effect_once(db::postgres("consume").await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_killed_consumer_redelivers_effect_once() {
    let (db, _dir) = db::sqlite().await;
    killed_consumer_redelivers_effect_once(db).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_killed_consumer_redelivers_effect_once() {
    killed_consumer_redelivers_effect_once(db::postgres("killed").await).await;
}

#[tokio::test]
async fn invalid_message_ids_are_refused_and_record_nothing() {
    let (db, _dir) = db::sqlite().await;
    let consumer = setup(&db).await;
    for bad in [String::new(), "x".repeat(256)] {
        assert!(matches!(
            apply(&consumer, &bad).await,
            Err(ConsumeError::InvalidId("message id"))
        ));
    }
    assert!(effects(&db).await.is_empty());
}
