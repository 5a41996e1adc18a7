//! The pruner (real time, in batches, never a live claim) and the tenant-deletion admin
//! command (the real binary on a SQLite file).

use idem_server::db::Finish;
use std::time::Duration;

use idem_server::{
    consumer::{Consumer, ConsumerConfig},
    db::{Begin, Db, DbOptions, Request},
    retention::pruner::{self, PrunerConfig},
    sql::now_ms,
};
use idem_store::StoreConfig;

use crate::{
    db::{claim, created, ROUTE},
    support::process::BIN,
};

async fn open(dir: &tempfile::TempDir, lock_ms: u64, retention_ms: u64) -> (Db, String) {
    let url = format!("sqlite:{}", dir.path().join("r.db").display());
    let options = DbOptions {
        store: StoreConfig {
            lock_ms,
            retention_ms,
            ..StoreConfig::default()
        },
        prune_batch: PrunerConfig::DEFAULT_BATCH,
        ..DbOptions::default()
    };
    (Db::open(&url, options).await.expect("open"), url)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pruner_deletes_expired_rows_in_batches_and_keeps_live_claims() {
    let dir = tempfile::tempdir().expect("dir");
    // Leases of 10 minutes, retention of 1 s: a claim taken 5 s ago is past retention but
    // still live, which the pruner must keep.
    let (db, _) = open(&dir, 600_000, 1_000).await;
    let then = now_ms() - 5_000;
    let live = claim(&db, then, "a", "live", b"{}").await;
    const DONE: usize = 2_345; // three batches of 1,000
    for i in 0..DONE {
        let c = claim(&db, then, "a", &format!("done-{i}"), b"{}").await;
        db.finish(then, &c, Finish::Commit(created("{}")))
            .await
            .expect("save");
    }
    let fresh = claim(&db, now_ms(), "a", "fresh", b"{}").await;
    db.finish(now_ms(), &fresh, Finish::Commit(created("{}")))
        .await
        .expect("save");
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let task = pruner::spawn(
        db.clone(),
        None,
        PrunerConfig {
            interval: Duration::from_millis(50),
            batch: PrunerConfig::DEFAULT_BATCH,
        },
        stopped,
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    stop.send(true).expect("stop");
    task.await.expect("pruner stops");
    let now = now_ms();
    let rows = db.rows(now, "a", "", 10_000).await.expect("rows");
    let keys: Vec<&str> = rows.iter().map(|r| r.key.as_str()).collect();
    assert_eq!(
        keys,
        vec!["fresh", "live"],
        "expired done rows pruned, live and fresh kept"
    );
    // The live claim is still the same lease: its holder can commit.
    db.finish(now, &live, Finish::Commit(created("{}")))
        .await
        .expect("the live claim still commits");
}

#[tokio::test]
async fn admin_delete_tenant_removes_one_tenants_rows_only() {
    let dir = tempfile::tempdir().expect("dir");
    let (db, url) = open(&dir, 10_000, 86_400_000).await;
    let consumer = Consumer::open(&db, ConsumerConfig::default())
        .await
        .expect("consumer");
    let now = now_ms();
    for tenant in ["tenant-a", "tenant-b"] {
        for i in 0..3 {
            let c = claim(&db, now, tenant, &format!("k{i}"), b"{}").await;
            db.finish(now, &c, Finish::Commit(created("{}")))
                .await
                .expect("save");
        }
        // One in flight with a recovery point.
        let request = Request {
            first_sent: None,
            scope: tenant,
            key: Some("pending"),
            body: b"{}",
            route: &ROUTE,
            target: None,
        };
        let Begin::Execute(mut tx) = db.begin(now, request).await.expect("begin") else {
            panic!("claim");
        };
        tx.set_recovery(b"order-1").await.expect("recovery");
        tx.commit().await.expect("commit");
        consumer
            .process_once(now, tenant, "m1", |_| {
                Box::pin(async { Ok::<_, sqlx::Error>(()) })
            })
            .await
            .expect("message");
    }
    db.close().await;
    let out = tokio::process::Command::new(BIN)
        .args([
            "admin",
            "delete-tenant",
            "--database",
            &url,
            "--tenant",
            "tenant-a",
            "--batch",
            "2",
        ])
        .env_remove("DATABASE_URL")
        .output()
        .await
        .expect("run admin");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json report");
    assert_eq!(
        report["deleted"],
        serde_json::json!({"claims": 4, "recovery_points": 1, "message_ids": 1})
    );
    let (db, _) = open(&dir, 10_000, 86_400_000).await;
    assert!(db
        .rows(now, "tenant-a", "", 100)
        .await
        .expect("rows")
        .is_empty());
    assert_eq!(
        db.rows(now, "tenant-b", "", 100).await.expect("rows").len(),
        4
    );
    let consumer = Consumer::open(&db, ConsumerConfig::default())
        .await
        .expect("consumer");
    let again = consumer
        .process_once(now, "tenant-b", "m1", |_| {
            Box::pin(async { Ok::<_, sqlx::Error>(()) })
        })
        .await
        .expect("message");
    assert_eq!(
        again,
        idem_server::consumer::Processed::Duplicate,
        "tenant-b's ids stay"
    );

    let bad = tokio::process::Command::new(BIN)
        .args(["admin", "delete-tenant", "--database", &url, "--tenant", ""])
        .output()
        .await
        .expect("run admin");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not a valid tenant"));
}
