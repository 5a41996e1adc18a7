//! The key-state view in virtual time on SQLite and PostgreSQL: in flight with its lease
//! age, released (bound until its retention ends), done with the saved status, headers and
//! body, expired and another tenant's key absent. (Over HTTP: `http_ops.rs`.)

use idem_server::db::Finish;
use idem_server::{
    db::Db,
    reconcile::{key_state, KeyState, KeyStateError},
};
use idem_store::fingerprint;

use crate::db::{
    self, claim, claim_on, created, LOCK_MS, RETENTION_MS, ROUTE, SHORT_LIVED, SHORT_RETENTION_MS,
};

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
            fingerprint: holder,
            ..
        }) => {
            // The state names the request that holds the key.
            assert_eq!(holder, fingerprint(&ROUTE.operation, b"{}").unwrap());
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

    db.finish(t0 + 300, &c, Finish::Commit(created(r#"{"order":1}"#)))
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
            fingerprint: holder,
            ..
        }) => {
            assert_eq!(holder, fingerprint(&ROUTE.operation, b"{}").unwrap());
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

    // Released: no lease, nothing saved, the key still bound until the claim's retention
    // ends (a release restarts nothing).
    let r = claim(&db, t0 + 500, "tenant-a", "k2", br#"{"cart":"c2"}"#).await;
    db.finish(t0 + 600, &r, Finish::Release)
        .await
        .expect("release");
    let released = Some(KeyState::Released {
        key: "k2".to_owned(),
        fingerprint: fingerprint(&ROUTE.operation, br#"{"cart":"c2"}"#).unwrap(),
        created_at: t0 + 500,
        expires_at: t0 + 500 + RETENTION_MS,
    });
    let at = |now| key_state(&db, now, "tenant-a", "k2");
    assert_eq!(at(t0 + 700).await.expect("read"), released);
    assert_eq!(at(t0 + 499 + RETENTION_MS).await.expect("read"), released);
    assert_eq!(at(t0 + 500 + RETENTION_MS).await.expect("read"), None);
}

/// Two routes, two retentions: each key is answered until its own route's retention ends.
async fn each_route_its_own_retention(db: Db) {
    let t0 = 2_000_000;
    let short = claim_on(&db, &SHORT_LIVED, t0, "tenant-a", "short", b"{}").await;
    let long = claim_on(&db, &ROUTE, t0, "tenant-a", "long", b"{}").await;
    let done = t0 + 300;
    for c in [&short, &long] {
        db.finish(done, c, Finish::Commit(created(r#"{"order":2}"#)))
            .await
            .expect("save");
    }
    let state = |at: u64, key: &'static str| {
        let db = db.clone();
        async move { key_state(&db, at, "tenant-a", key).await.expect("read") }
    };
    match state(done + SHORT_RETENTION_MS - 1, "short").await {
        Some(KeyState::Done { expires_at, .. }) => {
            assert_eq!(expires_at, done + SHORT_RETENTION_MS)
        }
        other => panic!("expected done, got {other:?}"),
    }
    assert_eq!(state(done + SHORT_RETENTION_MS, "short").await, None);
    match state(done + SHORT_RETENTION_MS, "long").await {
        Some(KeyState::Done { expires_at, .. }) => assert_eq!(expires_at, done + RETENTION_MS),
        other => panic!("expected done, got {other:?}"),
    }
    assert_eq!(state(done + RETENTION_MS, "long").await, None);
}

#[tokio::test]
async fn sqlite_each_route_its_own_retention() {
    let (db, _dir) = db::sqlite().await;
    each_route_its_own_retention(db).await;
}

#[tokio::test]
async fn postgres_each_route_its_own_retention() {
    each_route_its_own_retention(db::postgres("keyretention").await).await;
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
