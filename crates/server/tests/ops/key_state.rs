//! The key-state view in virtual time on SQLite and PostgreSQL: in flight with its lease
//! age, done with the saved status, headers and body, expired and another tenant's key
//! absent. (Over HTTP: `http_ops.rs`.)

use idem_server::{
    db::Db,
    reconcile::{key_state, KeyState, KeyStateError},
};

use crate::db::{self, claim, created, LOCK_MS, RETENTION_MS};

async fn states(db: Db) {
    let t0 = 1_000_000;
    let c = claim(&db, t0, "tenant-a", "k1", b"{}").await;
    match key_state(&db, t0 + 250, "tenant-a", "k1")
        .await
        .expect("read")
    {
        Some(KeyState::InFlight {
            lease_age_ms,
            lease_left_ms,
            ..
        }) => {
            assert_eq!(lease_age_ms, 250);
            assert_eq!(lease_left_ms, LOCK_MS - 250);
        }
        other => panic!("expected in flight, got {other:?}"),
    }
    // Another tenant asking for the same key learns nothing.
    assert_eq!(
        key_state(&db, t0 + 250, "tenant-b", "k1")
            .await
            .expect("read"),
        None
    );

    db.save(t0 + 300, &c, created(r#"{"order":1}"#))
        .await
        .expect("save");
    match key_state(&db, t0 + 400, "tenant-a", "k1")
        .await
        .expect("read")
    {
        Some(KeyState::Done {
            status,
            content_type,
            headers,
            body,
            body_base64,
            ..
        }) => {
            assert_eq!(status, 201);
            assert_eq!(content_type, "application/json");
            assert_eq!(headers, vec![("Location".to_owned(), "/t/1".to_owned())]);
            assert_eq!(body.as_deref(), Some(r#"{"order":1}"#));
            assert_eq!(body_base64, None);
        }
        other => panic!("expected done, got {other:?}"),
    }
    assert_eq!(
        key_state(&db, t0 + 400, "tenant-b", "k1")
            .await
            .expect("read"),
        None
    );
    // Past retention the row counts as absent, pruned or not.
    assert_eq!(
        key_state(&db, t0 + 300 + RETENTION_MS, "tenant-a", "k1")
            .await
            .expect("read"),
        None
    );
    assert!(matches!(
        key_state(&db, t0, "tenant-a", "").await,
        Err(KeyStateError::InvalidKey(_))
    ));
}

#[tokio::test]
async fn sqlite_key_states() {
    let (db, _dir) = db::sqlite().await;
    states(db).await;
}

#[tokio::test]
async fn postgres_key_states() {
    states(db::postgres("keystate").await).await;
}
