//! The metrics move when claims, replays, 409s, 422s, takeovers, fenced writes and prunes
//! happen: driven in virtual time through the db, read from the text exposition.

use idem_server::db::Finish;
use idem_server::{db::DbError, ops::metrics::Metrics};

use crate::db::{self, ask, claim, created, LOCK_MS, RETENTION_MS};

/// The value of the sample `name` (with its labels, as exposed), 0 when absent.
pub fn sample(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test]
async fn every_decision_moves_its_counter() {
    let (db, _dir) = db::sqlite().await;
    let metrics = Metrics::new(&db);
    let t0 = 5_000_000;
    let done = claim(&db, t0, "a", "k1", b"{}").await;
    db.finish(t0 + 1, &done, Finish::Commit(created("{}")))
        .await
        .expect("save");
    let _ = ask(&db, t0 + 2, "a", "k1", b"{}").await; // replay
    let _ = ask(&db, t0 + 3, "a", "k1", b"{\"x\":1}").await; // 422
    let zombie = claim(&db, t0 + 4, "a", "k2", b"{}").await;
    let _ = ask(&db, t0 + 5, "a", "k2", b"{}").await; // 409
    let _winner = claim(&db, t0 + 4 + LOCK_MS, "a", "k2", b"{}").await; // takeover
    assert!(matches!(
        db.finish(t0 + 5 + LOCK_MS, &zombie, Finish::Commit(created("{}")))
            .await,
        Err(DbError::Fenced)
    ));
    let text = metrics.render();
    for (name, want) in [
        ("idem_claims_total", 2.0),
        ("idem_saved_total", 1.0),
        ("idem_replays_total", 1.0),
        ("idem_rejections_total{status=\"422\"}", 1.0),
        ("idem_rejections_total{status=\"409\"}", 1.0),
        ("idem_takeovers_total", 1.0),
        ("idem_fenced_writes_total", 1.0),
        ("idem_pruned_total", 0.0),
    ] {
        assert_eq!(sample(&text, name), want, "{name} in\n{text}");
    }
    db.prune(t0 + 1 + RETENTION_MS).await.expect("prune");
    let text = metrics.render();
    assert_eq!(sample(&text, "idem_pruned_total"), 1.0, "{text}");
    // A second render counts nothing twice.
    assert_eq!(sample(&metrics.render(), "idem_claims_total"), 2.0);
}

#[tokio::test]
async fn the_follower_counts_without_a_scrape_and_never_twice() {
    let (db, _dir) = db::sqlite().await;
    let metrics = Metrics::new(&db);
    let follower = metrics.spawn_follower();
    claim(&db, 1_000, "a", "k", b"{}").await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert_eq!(sample(&metrics.render(), "idem_claims_total"), 1.0);
    follower.abort();
}
