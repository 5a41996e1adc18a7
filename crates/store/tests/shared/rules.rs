//! The decision table, row by row, the fencing cases, the error policies, retention,
//! scoping and the event log, written once over any [`Claims`] table. The store's own tests
//! run them over the in-memory `Store` (natively and in Chromium); the server's run the same
//! functions over SQLite and PostgreSQL (`rule_tests!` makes one `#[test]` per function).

#![allow(dead_code)] // each test binary calls the functions through `rule_tests!`

use idem_store::{
    Begin, ErrorPolicy, EventKind, Fenced, Lease, RecordId, Rejection, RequestError, RouteConfig,
    RowState, SavedResponse, StoreConfig,
};

use super::{Claims, Held};

pub const OPERATION: &str = "POST /api/checkout";
pub const REQUIRED: RouteConfig = RouteConfig::required(OPERATION, ErrorPolicy::SaveResponse);
pub const OPTIONAL: RouteConfig = RouteConfig::optional(OPERATION, ErrorPolicy::SaveResponse);
pub const RELEASING: RouteConfig = RouteConfig::required(OPERATION, ErrorPolicy::ReleaseClaim);
/// The same operation as [`REQUIRED`] with a retention of its own, shorter than the store's.
pub const SHORT_LIVED: RouteConfig = REQUIRED.with_retention_ms(SHORT_RETENTION_MS);
pub const SHORT_RETENTION_MS: u64 = 5_000;
pub const BODY: &[u8] = br#"{"cart":"c-1","amount":4200}"#;
pub const OTHER_BODY: &[u8] = br#"{"cart":"c-1","amount":9900}"#;
pub const LOCK_MS: u64 = 1_000;
pub const RETENTION_MS: u64 = 60_000;

pub fn config() -> StoreConfig {
    StoreConfig {
        first_sent_tolerance_ms: None,
        lock_ms: LOCK_MS,
        retention_ms: RETENTION_MS,
        max_body_bytes: 1_024,
        event_capacity: 1_024,
    }
}

pub fn created(order: u32) -> SavedResponse {
    SavedResponse::json(201, format!(r#"{{"order":{order}}}"#).into_bytes())
}

/// A claim that must be fresh (not a takeover).
pub fn claim<T: Claims>(s: &mut T, now: u64, scope: &str, key: &str) -> (RecordId, Lease) {
    match s.begin(now, scope, Some(key), BODY, &REQUIRED) {
        Begin::Execute {
            id,
            lease,
            taken_over: false,
        } => (id, lease),
        other => panic!("expected a fresh claim, got {other:?}"),
    }
}

/// A claim that must be a takeover.
pub fn take_over<T: Claims>(s: &mut T, now: u64, key: &str) -> (RecordId, Lease) {
    match s.begin(now, "t", Some(key), BODY, &REQUIRED) {
        Begin::Execute {
            id,
            lease,
            taken_over: true,
        } => (id, lease),
        other => panic!("expected a takeover, got {other:?}"),
    }
}

/// Where the row of (scope, key) stands.
pub fn status_of<T: Claims>(s: &mut T, scope: &str, key: &str) -> Option<Held> {
    let r = s.row_of(0, scope, key)?;
    let lease = r
        .locked_at
        .zip(r.token)
        .map(|(locked_at, token)| Lease { locked_at, token });
    Some(match (r.state, lease) {
        (RowState::Done, None) => Held::Done,
        (RowState::Released, Some(lease)) => Held::Released { lease },
        (RowState::InFlight | RowState::Stale, Some(lease)) => Held::InFlight { lease },
        (state, lease) => panic!("a {state:?} row shows lease {lease:?}"),
    })
}

/// A claim through the releasing route (fresh or again after a release, never a takeover).
pub fn claim_releasing<T: Claims>(s: &mut T, now: u64, body: &[u8]) -> (RecordId, Lease) {
    match s.begin(now, "t", Some("k"), body, &RELEASING) {
        Begin::Execute {
            id,
            lease,
            taken_over: false,
        } => (id, lease),
        other => panic!("expected a claim, got {other:?}"),
    }
}

/// One `#[test]` per rule test, each over a fresh table from `$make` (a
/// `Fn(StoreConfig) -> impl Claims`).
#[macro_export]
macro_rules! rule_tests {
    ($make:expr) => {
        $crate::rule_tests!(@each $make;
            missing_key_on_required_route_is_400_and_records_nothing
            missing_key_on_optional_route_runs_unkeyed_and_records_nothing
            empty_key_is_400
            key_over_255_characters_is_400_and_255_is_fine
            key_with_control_character_is_400
            non_ascii_key_is_400
            body_over_the_limit_is_413_and_the_limit_itself_is_fine
            invalid_json_is_400_and_records_nothing
            no_record_claims_and_the_commit_saves
            record_past_retention_counts_as_absent
            the_expired_key_guard_refuses_only_a_request_whose_key_is_gone_and_first_send_too_old
            different_fingerprint_is_422_never_runs_never_replays
            done_with_same_fingerprint_replays_byte_for_byte
            in_flight_with_live_lease_is_409_with_time_left
            in_flight_with_stale_lease_is_taken_over
            a_takeover_has_exactly_one_winner
            a_renewed_lease_is_not_taken_over_and_a_lost_one_renews_nothing
            zombie_save_after_takeover_is_fenced
            zombie_release_after_takeover_leaves_the_record_alone
            a_zombie_fail_on_a_releasing_route_leaves_the_record_alone
            two_takeovers_in_the_same_millisecond_get_different_tokens
            a_slow_worker_still_holding_its_lease_may_save
            release_claim_policy_lets_the_same_request_run_again
            a_released_key_stays_bound_to_its_first_request
            a_released_claim_is_claimed_again_by_one_winner
            a_released_row_is_pruned_at_its_retention
            save_response_policy_replays_the_error
            fail_follows_the_policy_the_route_declared
            a_key_reused_on_another_operation_with_the_same_body_is_422
            a_scope_no_tenant_id_could_be_is_400_and_leaves_no_row
            a_released_lease_cannot_save_afterwards
            prune_removes_done_records_once_retention_ends
            prune_never_removes_a_live_in_flight_claim
            prune_keeps_a_stale_claim_inside_retention
            each_route_keeps_its_own_retention
            every_write_restarts_the_rows_own_retention
            the_same_key_in_two_scopes_is_two_operations
            the_event_log_records_every_decision
            rows_show_the_table_at_now
        );
    };
    (@each $make:expr; $($name:ident)*) => {
        $(
            #[test]
            fn $name() {
                $crate::shared::rules::$name($make);
            }
        )*
    };
}

// ---- rows of the decision table ----

pub fn no_record_claims_and_the_commit_saves<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let (id, lease) = claim(&mut s, 7, "t", "k");
    assert_eq!(id.scope(), "t");
    assert_eq!(id.key().as_str(), "k");
    assert_eq!(lease.locked_at, 7);
    let row = s.row_of(7, "t", "k").expect("claimed");
    assert_eq!(row.state, RowState::InFlight);
    assert_eq!((row.locked_at, row.token), (Some(7), Some(lease.token)));
    assert_eq!(row.created_at, 7);
    assert_eq!(row.expires_at, 7 + RETENTION_MS);
    assert_eq!(
        row.fingerprint,
        idem_store::fingerprint(OPERATION, BODY)
            .unwrap()
            .short_hex()
    );
    s.commit_response(9, &id, &lease, created(17)).unwrap();
    assert_eq!(
        s.begin(10, "t", Some("k"), BODY, &REQUIRED),
        Begin::Replay(created(17))
    );
    assert_eq!(s.row_of(10, "t", "k").unwrap().expires_at, 9 + RETENTION_MS);
}

pub fn missing_key_on_required_route_is_400_and_records_nothing<T: Claims>(
    make: impl Fn(StoreConfig) -> T,
) {
    let mut s = make(config());
    let begin = s.begin(0, "t", None, BODY, &REQUIRED);
    assert_eq!(begin, Begin::Invalid(RequestError::MissingKey));
    assert_eq!(RequestError::MissingKey.status(), 400);
    assert!(s.row_count() == 0);
}

pub fn missing_key_on_optional_route_runs_unkeyed_and_records_nothing<T: Claims>(
    make: impl Fn(StoreConfig) -> T,
) {
    let mut s = make(config());
    assert_eq!(s.begin(0, "t", None, BODY, &OPTIONAL), Begin::Unkeyed);
    assert!(s.row_count() == 0);
    assert_eq!(s.logged().len(), 0);
}

pub fn empty_key_is_400<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let begin = s.begin(0, "t", Some(""), BODY, &OPTIONAL);
    assert_eq!(begin, Begin::Invalid(RequestError::EmptyKey));
    assert!(s.row_count() == 0);
}

pub fn key_over_255_characters_is_400_and_255_is_fine<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let long = "k".repeat(256);
    let begin = s.begin(0, "t", Some(&long), BODY, &REQUIRED);
    assert_eq!(begin, Begin::Invalid(RequestError::KeyTooLong { len: 256 }));
    assert!(s.row_count() == 0);
    claim(&mut s, 0, "t", &"k".repeat(255));
}

pub fn key_with_control_character_is_400<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    for (key, index) in [("ab\ncd", 2), ("\t", 0), ("del\u{7f}", 3), ("nul\0", 3)] {
        let begin = s.begin(0, "t", Some(key), BODY, &REQUIRED);
        assert_eq!(
            begin,
            Begin::Invalid(RequestError::KeyNotPrintable { index })
        );
    }
    assert!(s.row_count() == 0);
}

pub fn non_ascii_key_is_400<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let begin = s.begin(0, "t", Some("clé-1"), BODY, &REQUIRED);
    assert_eq!(
        begin,
        Begin::Invalid(RequestError::KeyNotPrintable { index: 2 })
    );
    assert!(s.row_count() == 0);
}

pub fn body_over_the_limit_is_413_and_the_limit_itself_is_fine<T: Claims>(
    make: impl Fn(StoreConfig) -> T,
) {
    let mut s = make(config());
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
    assert_eq!(s.row_count(), 1);
}

fn claim_body<T: Claims>(s: &mut T, key: &str, body: &[u8]) {
    let begin = s.begin(0, "t", Some(key), body, &REQUIRED);
    assert!(matches!(begin, Begin::Execute { .. }), "{begin:?}");
}

pub fn invalid_json_is_400_and_records_nothing<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    for body in [&b"{"[..], b"", b"{\"a\":1} x", b"\xff\xfe", b"{'a':1}"] {
        match s.begin(0, "t", Some("k"), body, &REQUIRED) {
            Begin::Invalid(e @ RequestError::InvalidJson { .. }) => assert_eq!(e.status(), 400),
            other => panic!("{body:?}: expected invalid json, got {other:?}"),
        }
    }
    assert!(s.row_count() == 0);
}

pub fn record_past_retention_counts_as_absent<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
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
    let row = s.row_of(at, "t", "k").expect("claimed again");
    assert_eq!(row.created_at, at);
    let _ = id;
    assert!(s.kinds().contains(&EventKind::Pruned));
}

/// The expired-key guard (idem_store::first_sent): no row, and first sent at least retention
/// plus the tolerance ago → 412, nothing recorded, logged; a moment less → claimed; a row
/// still kept decides (replay) however old the first send; a row past retention counts as
/// none; a route's own retention is the one compared.
pub fn the_expired_key_guard_refuses_only_a_request_whose_key_is_gone_and_first_send_too_old<
    T: Claims,
>(
    make: impl Fn(StoreConfig) -> T,
) {
    const TOLERANCE: u64 = 1_000;
    let mut s = make(StoreConfig {
        first_sent_tolerance_ms: Some(TOLERANCE),
        ..config()
    });
    let now = 1_000_000;
    let limit = RETENTION_MS + TOLERANCE;
    assert_eq!(
        s.begin_first_sent(now, "t", "old", now - limit, BODY, &REQUIRED),
        Begin::KeyExpired
    );
    assert!(
        s.row_of(now, "t", "old").is_none(),
        "a refusal records nothing"
    );
    assert!(s.kinds().contains(&EventKind::Rejected {
        status: 412,
        reason: Rejection::KeyExpired
    }));
    assert!(matches!(
        s.begin_first_sent(now, "t", "fresh", now - limit + 1, BODY, &REQUIRED),
        Begin::Execute { .. }
    ));
    // A row still kept: its replay, whatever the first-sent time says.
    let (id, lease) = claim(&mut s, now, "t", "kept");
    s.commit_response(now, &id, &lease, created(1)).unwrap();
    assert!(matches!(
        s.begin_first_sent(now + 10, "t", "kept", 0, BODY, &REQUIRED),
        Begin::Replay(_)
    ));
    // Past its retention the row counts as none: refused then too.
    let later = now + RETENTION_MS;
    assert!(matches!(
        s.begin_first_sent(later, "t", "kept", now - TOLERANCE, BODY, &REQUIRED),
        Begin::KeyExpired
    ));
    // The route's own retention (5 s here) is the one the first send is compared with.
    assert_eq!(
        s.begin_first_sent(
            now,
            "t",
            "short",
            now - SHORT_RETENTION_MS - TOLERANCE,
            BODY,
            &SHORT_LIVED
        ),
        Begin::KeyExpired
    );
    // With the guard off, the oldest first send claims.
    let mut off = make(config());
    assert!(matches!(
        off.begin_first_sent(now, "t", "old", 0, BODY, &REQUIRED),
        Begin::Execute { .. }
    ));
}

pub fn different_fingerprint_is_422_never_runs_never_replays<T: Claims>(
    make: impl Fn(StoreConfig) -> T,
) {
    let mut s = make(config());
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
    assert_eq!(status_of(&mut s, "t", "k"), Some(Held::InFlight { lease }));
    s.save(5_001, &id, &lease, created(1)).unwrap();
    // When done: 422, not the saved response.
    assert_eq!(
        s.begin(5_002, "t", Some("k"), OTHER_BODY, &REQUIRED),
        Begin::Mismatch
    );
}

pub fn done_with_same_fingerprint_replays_byte_for_byte<T: Claims>(
    make: impl Fn(StoreConfig) -> T,
) {
    let mut s = make(config());
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

pub fn in_flight_with_live_lease_is_409_with_time_left<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
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
    assert_eq!(status_of(&mut s, "t", "k"), Some(Held::InFlight { lease }));
}

pub fn in_flight_with_stale_lease_is_taken_over<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let (_, old) = claim(&mut s, 100, "t", "k");
    let (_, new) = take_over(&mut s, 100 + LOCK_MS, "k");
    assert!(new.token > old.token);
    assert_eq!(new.locked_at, 100 + LOCK_MS);
    assert_eq!(
        status_of(&mut s, "t", "k"),
        Some(Held::InFlight { lease: new })
    );
    assert!(s.kinds().contains(&EventKind::TakenOver {
        old_token: old.token,
        new_token: new.token
    }));
    // Created-at and fingerprint are the first claim's.
    assert_eq!(s.row_of(100 + LOCK_MS, "t", "k").unwrap().created_at, 100);
}

pub fn a_takeover_has_exactly_one_winner<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
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

/// Work that takes three leases, renewing as it goes: no retry takes it over while it
/// renews; once it stops, its lease goes stale a lease after the last renewal and one retry
/// takes it over; its next renewal and its save are then fenced.
pub fn a_renewed_lease_is_not_taken_over_and_a_lost_one_renews_nothing<T: Claims>(
    make: impl Fn(StoreConfig) -> T,
) {
    let mut s = make(config());
    let (id, mut lease) = claim(&mut s, 0, "t", "k");
    let token = lease.token;
    for beat in 1..=3 {
        let now = beat * (LOCK_MS - 100);
        lease = s.renew(now, &id, &lease).expect("the holder renews");
        assert_eq!(
            lease,
            Lease {
                locked_at: now,
                token
            }
        );
        // Past the first lease's end, a retry still finds a live claim.
        assert_eq!(
            s.begin(now + 150, "t", Some("k"), BODY, &REQUIRED),
            Begin::InFlight {
                retry_after_ms: LOCK_MS - 150
            },
            "beat {beat}"
        );
    }
    assert_eq!(status_of(&mut s, "t", "k"), Some(Held::InFlight { lease }));
    // The worker stops renewing: a lease after its last renewal, a retry takes it over.
    let (_, winner) = take_over(&mut s, lease.locked_at + LOCK_MS, "k");
    assert!(winner.token > token);
    assert_eq!(
        s.renew(lease.locked_at + LOCK_MS + 1, &id, &lease),
        Err(Fenced)
    );
    assert_eq!(
        s.save(lease.locked_at + LOCK_MS + 2, &id, &lease, created(1)),
        Err(Fenced)
    );
    assert_eq!(
        status_of(&mut s, "t", "k"),
        Some(Held::InFlight { lease: winner })
    );
    // A released or saved claim renews nothing either.
    s.save(lease.locked_at + LOCK_MS + 3, &id, &winner, created(2))
        .unwrap();
    assert_eq!(
        s.renew(lease.locked_at + LOCK_MS + 4, &id, &winner),
        Err(Fenced)
    );
}

// ---- fencing ----

pub fn zombie_save_after_takeover_is_fenced<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let (id, zombie) = claim(&mut s, 0, "t", "k");
    let (_, winner) = take_over(&mut s, LOCK_MS + 5, "k");
    assert_eq!(s.save(LOCK_MS + 6, &id, &zombie, created(1)), Err(Fenced));
    assert_eq!(
        status_of(&mut s, "t", "k"),
        Some(Held::InFlight { lease: winner })
    );
    s.save(LOCK_MS + 7, &id, &winner, created(2)).unwrap();
    // Nor can the zombie overwrite the winner's saved answer.
    assert_eq!(s.save(LOCK_MS + 8, &id, &zombie, created(1)), Err(Fenced));
    assert_eq!(
        s.begin(LOCK_MS + 9, "t", Some("k"), BODY, &REQUIRED),
        Begin::Replay(created(2))
    );
    assert!(s.kinds().contains(&EventKind::Fenced {
        token: zombie.token
    }));
}

pub fn zombie_release_after_takeover_leaves_the_record_alone<T: Claims>(
    make: impl Fn(StoreConfig) -> T,
) {
    let mut s = make(config());
    let (id, zombie) = claim(&mut s, 0, "t", "k");
    let (_, winner) = take_over(&mut s, LOCK_MS, "k");
    assert_eq!(s.release(LOCK_MS + 1, &id, &zombie), Err(Fenced));
    assert_eq!(
        status_of(&mut s, "t", "k"),
        Some(Held::InFlight { lease: winner })
    );
    let failed = SavedResponse::json(502, b"{}".to_vec());
    assert_eq!(s.fail(LOCK_MS + 2, &id, &zombie, failed), Err(Fenced));
    assert_eq!(
        status_of(&mut s, "t", "k"),
        Some(Held::InFlight { lease: winner })
    );
}

pub fn a_zombie_fail_on_a_releasing_route_leaves_the_record_alone<T: Claims>(
    make: impl Fn(StoreConfig) -> T,
) {
    let mut s = make(config());
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
        status_of(&mut s, "t", "k"),
        Some(Held::InFlight { lease: winner })
    );
}

pub fn two_takeovers_in_the_same_millisecond_get_different_tokens<T: Claims>(
    make: impl Fn(StoreConfig) -> T,
) {
    // lock_ms 0: every lease is stale at once, so takeovers can share a millisecond.
    let mut s = make(StoreConfig {
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

pub fn a_slow_worker_still_holding_its_lease_may_save<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    // Fencing is by lease, not by clock: nobody took over, so the late save lands.
    let mut s = make(config());
    let (id, lease) = claim(&mut s, 0, "t", "k");
    s.save(3 * LOCK_MS, &id, &lease, created(1)).unwrap();
    assert_eq!(
        s.begin(3 * LOCK_MS + 1, "t", Some("k"), BODY, &REQUIRED),
        Begin::Replay(created(1))
    );
}

// ---- error policies ----

pub fn release_claim_policy_lets_the_same_request_run_again<T: Claims>(
    make: impl Fn(StoreConfig) -> T,
) {
    let mut s = make(config());
    let (id, lease) = claim_releasing(&mut s, 0, BODY);
    let failed = SavedResponse::json(503, br#"{"error":"payco down"}"#.to_vec());
    s.fail(1, &id, &lease, failed).unwrap();
    assert_eq!(status_of(&mut s, "t", "k"), Some(Held::Released { lease }));
    // The retry, inside the released lease's time, claims again under a new lease: the
    // release ended that lease; nothing is replayed.
    let (again_id, again) = claim_releasing(&mut s, 2, BODY);
    assert_eq!(again_id, id);
    assert!(again.token > lease.token);
    assert_eq!(again.locked_at, 2);
    assert_eq!(
        status_of(&mut s, "t", "k"),
        Some(Held::InFlight { lease: again })
    );
    let row = s.row_of(2, "t", "k").unwrap();
    assert_eq!((row.created_at, row.expires_at), (0, 2 + RETENTION_MS));
    assert_eq!(
        s.kinds(),
        vec![
            EventKind::Claimed { token: lease.token },
            EventKind::Released { token: lease.token },
            EventKind::Claimed { token: again.token },
        ]
    );
}

/// The issue's three steps: A fails under `release-claim` (402), B reuses A's key with
/// another payload, A retries. B is 422 and never runs; A's retry claims again.
pub fn a_released_key_stays_bound_to_its_first_request<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let (id, a) = claim_releasing(&mut s, 0, BODY);
    let declined = SavedResponse::json(402, br#"{"error":"card declined"}"#.to_vec());
    s.fail(1, &id, &a, declined.clone()).unwrap();
    // B, another payload under the same key: 422, inside the released lease's time and
    // long after it, on either route; the row is untouched.
    for now in [2, 10 * LOCK_MS] {
        for route in [&RELEASING, &REQUIRED] {
            assert_eq!(
                s.begin(now, "t", Some("k"), OTHER_BODY, route),
                Begin::Mismatch
            );
        }
    }
    assert_eq!(
        status_of(&mut s, "t", "k"),
        Some(Held::Released { lease: a })
    );
    // A again, the same payload spelled another way: the work runs again.
    let same = br#"{ "amount": 4200, "cart": "c-1" }"#;
    let (_, again) = claim_releasing(&mut s, 10 * LOCK_MS + 1, same);
    assert!(again.token > a.token);
    // Still bound: B is 422 while A's retry runs, and after it fails again.
    assert_eq!(
        s.begin(10 * LOCK_MS + 2, "t", Some("k"), OTHER_BODY, &RELEASING),
        Begin::Mismatch
    );
    s.fail(10 * LOCK_MS + 3, &id, &again, declined).unwrap();
    assert_eq!(
        s.begin(10 * LOCK_MS + 4, "t", Some("k"), OTHER_BODY, &RELEASING),
        Begin::Mismatch
    );
    let mismatch = EventKind::Rejected {
        status: 422,
        reason: Rejection::Mismatch,
    };
    let kinds = s.kinds();
    assert_eq!(kinds.iter().filter(|k| **k == mismatch).count(), 6);
    // B never claimed: the only claims are A's.
    let claims: Vec<_> = kinds
        .iter()
        .filter(|k| matches!(k, EventKind::Claimed { .. } | EventKind::TakenOver { .. }))
        .collect();
    assert_eq!(
        claims,
        vec![
            &EventKind::Claimed { token: a.token },
            &EventKind::Claimed { token: again.token }
        ]
    );
}

pub fn a_released_claim_is_claimed_again_by_one_winner<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let (id, first) = claim_releasing(&mut s, 0, BODY);
    s.release(5, &id, &first).unwrap();
    let (_, winner) = claim_releasing(&mut s, 10, BODY);
    // A second retry in the same millisecond finds the new, live lease.
    assert_eq!(
        s.begin(10, "t", Some("k"), BODY, &RELEASING),
        Begin::InFlight {
            retry_after_ms: LOCK_MS
        }
    );
    // The released lease fences nothing: it can neither save nor release the new claim.
    assert_eq!(s.save(11, &id, &first, created(1)), Err(Fenced));
    assert_eq!(s.release(12, &id, &first), Err(Fenced));
    assert_eq!(
        status_of(&mut s, "t", "k"),
        Some(Held::InFlight { lease: winner })
    );
    s.commit_response(13, &id, &winner, created(2)).unwrap();
    assert_eq!(
        s.begin(14, "t", Some("k"), BODY, &RELEASING),
        Begin::Replay(created(2))
    );
}

/// A released row expires when the claim's retention ends (a release restarts nothing):
/// pruned then, and the key is free for any payload.
pub fn a_released_row_is_pruned_at_its_retention<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let (id, lease) = claim_releasing(&mut s, 100, BODY);
    s.release(400, &id, &lease).unwrap();
    let end = 100 + RETENTION_MS;
    assert_eq!(s.row_of(400, "t", "k").unwrap().expires_at, end);
    assert_eq!(s.prune(end - 1), 0);
    assert_eq!(
        s.begin(end - 1, "t", Some("k"), OTHER_BODY, &RELEASING),
        Begin::Mismatch
    );
    assert_eq!(s.prune(end), 1);
    assert_eq!(s.row_count(), 0);
    claim_releasing(&mut s, end, OTHER_BODY);
    // Released inside its lease, past a retention shorter than the lease: no live claim.
    let mut s = make(StoreConfig {
        retention_ms: 100,
        ..config()
    });
    let (id, lease) = claim_releasing(&mut s, 0, BODY);
    s.release(10, &id, &lease).unwrap();
    assert_eq!(s.prune(100), 1);
}

pub fn save_response_policy_replays_the_error<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let (id, lease) = claim(&mut s, 0, "t", "k");
    let failed = SavedResponse::json(402, br#"{"error":"card declined"}"#.to_vec());
    s.fail(1, &id, &lease, failed.clone()).unwrap();
    assert_eq!(
        s.begin(2, "t", Some("k"), BODY, &REQUIRED),
        Begin::Replay(failed)
    );
}

/// The policy is the claiming route's, kept in the row: the caller of `fail` has no say.
pub fn fail_follows_the_policy_the_route_declared<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let failed = SavedResponse::json(402, br#"{"error":"card declined"}"#.to_vec());
    for (route, key) in [(&REQUIRED, "saves"), (&RELEASING, "releases")] {
        let Begin::Execute { id, lease, .. } = s.begin(0, "t", Some(key), BODY, route) else {
            panic!("claim")
        };
        assert_eq!(s.row_of(0, "t", key).unwrap().on_error, route.on_error);
        s.fail(1, &id, &lease, failed.clone()).unwrap();
    }
    assert_eq!(
        s.begin(2, "t", Some("saves"), BODY, &REQUIRED),
        Begin::Replay(failed)
    );
    assert!(matches!(
        status_of(&mut s, "t", "releases"),
        Some(Held::Released { lease }) if lease.token == 2
    ));
    let kinds = s.kinds();
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
pub fn a_key_reused_on_another_operation_with_the_same_body_is_422<T: Claims>(
    make: impl Fn(StoreConfig) -> T,
) {
    let mut s = make(config());
    // The same length as OPERATION, so only the operation's text tells them apart.
    let refund = RouteConfig::required("POST /api/shipping", ErrorPolicy::SaveResponse);
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

pub fn a_scope_no_tenant_id_could_be_is_400_and_leaves_no_row<T: Claims>(
    make: impl Fn(StoreConfig) -> T,
) {
    let mut s = make(config());
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
    }
    assert!(s.row_count() == 0);
    // The rejection is logged without the scope it refused.
    assert!(s
        .logged()
        .iter()
        .all(|e| e.scope().is_empty() && e.key().is_none()));
    claim(&mut s, 0, &"s".repeat(255), "k");
}

pub fn a_released_lease_cannot_save_afterwards<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let (id, lease) = claim(&mut s, 0, "t", "k");
    s.release(1, &id, &lease).unwrap();
    assert_eq!(s.save(2, &id, &lease, created(1)), Err(Fenced));
    assert_eq!(s.commit_response(2, &id, &lease, created(1)), Err(Fenced));
    let failed = SavedResponse::json(402, b"{}".to_vec());
    assert_eq!(s.fail(2, &id, &lease, failed), Err(Fenced));
    assert_eq!(s.release(3, &id, &lease), Err(Fenced));
    assert_eq!(s.row_count(), 1);
    assert_eq!(status_of(&mut s, "t", "k"), Some(Held::Released { lease }));
    assert!(s
        .kinds()
        .contains(&EventKind::Fenced { token: lease.token }));
}

// ---- retention and pruning ----

pub fn prune_removes_done_records_once_retention_ends<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let (id, lease) = claim(&mut s, 0, "t", "k");
    // Retention restarts at the save.
    s.save(10, &id, &lease, created(1)).unwrap();
    assert_eq!(s.prune(10 + RETENTION_MS - 1), 0);
    assert_eq!(s.row_count(), 1);
    assert_eq!(s.prune(10 + RETENTION_MS), 1);
    assert!(s.row_count() == 0);
    assert_eq!(s.kinds().last(), Some(&EventKind::Pruned));
}

pub fn prune_never_removes_a_live_in_flight_claim<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    // Retention shorter than the lease: the misconfiguration that would bite.
    let mut s = make(StoreConfig {
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
    assert_eq!(status_of(&mut s, "t", "k"), Some(Held::InFlight { lease }));
    // Once stale (and past retention) it may go.
    assert_eq!(s.prune(LOCK_MS), 1);
    assert_eq!(s.save(LOCK_MS, &id, &lease, created(1)), Err(Fenced));
}

pub fn prune_keeps_a_stale_claim_inside_retention<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    claim(&mut s, 0, "t", "k");
    assert_eq!(s.prune(10 * LOCK_MS), 0);
    assert_eq!(s.row_count(), 1);
}

pub fn each_route_keeps_its_own_retention<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let (short, short_lease) = match s.begin(0, "t", Some("short"), BODY, &SHORT_LIVED) {
        Begin::Execute { id, lease, .. } => (id, lease),
        other => panic!("expected a claim, got {other:?}"),
    };
    let (long, long_lease) = claim(&mut s, 0, "t", "long");
    s.commit_response(10, &short, &short_lease, created(1))
        .unwrap();
    s.commit_response(10, &long, &long_lease, created(2))
        .unwrap();
    let rows = s.rows_of(10, &["t"]);
    let spans: Vec<_> = rows
        .iter()
        .map(|r| (r.key.as_str(), r.retention_ms, r.expires_at))
        .collect();
    assert_eq!(
        spans,
        vec![
            ("long", RETENTION_MS, 10 + RETENTION_MS),
            ("short", SHORT_RETENTION_MS, 10 + SHORT_RETENTION_MS),
        ]
    );
    // The short-lived key replays until its own retention ends, then is pruned and claims
    // afresh; the other route's key is untouched.
    let end = 10 + SHORT_RETENTION_MS;
    assert_eq!(
        s.begin(end - 1, "t", Some("short"), BODY, &SHORT_LIVED),
        Begin::Replay(created(1))
    );
    assert_eq!(s.prune(end - 1), 0);
    assert_eq!(s.prune(end), 1);
    assert!(s.row_of(end, "t", "short").is_none());
    assert!(matches!(
        s.begin(end, "t", Some("short"), BODY, &SHORT_LIVED),
        Begin::Execute {
            taken_over: false,
            ..
        }
    ));
    assert_eq!(
        s.begin(end, "t", Some("long"), BODY, &REQUIRED),
        Begin::Replay(created(2))
    );
    assert_eq!(
        s.begin(10 + RETENTION_MS - 1, "t", Some("long"), BODY, &REQUIRED),
        Begin::Replay(created(2))
    );
}

pub fn every_write_restarts_the_rows_own_retention<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let (_, first) = match s.begin(0, "t", Some("k"), BODY, &SHORT_LIVED) {
        Begin::Execute { id, lease, .. } => (id, lease),
        other => panic!("expected a claim, got {other:?}"),
    };
    // The stale claim is taken over through the same operation declared without a
    // retention of its own (say, after a restart with other settings): the row keeps the
    // retention it was claimed with, for the takeover and for the commit.
    let (id, lease) = match s.begin(LOCK_MS, "t", Some("k"), BODY, &REQUIRED) {
        Begin::Execute {
            id,
            lease,
            taken_over: true,
        } => (id, lease),
        other => panic!("expected a takeover, got {other:?}"),
    };
    assert!(lease.token > first.token);
    let row = s.row_of(LOCK_MS, "t", "k").expect("taken over");
    assert_eq!(
        (row.retention_ms, row.expires_at),
        (SHORT_RETENTION_MS, LOCK_MS + SHORT_RETENTION_MS)
    );
    s.commit_response(LOCK_MS + 500, &id, &lease, created(3))
        .unwrap();
    let done_at = LOCK_MS + 500;
    let row = s.row_of(done_at, "t", "k").expect("done");
    assert_eq!(row.expires_at, done_at + SHORT_RETENTION_MS);
    assert_eq!(s.prune(done_at + SHORT_RETENTION_MS - 1), 0);
    assert_eq!(s.prune(done_at + SHORT_RETENTION_MS), 1);
}

// ---- scoping ----

pub fn the_same_key_in_two_scopes_is_two_operations<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let (a, lease_a) = claim(&mut s, 0, "tenant-a", "k");
    let (b, lease_b) = claim(&mut s, 0, "tenant-b", "k");
    assert_ne!(a, b);
    s.save(1, &a, &lease_a, created(1)).unwrap();
    assert_eq!(
        s.begin(2, "tenant-a", Some("k"), BODY, &REQUIRED),
        Begin::Replay(created(1))
    );
    assert_eq!(
        status_of(&mut s, "tenant-b", "k"),
        Some(Held::InFlight { lease: lease_b })
    );
    // A lease from one scope does not fence-pass in another.
    assert_eq!(s.save(3, &b, &lease_a, created(9)), Err(Fenced));
    // A different body in a third scope is no mismatch.
    let c = s.begin(4, "tenant-c", Some("k"), OTHER_BODY, &REQUIRED);
    assert!(matches!(c, Begin::Execute { .. }), "{c:?}");
}

// ---- lower-level entry ----

pub fn the_event_log_records_every_decision<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
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
    assert_eq!(s.kinds(), expected);
    let events = s.logged();
    let last = events.last().unwrap();
    assert_eq!(
        (last.at(), last.scope(), last.key()),
        (LOCK_MS + 2 + RETENTION_MS, "t", Some("k"))
    );
    let missing = &events[3];
    assert_eq!((missing.at(), missing.key()), (3, None));
    let seqs: Vec<u64> = events.iter().map(|e| e.seq()).collect();
    assert_eq!(seqs, (0..12).collect::<Vec<_>>());
}

pub fn rows_show_the_table_at_now<T: Claims>(make: impl Fn(StoreConfig) -> T) {
    let mut s = make(config());
    let (id, lease) = claim(&mut s, 0, "b", "k");
    claim(&mut s, 100, "a", "k");
    s.save(50, &id, &lease, created(1)).unwrap();
    let rows = s.rows_of(600, &["a", "b"]);
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
    assert_eq!(s.rows_of(1_100, &["a", "b"])[0].state, RowState::Stale);
    assert_eq!(s.rows_of(1_100, &["a", "b"])[0].lease_left_ms, Some(0));
    assert!(s.rows_of(50 + RETENTION_MS, &["a", "b"])[1].expired);
}
