//! The decision table, row by row, the fencing cases, the error policies, retention,
//! scoping and the event log, through the public API. Runs natively and in Chromium.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use idem_store::{
    Begin, ErrorPolicy, EventKind, Fenced, IdRef, Lease, RecordId, Rejection, RequestError,
    RouteConfig, RowState, SavedResponse, Status, Store, StoreConfig, Table,
};

const OPERATION: &str = "POST /api/checkout";
const REQUIRED: RouteConfig = RouteConfig::required(OPERATION, ErrorPolicy::SaveResponse);
const OPTIONAL: RouteConfig = RouteConfig::optional(OPERATION, ErrorPolicy::SaveResponse);
const RELEASING: RouteConfig = RouteConfig::required(OPERATION, ErrorPolicy::ReleaseClaim);
const BODY: &[u8] = br#"{"cart":"c-1","amount":4200}"#;
const OTHER_BODY: &[u8] = br#"{"cart":"c-1","amount":9900}"#;
const LOCK_MS: u64 = 1_000;
const RETENTION_MS: u64 = 60_000;

fn config() -> StoreConfig {
    StoreConfig {
        lock_ms: LOCK_MS,
        retention_ms: RETENTION_MS,
        max_body_bytes: 1_024,
        event_capacity: 1_024,
    }
}

fn store() -> Store {
    Store::new(config())
}

fn created(order: u32) -> SavedResponse {
    SavedResponse::json(201, format!(r#"{{"order":{order}}}"#).into_bytes())
}

/// A claim that must be fresh (not a takeover).
fn claim(store: &mut Store, now: u64, scope: &str, key: &str) -> (RecordId, Lease) {
    match store.begin(now, scope, Some(key), BODY, &REQUIRED) {
        Begin::Execute {
            id,
            lease,
            taken_over: false,
        } => (id, lease),
        other => panic!("expected a fresh claim, got {other:?}"),
    }
}

/// A claim that must be a takeover.
fn take_over(store: &mut Store, now: u64, key: &str) -> (RecordId, Lease) {
    match store.begin(now, "t", Some(key), BODY, &REQUIRED) {
        Begin::Execute {
            id,
            lease,
            taken_over: true,
        } => (id, lease),
        other => panic!("expected a takeover, got {other:?}"),
    }
}

fn status_of(store: &Store, scope: &str, key: &str) -> Option<Status> {
    store
        .table()
        .get(IdRef { scope, key })
        .map(|r| r.status.clone())
}

fn kinds(store: &Store) -> Vec<EventKind> {
    store.events().map(|e| e.kind().clone()).collect()
}

// ---- rows of the decision table ----

#[test]
fn missing_key_on_required_route_is_400_and_records_nothing() {
    let mut s = store();
    let begin = s.begin(0, "t", None, BODY, &REQUIRED);
    assert_eq!(begin, Begin::Invalid(RequestError::MissingKey));
    assert_eq!(RequestError::MissingKey.status(), 400);
    assert!(s.table().is_empty());
}

#[test]
fn missing_key_on_optional_route_runs_unkeyed_and_records_nothing() {
    let mut s = store();
    assert_eq!(s.begin(0, "t", None, BODY, &OPTIONAL), Begin::Unkeyed);
    assert!(s.table().is_empty());
    assert_eq!(s.events().count(), 0);
}

#[test]
fn empty_key_is_400() {
    let mut s = store();
    let begin = s.begin(0, "t", Some(""), BODY, &OPTIONAL);
    assert_eq!(begin, Begin::Invalid(RequestError::EmptyKey));
    assert!(s.table().is_empty());
}

#[test]
fn key_over_255_characters_is_400_and_255_is_fine() {
    let mut s = store();
    let long = "k".repeat(256);
    let begin = s.begin(0, "t", Some(&long), BODY, &REQUIRED);
    assert_eq!(begin, Begin::Invalid(RequestError::KeyTooLong { len: 256 }));
    assert!(s.table().is_empty());
    claim(&mut s, 0, "t", &"k".repeat(255));
}

#[test]
fn key_with_control_character_is_400() {
    let mut s = store();
    for (key, index) in [("ab\ncd", 2), ("\t", 0), ("del\u{7f}", 3), ("nul\0", 3)] {
        let begin = s.begin(0, "t", Some(key), BODY, &REQUIRED);
        assert_eq!(
            begin,
            Begin::Invalid(RequestError::KeyNotPrintable { index })
        );
    }
    assert!(s.table().is_empty());
}

#[test]
fn non_ascii_key_is_400() {
    let mut s = store();
    let begin = s.begin(0, "t", Some("clé-1"), BODY, &REQUIRED);
    assert_eq!(
        begin,
        Begin::Invalid(RequestError::KeyNotPrintable { index: 2 })
    );
    assert!(s.table().is_empty());
}

#[test]
fn body_over_the_limit_is_413_and_the_limit_itself_is_fine() {
    let mut s = store();
    let mut body = br#"{"pad":""#.to_vec();
    body.resize(1_024 - 2, b'x');
    body.extend_from_slice(br#""}"#);
    assert_eq!(body.len(), 1_024);
    claim_body(&mut s, "at-limit", &body);

    body.insert(8, b'x');
    let begin = s.begin(0, "t", Some("over"), &body, &REQUIRED);
    let e = RequestError::BodyTooLarge {
        len: 1_025,
        limit: 1_024,
    };
    assert_eq!(e.status(), 413);
    assert_eq!(begin, Begin::Invalid(e.clone()));
    // Unkeyed requests are held to the limit too.
    assert_eq!(s.begin(0, "t", None, &body, &OPTIONAL), Begin::Invalid(e));
    assert_eq!(s.table().len(), 1);
}

fn claim_body(s: &mut Store, key: &str, body: &[u8]) {
    let begin = s.begin(0, "t", Some(key), body, &REQUIRED);
    assert!(matches!(begin, Begin::Execute { .. }), "{begin:?}");
}

#[test]
fn invalid_json_is_400_and_records_nothing() {
    let mut s = store();
    for body in [&b"{"[..], b"", b"{\"a\":1} x", b"\xff\xfe", b"{'a':1}"] {
        match s.begin(0, "t", Some("k"), body, &REQUIRED) {
            Begin::Invalid(e @ RequestError::InvalidJson { .. }) => assert_eq!(e.status(), 400),
            other => panic!("{body:?}: expected invalid json, got {other:?}"),
        }
    }
    assert!(s.table().is_empty());
}

#[test]
fn no_record_claims_atomically_and_runs_the_work() {
    let mut s = store();
    let (id, lease) = claim(&mut s, 7, "t", "k");
    assert_eq!(id.scope(), "t");
    assert_eq!(id.key().as_str(), "k");
    assert_eq!(lease.locked_at, 7);
    let record = s.table().get(id.as_ref()).expect("claimed").into_owned();
    assert_eq!(record.status, Status::InFlight { lease });
    assert_eq!(record.created_at, 7);
    assert_eq!(record.expires_at, 7 + RETENTION_MS);
    assert_eq!(
        record.fingerprint,
        idem_store::fingerprint(OPERATION, BODY).unwrap()
    );

    let mut runs = 0;
    let order = s.commit(9, &id, &lease, || {
        runs += 1;
        (17, created(17))
    });
    assert_eq!(order, Ok(17));
    assert_eq!(runs, 1);
}

#[test]
fn record_past_retention_counts_as_absent() {
    let mut s = store();
    let (id, lease) = claim(&mut s, 0, "t", "k");
    s.save(10, &id, &lease, created(1)).unwrap();
    // One millisecond before retention ends it still replays ...
    let before = s.begin(10 + RETENTION_MS - 1, "t", Some("k"), OTHER_BODY, &REQUIRED);
    assert_eq!(before, Begin::Mismatch);
    // ... and at the end it is gone: even a different payload claims afresh.
    let at = 10 + RETENTION_MS;
    match s.begin(at, "t", Some("k"), OTHER_BODY, &REQUIRED) {
        Begin::Execute {
            lease: new,
            taken_over: false,
            ..
        } => assert!(new.token > lease.token),
        other => panic!("expected a fresh claim, got {other:?}"),
    }
    let record = s.table().get(id.as_ref()).unwrap().into_owned();
    assert_eq!(record.created_at, at);
    assert!(kinds(&s).contains(&EventKind::Pruned));
}

#[test]
fn different_fingerprint_is_422_never_runs_never_replays() {
    let mut s = store();
    let (id, lease) = claim(&mut s, 0, "t", "k");
    // While in flight: 422, not 409.
    assert_eq!(
        s.begin(1, "t", Some("k"), OTHER_BODY, &REQUIRED),
        Begin::Mismatch
    );
    // Even when the lease is stale: 422, not a takeover.
    assert_eq!(
        s.begin(5_000, "t", Some("k"), OTHER_BODY, &REQUIRED),
        Begin::Mismatch
    );
    assert_eq!(status_of(&s, "t", "k"), Some(Status::InFlight { lease }));
    s.save(5_001, &id, &lease, created(1)).unwrap();
    // When done: 422, not the saved response.
    assert_eq!(
        s.begin(5_002, "t", Some("k"), OTHER_BODY, &REQUIRED),
        Begin::Mismatch
    );
}

#[test]
fn done_with_same_fingerprint_replays_byte_for_byte() {
    let mut s = store();
    let (id, lease) = claim(&mut s, 0, "t", "k");
    let response = SavedResponse {
        status: 201,
        content_type: "application/vnd.shop+json; charset=utf-8".into(),
        headers: vec![("Location".into(), "/api/orders/17".into())],
        body: b"{\"order\": 17,\n \"raw\": \"\xc3\xa9\"}".to_vec(),
    };
    s.save(5, &id, &lease, response.clone()).unwrap();
    // Same parameters, other key order and spacing.
    let same = br#"{ "amount": 4200, "cart": "c-1" }"#;
    for now in [6, 5_000, RETENTION_MS] {
        assert_eq!(
            s.begin(now, "t", Some("k"), same, &REQUIRED),
            Begin::Replay(response.clone())
        );
    }
}

#[test]
fn in_flight_with_live_lease_is_409_with_time_left() {
    let mut s = store();
    let (_, lease) = claim(&mut s, 100, "t", "k");
    for (now, left) in [(100, 1_000), (400, 700), (1_099, 1)] {
        assert_eq!(
            s.begin(now, "t", Some("k"), BODY, &REQUIRED),
            Begin::InFlight {
                retry_after_ms: left
            }
        );
    }
    // Nothing saved, the lease untouched.
    assert_eq!(status_of(&s, "t", "k"), Some(Status::InFlight { lease }));
}

#[test]
fn in_flight_with_stale_lease_is_taken_over() {
    let mut s = store();
    let (_, old) = claim(&mut s, 100, "t", "k");
    let (_, new) = take_over(&mut s, 100 + LOCK_MS, "k");
    assert!(new.token > old.token);
    assert_eq!(new.locked_at, 100 + LOCK_MS);
    assert_eq!(
        status_of(&s, "t", "k"),
        Some(Status::InFlight { lease: new })
    );
    assert!(kinds(&s).contains(&EventKind::TakenOver {
        old_token: old.token,
        new_token: new.token
    }));
    // Created-at and fingerprint are the first claim's.
    assert_eq!(
        s.table()
            .get(IdRef {
                scope: "t",
                key: "k"
            })
            .unwrap()
            .created_at,
        100
    );
}

#[test]
fn a_takeover_has_exactly_one_winner() {
    let mut s = store();
    claim(&mut s, 0, "t", "k");
    take_over(&mut s, LOCK_MS, "k");
    // A second retry arriving in the same millisecond finds the new, live lease.
    assert_eq!(
        s.begin(LOCK_MS, "t", Some("k"), BODY, &REQUIRED),
        Begin::InFlight {
            retry_after_ms: LOCK_MS
        }
    );
}

// ---- fencing ----

#[test]
fn zombie_save_after_takeover_is_fenced() {
    let mut s = store();
    let (id, zombie) = claim(&mut s, 0, "t", "k");
    let (_, winner) = take_over(&mut s, LOCK_MS + 5, "k");
    assert_eq!(s.save(LOCK_MS + 6, &id, &zombie, created(1)), Err(Fenced));
    assert_eq!(
        status_of(&s, "t", "k"),
        Some(Status::InFlight { lease: winner })
    );
    s.save(LOCK_MS + 7, &id, &winner, created(2)).unwrap();
    // Nor can the zombie overwrite the winner's saved answer.
    assert_eq!(s.save(LOCK_MS + 8, &id, &zombie, created(1)), Err(Fenced));
    assert_eq!(
        s.begin(LOCK_MS + 9, "t", Some("k"), BODY, &REQUIRED),
        Begin::Replay(created(2))
    );
    assert!(kinds(&s).contains(&EventKind::Fenced {
        token: zombie.token
    }));
}

#[test]
fn zombie_commit_after_takeover_does_not_run_the_work() {
    let mut s = store();
    let (id, zombie) = claim(&mut s, 0, "t", "k");
    let (_, winner) = take_over(&mut s, LOCK_MS, "k");
    let mut charges = 0;
    let out = s.commit(LOCK_MS + 1, &id, &zombie, || {
        charges += 1;
        ((), created(1))
    });
    assert_eq!(out, Err(Fenced));
    assert_eq!(
        charges, 0,
        "the business change must not run without the lease"
    );
    assert_eq!(
        status_of(&s, "t", "k"),
        Some(Status::InFlight { lease: winner })
    );
}

#[test]
fn zombie_release_after_takeover_leaves_the_record_alone() {
    let mut s = store();
    let (id, zombie) = claim(&mut s, 0, "t", "k");
    let (_, winner) = take_over(&mut s, LOCK_MS, "k");
    assert_eq!(s.release(LOCK_MS + 1, &id, &zombie), Err(Fenced));
    assert_eq!(
        status_of(&s, "t", "k"),
        Some(Status::InFlight { lease: winner })
    );
    let failed = SavedResponse::json(502, b"{}".to_vec());
    assert_eq!(s.fail(LOCK_MS + 2, &id, &zombie, failed), Err(Fenced));
    assert_eq!(
        status_of(&s, "t", "k"),
        Some(Status::InFlight { lease: winner })
    );
}

#[test]
fn a_zombie_fail_on_a_releasing_route_leaves_the_record_alone() {
    let mut s = store();
    let Begin::Execute {
        id, lease: zombie, ..
    } = s.begin(0, "t", Some("k"), BODY, &RELEASING)
    else {
        panic!("claim")
    };
    let winner = match s.begin(LOCK_MS, "t", Some("k"), BODY, &RELEASING) {
        Begin::Execute {
            lease,
            taken_over: true,
            ..
        } => lease,
        other => panic!("expected a takeover, got {other:?}"),
    };
    let failed = SavedResponse::json(502, b"{}".to_vec());
    assert_eq!(s.fail(LOCK_MS + 1, &id, &zombie, failed), Err(Fenced));
    assert_eq!(
        status_of(&s, "t", "k"),
        Some(Status::InFlight { lease: winner })
    );
}

#[test]
fn two_takeovers_in_the_same_millisecond_get_different_tokens() {
    // lock_ms 0: every lease is stale at once, so takeovers can share a millisecond.
    let mut s = Store::new(StoreConfig {
        lock_ms: 0,
        ..config()
    });
    let (id, first) = claim(&mut s, 5, "t", "k");
    let (_, second) = take_over(&mut s, 5, "k");
    let (_, third) = take_over(&mut s, 5, "k");
    assert_eq!(
        (first.locked_at, second.locked_at, third.locked_at),
        (5, 5, 5)
    );
    assert!(first.token < second.token && second.token < third.token);
    // Only the last one can save: `locked_at` alone would let the second in.
    assert_eq!(s.save(5, &id, &second, created(2)), Err(Fenced));
    assert_eq!(s.save(5, &id, &first, created(1)), Err(Fenced));
    s.save(5, &id, &third, created(3)).unwrap();
}

#[test]
fn a_slow_worker_still_holding_its_lease_may_save() {
    // Fencing is by lease, not by clock: nobody took over, so the late save lands.
    let mut s = store();
    let (id, lease) = claim(&mut s, 0, "t", "k");
    s.save(3 * LOCK_MS, &id, &lease, created(1)).unwrap();
    assert_eq!(
        s.begin(3 * LOCK_MS + 1, "t", Some("k"), BODY, &REQUIRED),
        Begin::Replay(created(1))
    );
}

// ---- error policies ----

#[test]
fn release_claim_policy_lets_the_retry_run_again() {
    let mut s = store();
    let Begin::Execute { id, lease, .. } = s.begin(0, "t", Some("k"), BODY, &RELEASING) else {
        panic!("claim")
    };
    let failed = SavedResponse::json(503, br#"{"error":"payco down"}"#.to_vec());
    s.fail(1, &id, &lease, failed).unwrap();
    assert_eq!(status_of(&s, "t", "k"), None);
    // The retry claims afresh, even with a different body: nothing is remembered.
    let retry = s.begin(2, "t", Some("k"), OTHER_BODY, &REQUIRED);
    assert!(
        matches!(
            retry,
            Begin::Execute {
                taken_over: false,
                ..
            }
        ),
        "{retry:?}"
    );
    assert!(kinds(&s).contains(&EventKind::Released { token: lease.token }));
}

#[test]
fn save_response_policy_replays_the_error() {
    let mut s = store();
    let (id, lease) = claim(&mut s, 0, "t", "k");
    let failed = SavedResponse::json(402, br#"{"error":"card declined"}"#.to_vec());
    s.fail(1, &id, &lease, failed.clone()).unwrap();
    assert_eq!(
        s.begin(2, "t", Some("k"), BODY, &REQUIRED),
        Begin::Replay(failed)
    );
}

/// The policy is the claiming route's, kept in the row: the caller of `fail` has no say.
#[test]
fn fail_follows_the_policy_the_route_declared() {
    let mut s = store();
    let failed = SavedResponse::json(402, br#"{"error":"card declined"}"#.to_vec());
    for (route, key) in [(&REQUIRED, "saves"), (&RELEASING, "releases")] {
        let Begin::Execute { id, lease, .. } = s.begin(0, "t", Some(key), BODY, route) else {
            panic!("claim")
        };
        assert_eq!(s.table().get(id.as_ref()).unwrap().on_error, route.on_error);
        s.fail(1, &id, &lease, failed.clone()).unwrap();
    }
    assert_eq!(
        s.begin(2, "t", Some("saves"), BODY, &REQUIRED),
        Begin::Replay(failed)
    );
    assert_eq!(status_of(&s, "t", "releases"), None);
    let kinds = kinds(&s);
    assert!(
        kinds.contains(&EventKind::Saved {
            token: 1,
            status: 402
        }),
        "{kinds:?}"
    );
    assert!(
        kinds.contains(&EventKind::Released { token: 2 }),
        "{kinds:?}"
    );
}

// ---- what the route declares: the operation, and the scope ----

/// Stripe compares "endpoint and parameters": the same key and the same body sent to
/// another endpoint is a 422, never a replay of the first endpoint's answer.
#[test]
fn a_key_reused_on_another_operation_with_the_same_body_is_422() {
    let mut s = store();
    let refund = RouteConfig::required("POST /api/refund", ErrorPolicy::SaveResponse);
    let (id, lease) = claim(&mut s, 0, "t", "k");
    assert_eq!(s.begin(1, "t", Some("k"), BODY, &refund), Begin::Mismatch);
    s.save(2, &id, &lease, created(1)).unwrap();
    assert_eq!(s.begin(3, "t", Some("k"), BODY, &refund), Begin::Mismatch);
    assert_eq!(
        s.begin(4, "t", Some("k"), BODY, &REQUIRED),
        Begin::Replay(created(1))
    );
    // Another key on the other operation is its own operation.
    let other = s.begin(5, "t", Some("k2"), BODY, &refund);
    assert!(matches!(other, Begin::Execute { .. }), "{other:?}");
}

#[test]
fn a_scope_no_tenant_id_could_be_is_400_and_leaves_no_row() {
    let mut s = store();
    let long = "s".repeat(256);
    for (scope, e) in [
        ("", RequestError::EmptyScope),
        (long.as_str(), RequestError::ScopeTooLong { len: 256 }),
        ("tenant a", RequestError::ScopeNotVisible { index: 6 }),
        ("t\n", RequestError::ScopeNotVisible { index: 1 }),
        ("t\u{e9}", RequestError::ScopeNotVisible { index: 1 }),
    ] {
        assert_eq!(e.status(), 400);
        assert_eq!(
            s.begin(0, scope, Some("k"), BODY, &REQUIRED),
            Begin::Invalid(e.clone()),
            "{scope:?}"
        );
        // Unkeyed requests on an optional route are held to it too.
        assert_eq!(s.begin(0, scope, None, BODY, &OPTIONAL), Begin::Invalid(e));
        let fp = idem_store::fingerprint(OPERATION, BODY).unwrap();
        assert!(matches!(
            s.begin_with_fingerprint(0, scope, Some("k"), fp, &REQUIRED),
            Begin::Invalid(_)
        ));
    }
    assert!(s.table().is_empty());
    // The rejection is logged without the scope it refused.
    assert!(s
        .events()
        .all(|e| e.scope().is_empty() && e.key().is_none()));
    claim(&mut s, 0, &"s".repeat(255), "k");
}

#[test]
fn a_released_lease_cannot_save_afterwards() {
    let mut s = store();
    let (id, lease) = claim(&mut s, 0, "t", "k");
    s.release(1, &id, &lease).unwrap();
    assert_eq!(s.save(2, &id, &lease, created(1)), Err(Fenced));
    assert_eq!(s.release(3, &id, &lease), Err(Fenced));
    assert!(s.table().is_empty());
}

// ---- retention and pruning ----

#[test]
fn prune_removes_done_records_once_retention_ends() {
    let mut s = store();
    let (id, lease) = claim(&mut s, 0, "t", "k");
    // Retention restarts at the save.
    s.save(10, &id, &lease, created(1)).unwrap();
    assert_eq!(s.prune(10 + RETENTION_MS - 1), 0);
    assert_eq!(s.table().len(), 1);
    assert_eq!(s.prune(10 + RETENTION_MS), 1);
    assert!(s.table().is_empty());
    assert_eq!(kinds(&s).last(), Some(&EventKind::Pruned));
}

#[test]
fn prune_never_removes_a_live_in_flight_claim() {
    // Retention shorter than the lease: the misconfiguration that would bite.
    let mut s = Store::new(StoreConfig {
        retention_ms: 100,
        ..config()
    });
    let (id, lease) = claim(&mut s, 0, "t", "k");
    assert_eq!(s.prune(500), 0);
    // Nor does begin treat it as absent: 409, not a second claim.
    assert_eq!(
        s.begin(500, "t", Some("k"), BODY, &REQUIRED),
        Begin::InFlight {
            retry_after_ms: 500
        }
    );
    assert_eq!(status_of(&s, "t", "k"), Some(Status::InFlight { lease }));
    // Once stale (and past retention) it may go.
    assert_eq!(s.prune(LOCK_MS), 1);
    assert_eq!(s.save(LOCK_MS, &id, &lease, created(1)), Err(Fenced));
}

#[test]
fn prune_keeps_a_stale_claim_inside_retention() {
    let mut s = store();
    claim(&mut s, 0, "t", "k");
    assert_eq!(s.prune(10 * LOCK_MS), 0);
    assert_eq!(s.table().len(), 1);
}

// ---- scoping ----

#[test]
fn the_same_key_in_two_scopes_is_two_operations() {
    let mut s = store();
    let (a, lease_a) = claim(&mut s, 0, "tenant-a", "k");
    let (b, lease_b) = claim(&mut s, 0, "tenant-b", "k");
    assert_ne!(a, b);
    s.save(1, &a, &lease_a, created(1)).unwrap();
    assert_eq!(
        s.begin(2, "tenant-a", Some("k"), BODY, &REQUIRED),
        Begin::Replay(created(1))
    );
    assert_eq!(
        status_of(&s, "tenant-b", "k"),
        Some(Status::InFlight { lease: lease_b })
    );
    // A lease from one scope does not fence-pass in another.
    assert_eq!(s.save(3, &b, &lease_a, created(9)), Err(Fenced));
    // A different body in a third scope is no mismatch.
    let c = s.begin(4, "tenant-c", Some("k"), OTHER_BODY, &REQUIRED);
    assert!(matches!(c, Begin::Execute { .. }), "{c:?}");
}

// ---- lower-level entry ----

#[test]
fn begin_with_fingerprint_follows_the_same_table() {
    let mut s = store();
    let fp = idem_store::fingerprint(OPERATION, BODY).unwrap();
    let other = idem_store::fingerprint(OPERATION, OTHER_BODY).unwrap();
    let Begin::Execute { id, lease, .. } =
        s.begin_with_fingerprint(0, "t", Some("k"), fp, &REQUIRED)
    else {
        panic!("expected a claim")
    };
    assert_eq!(
        s.begin_with_fingerprint(1, "t", Some("k"), fp, &REQUIRED),
        Begin::InFlight {
            retry_after_ms: LOCK_MS - 1
        }
    );
    assert_eq!(
        s.begin_with_fingerprint(1, "t", Some("k"), other, &REQUIRED),
        Begin::Mismatch
    );
    s.save(2, &id, &lease, created(1)).unwrap();
    // The body path and the fingerprint path agree.
    assert_eq!(
        s.begin(3, "t", Some("k"), BODY, &REQUIRED),
        Begin::Replay(created(1))
    );
    assert_eq!(
        s.begin_with_fingerprint(3, "t", None, fp, &REQUIRED),
        Begin::Invalid(RequestError::MissingKey)
    );
    assert_eq!(
        s.begin_with_fingerprint(3, "t", None, fp, &OPTIONAL),
        Begin::Unkeyed
    );
}

// ---- event log and snapshot ----

#[test]
fn the_event_log_records_every_decision() {
    let mut s = store();
    let (id, zombie) = claim(&mut s, 0, "t", "k");
    let _ = s.begin(1, "t", Some("k"), BODY, &REQUIRED); // 409
    let _ = s.begin(2, "t", Some("k"), OTHER_BODY, &REQUIRED); // 422
    let _ = s.begin(3, "t", None, BODY, &REQUIRED); // 400
    let _ = s.begin(4, "t", Some("x"), &[b' '; 2_000], &REQUIRED); // 413
    let (_, lease) = take_over(&mut s, LOCK_MS, "k");
    let _ = s.save(LOCK_MS + 1, &id, &zombie, created(1));
    s.save(LOCK_MS + 2, &id, &lease, created(2)).unwrap();
    let _ = s.begin(LOCK_MS + 3, "t", Some("k"), BODY, &REQUIRED);
    let (id2, lease2) = claim(&mut s, LOCK_MS + 4, "t", "k2");
    s.release(LOCK_MS + 5, &id2, &lease2).unwrap();
    s.prune(LOCK_MS + 2 + RETENTION_MS);

    let t1 = zombie.token;
    let t2 = lease.token;
    let t3 = lease2.token;
    let expected = vec![
        EventKind::Claimed { token: t1 },
        EventKind::Rejected {
            status: 409,
            reason: Rejection::InFlight {
                retry_after_ms: LOCK_MS - 1,
            },
        },
        EventKind::Rejected {
            status: 422,
            reason: Rejection::Mismatch,
        },
        EventKind::Rejected {
            status: 400,
            reason: Rejection::Invalid(RequestError::MissingKey),
        },
        EventKind::Rejected {
            status: 413,
            reason: Rejection::Invalid(RequestError::BodyTooLarge {
                len: 2_000,
                limit: 1_024,
            }),
        },
        EventKind::TakenOver {
            old_token: t1,
            new_token: t2,
        },
        EventKind::Fenced { token: t1 },
        EventKind::Saved {
            token: t2,
            status: 201,
        },
        EventKind::Replayed { status: 201 },
        EventKind::Claimed { token: t3 },
        EventKind::Released { token: t3 },
        EventKind::Pruned,
    ];
    assert_eq!(kinds(&s), expected);
    let last = s.events().last().unwrap();
    assert_eq!(
        (last.at(), last.scope(), last.key()),
        (LOCK_MS + 2 + RETENTION_MS, "t", Some("k"))
    );
    let missing = s.events().nth(3).unwrap();
    assert_eq!((missing.at(), missing.key()), (3, None));
    let seqs: Vec<u64> = s.events().map(|e| e.seq()).collect();
    assert_eq!(seqs, (0..12).collect::<Vec<_>>());
}

#[test]
fn the_event_log_reads_incrementally_and_stays_bounded() {
    let mut s = Store::new(StoreConfig {
        event_capacity: 3,
        ..config()
    });
    let cursor = s.next_event_seq();
    for i in 0..5 {
        claim(&mut s, i, "t", &format!("k{i}"));
    }
    // Only the last three are held; the cursor sees the gap through seq.
    let seen: Vec<u64> = s.events_since(cursor).map(|e| e.seq()).collect();
    assert_eq!(seen, vec![2, 3, 4]);
    assert_eq!(s.events_since(4).count(), 1);
    assert_eq!(s.events_since(5).count(), 0);
    assert_eq!(s.next_event_seq(), 5);
    assert_eq!(s.drain_events().count(), 3);
    assert_eq!(s.events().count(), 0);
    assert_eq!(s.next_event_seq(), 5);
}

#[test]
fn the_event_log_can_be_turned_off() {
    let mut s = Store::new(StoreConfig {
        event_capacity: 0,
        ..config()
    });
    let (id, lease) = claim(&mut s, 0, "t", "k");
    s.save(1, &id, &lease, created(1)).unwrap();
    let _ = s.begin(2, "t", None, BODY, &REQUIRED);
    assert_eq!(s.events().count(), 0);
    assert_eq!(s.next_event_seq(), 0);
}

#[test]
fn rows_show_the_table_at_now() {
    let mut s = store();
    let (id, lease) = claim(&mut s, 0, "b", "k");
    claim(&mut s, 100, "a", "k");
    s.save(50, &id, &lease, created(1)).unwrap();
    let rows = s.rows(600);
    assert_eq!(rows.len(), 2);
    let (a, b) = (&rows[0], &rows[1]);
    assert_eq!(
        (a.scope.as_str(), b.scope.as_str()),
        ("a", "b"),
        "ordered by scope"
    );
    assert_eq!(a.state, RowState::InFlight);
    assert_eq!(a.lease_left_ms, Some(500));
    assert_eq!(a.locked_at, Some(100));
    assert_eq!(a.token, Some(2));
    assert_eq!(
        a.fingerprint,
        idem_store::fingerprint(OPERATION, BODY)
            .unwrap()
            .short_hex()
    );
    assert_eq!(a.fingerprint.len(), 12);
    assert_eq!(b.state, RowState::Done);
    assert_eq!(b.response_status, Some(201));
    assert_eq!(b.response.as_deref(), Some("201 application/json, 11 B"));
    assert_eq!((b.locked_at, b.token, b.lease_left_ms), (None, None, None));
    assert_eq!(b.expires_at, 50 + RETENTION_MS);
    assert!(!b.expired);
    assert_eq!(s.rows(1_100)[0].state, RowState::Stale);
    assert_eq!(s.rows(1_100)[0].lease_left_ms, Some(0));
    assert!(s.rows(50 + RETENTION_MS)[1].expired);
}

#[test]
fn notes_from_outside_the_rules_join_the_log() {
    let mut s = store();
    s.push_event(3, "t", Some("k"), "unfenced save (simulated bug)".into());
    let e = s.events().next().unwrap();
    assert_eq!(
        (e.seq(), e.at(), e.scope(), e.key()),
        (0, 3, "t", Some("k"))
    );
    assert_eq!(
        e.kind(),
        &EventKind::Note {
            text: "unfenced save (simulated bug)".into()
        }
    );
    s.push_event(4, "t", Some("bad\nkey"), "x".into());
    assert_eq!(s.events().nth(1).unwrap().key(), None);
}

/// A table that keeps no shared ids: it forwards the primitives and leaves
/// [`Table::get_with_id`] to its default, so the store must make its own ids.
#[derive(Default)]
struct NoSharedIds(idem_store::MemoryTable);

impl Table for NoSharedIds {
    fn get(&self, id: IdRef<'_>) -> Option<std::borrow::Cow<'_, idem_store::Record>> {
        self.0.get(id)
    }
    fn insert_if_absent(&mut self, id: &RecordId, record: idem_store::Record) -> bool {
        self.0.insert_if_absent(id, record)
    }
    fn compare_and_set(&mut self, id: IdRef<'_>, e: &Lease, s: Status, x: u64) -> bool {
        self.0.compare_and_set(id, e, s, x)
    }
    fn delete_if_held(&mut self, id: IdRef<'_>, e: &Lease) -> bool {
        self.0.delete_if_held(id, e)
    }
    fn delete_if_expired(&mut self, id: IdRef<'_>, now: u64, lock_ms: u64) -> bool {
        self.0.delete_if_expired(id, now, lock_ms)
    }
    fn delete_expired(&mut self, now: u64, lock_ms: u64) -> Vec<RecordId> {
        self.0.delete_expired(now, lock_ms)
    }
    fn next_token(&mut self) -> u64 {
        self.0.next_token()
    }
    fn put(&mut self, id: IdRef<'_>, record: idem_store::Record) -> Option<idem_store::Record> {
        self.0.put(id, record)
    }
    fn remove(&mut self, id: IdRef<'_>) -> Option<idem_store::Record> {
        self.0.remove(id)
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn for_each(&self, visit: &mut dyn FnMut(IdRef<'_>, &idem_store::Record)) {
        self.0.for_each(visit)
    }
}

/// Every decision about an existing row, through a table that shares its ids and one
/// that does not: the same answers and the same events.
#[test]
fn decisions_and_events_do_not_depend_on_shared_ids() {
    type Seen = (Vec<Begin>, Vec<(u64, String, Option<String>)>);
    fn run<T: Table>(s: &mut Store<T>) -> Seen {
        let mut out = Vec::new();
        let mut begin = |s: &mut Store<T>, now, key: &str, body| {
            let b = s.begin(now, "t", Some(key), body, &REQUIRED);
            out.push(b.clone());
            b
        };
        let Begin::Execute { id, lease, .. } = begin(s, 0, "k", BODY) else {
            panic!("claim")
        };
        let _ = begin(s, 1, "k", BODY); // 409
        let _ = begin(s, 2, "k", OTHER_BODY); // 422
        let Begin::Execute {
            id: id2,
            lease: lease2,
            taken_over: true,
        } = begin(s, LOCK_MS, "k", BODY)
        else {
            panic!("takeover")
        };
        assert_eq!(id2, id);
        assert_eq!(s.save(LOCK_MS + 1, &id, &lease, created(1)), Err(Fenced));
        s.save(LOCK_MS + 2, &id2, &lease2, created(2)).unwrap();
        let _ = begin(s, LOCK_MS + 3, "k", BODY); // replay
        let _ = begin(s, LOCK_MS + 2 + RETENTION_MS, "k", BODY); // expired: pruned, claimed again
        let events = s
            .events()
            .map(|e| (e.at(), e.scope().to_owned(), e.key().map(str::to_owned)))
            .collect();
        (out, events)
    }
    let mut shared = store();
    let mut unshared = Store::with_table(config(), NoSharedIds::default());
    let a = run(&mut shared);
    assert_eq!(a, run(&mut unshared));
    assert_eq!(kinds(&shared), {
        let mut k = Vec::new();
        unshared.events().for_each(|e| k.push(e.kind().clone()));
        k
    });
    assert!(matches!(a.0[4], Begin::Replay(_)));
    assert_eq!(shared.events().count(), 9);
}

#[test]
fn set_config_keeps_the_table_the_tokens_and_the_event_log() {
    let mut s = store();
    let (_, first) = claim(&mut s, 0, "t", "k");
    let _ = s.begin(1, "t", Some("k"), BODY, &REQUIRED); // 409 under lock_ms = 1000
    let next_seq = s.next_event_seq();
    assert_eq!(next_seq, 2);

    // A shorter lock: the same claim is stale at 101 and is taken over.
    s.set_config(StoreConfig {
        lock_ms: 100,
        ..config()
    });
    assert_eq!(s.config().lock_ms, 100);
    let (id, lease) = take_over(&mut s, 101, "k");
    assert!(lease.token > first.token, "tokens carry on");
    let seqs: Vec<u64> = s.events().map(|e| e.seq()).collect();
    assert_eq!(seqs, vec![0, 1, 2], "the log and its seqs carry on");

    // A shorter retention applies to later writes.
    s.set_config(StoreConfig {
        lock_ms: 100,
        retention_ms: 50,
        ..config()
    });
    s.save(102, &id, &lease, created(1)).unwrap();
    assert_eq!(s.rows(102)[0].expires_at, 152);
    assert_eq!(s.prune(152), 1);

    // A smaller log keeps the newest events; 0 turns it off without resetting seqs.
    s.set_config(StoreConfig {
        event_capacity: 2,
        ..config()
    });
    let seqs: Vec<u64> = s.events().map(|e| e.seq()).collect();
    assert_eq!(seqs, vec![3, 4]);
    s.set_config(StoreConfig {
        event_capacity: 0,
        ..config()
    });
    let _ = s.begin(200, "t", Some("k"), BODY, &REQUIRED);
    assert_eq!(s.events().count(), 0);
    s.set_config(config());
    let _ = s.begin(201, "t", Some("k"), BODY, &REQUIRED);
    assert_eq!(s.events().map(|e| e.seq()).collect::<Vec<_>>(), vec![5]);
}
