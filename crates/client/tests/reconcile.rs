//! Reconciling: an operation whose outcome is unknown (or pending after a reload) settles from
//! the server's key-state answer when the server says done, and stays as it is otherwise.
#![cfg(not(target_arch = "wasm32"))]

#[path = "common/rng.rs"]
mod rng;

use idem_client::journal::Entry;
use idem_client::{
    Action, Journal, KeyState, MemoryJournal, Operation, OperationSpec, OutcomeKind, RecordState,
    RetryPolicy,
};
use serde_json::json;
use uuid::Uuid;

use rng::Zero;

const NAME: &str = "checkout:cart-42";

/// An operation whose one attempt timed out and whose window (10 s) closed: unknown, its
/// record kept. Returned as a reload would find it: resumed from the journal.
fn unknown(journal: &mut MemoryJournal) -> Operation {
    let policy = RetryPolicy {
        retry_window_ms: 10_000,
        ..RetryPolicy::default()
    };
    let spec = OperationSpec::post(NAME, json!({ "amount": 1299 }));
    let mut keys = || Uuid::from_u128(7);
    let mut op = Operation::start(spec, policy.clone(), 0, journal, &mut keys).unwrap();
    assert!(matches!(op.poll(0, journal, &mut Zero), Action::Send(_)));
    op.handle_timeout(10_000);
    let Action::Finished(outcome) = op.poll(10_000, journal, &mut Zero) else {
        panic!("the window closed")
    };
    assert!(matches!(outcome.kind, OutcomeKind::Unknown { .. }));
    let record = journal.load(NAME).unwrap().expect("kept to reconcile");
    assert!(matches!(record.state, RecordState::Unknown { .. }));
    Operation::resume(NAME, policy, journal).unwrap().unwrap()
}

#[test]
fn done_settles_the_operation_with_the_saved_answer() {
    let mut journal = MemoryJournal::new();
    let mut op = unknown(&mut journal);
    let saved = KeyState::Done {
        status: 201,
        body: br#"{"order":12}"#.to_vec(),
    };
    assert!(op.handle_key_state(20_000, &saved));
    let Action::Finished(outcome) = op.poll(20_000, &mut journal, &mut Zero) else {
        panic!("finished")
    };
    assert_eq!(
        outcome.kind,
        OutcomeKind::Replayed {
            status: 201,
            body: br#"{"order":12}"#.to_vec()
        }
    );
    assert_eq!(
        outcome.key.as_deref(),
        Some("00000000-0000-0000-0000-000000000007")
    );
    assert_eq!(outcome.attempts, 1, "reconciling sends no attempt");
    match journal.load_entry(NAME).unwrap() {
        Some(Entry::Settled(s)) => assert_eq!((s.status, s.key), (201, Uuid::from_u128(7))),
        other => panic!("settled, got {other:?}"),
    }
}

#[test]
fn a_saved_rejection_is_rejected() {
    let mut journal = MemoryJournal::new();
    let mut op = unknown(&mut journal);
    let declined = KeyState::Done {
        status: 402,
        body: br#"{"type":"https://idem.dev/problems/payment-declined","status":402}"#.to_vec(),
    };
    assert!(op.handle_key_state(20_000, &declined));
    let Action::Finished(outcome) = op.poll(20_000, &mut journal, &mut Zero) else {
        panic!("finished")
    };
    assert!(matches!(
        outcome.kind,
        OutcomeKind::Rejected {
            status: 402,
            problem: Some(_),
            ..
        }
    ));
}

/// The key holds another request (another body under the same key): this payload never ran
/// under it, so the operation settles as the refusal any attempt of it would get, and never
/// as the other body's answer.
#[test]
fn bound_to_another_request_settles_as_the_refusal() {
    let mut journal = MemoryJournal::new();
    let mut op = unknown(&mut journal);
    // As the reader finds it in idem-server's answer for another body under this key.
    let other = idem_store::Fingerprint::of_canonical("POST /api/checkout", br#"{"amount":1}"#);
    let answer = format!(
        r#"{{"state":"done","status":201,"body":"{{\"order\":12}}","operation":"POST /api/checkout","fingerprint":"{}"}}"#,
        other.to_hex()
    );
    let state = KeyState::from_reply(200, answer.as_bytes(), op.payload()).expect("a key state");
    assert_eq!(state, KeyState::BoundToAnotherRequest);
    assert!(op.handle_key_state(20_000, &state));
    let Action::Finished(outcome) = op.poll(20_000, &mut journal, &mut Zero) else {
        panic!("finished")
    };
    let OutcomeKind::Rejected {
        status: 422,
        problem: Some(problem),
        ..
    } = outcome.kind
    else {
        panic!("the refusal, got {:?}", outcome.kind)
    };
    assert_eq!(
        problem.title.as_deref(),
        Some("Idempotency key bound to another request")
    );
    assert_eq!(outcome.attempts, 1, "reconciling sends no attempt");
    match journal.load_entry(NAME).unwrap() {
        Some(Entry::Settled(s)) => assert_eq!(s.status, 422),
        other => panic!("settled, got {other:?}"),
    }
    // The same answer for this operation's own body is its own saved answer.
    let mut journal = MemoryJournal::new();
    let op = unknown(&mut journal);
    let mine =
        idem_store::Fingerprint::of_canonical("POST /api/checkout", op.payload().json.as_bytes());
    let answer = answer.replace(&other.to_hex(), &mine.to_hex());
    let state = KeyState::from_reply(200, answer.as_bytes(), op.payload()).expect("a key state");
    assert!(matches!(state, KeyState::Done { status: 201, .. }));
}

/// In flight, released (the work did not complete: the page sends again under the same key,
/// which `released_leaves_the_operation_to_send_again` shows) and not found leave the
/// operation open and its record as it was.
#[test]
fn in_flight_released_and_not_found_change_nothing() {
    let mut journal = MemoryJournal::new();
    let mut op = unknown(&mut journal);
    let before = journal.load(NAME).unwrap();
    let in_flight = KeyState::InFlight {
        lease_age_ms: 850,
        lease_left_ms: 9_150,
    };
    for state in [in_flight, KeyState::Released, KeyState::NotFound] {
        assert!(!op.handle_key_state(20_000, &state), "{state:?}");
        assert_eq!(journal.load(NAME).unwrap(), before);
        assert!(op.outcome().is_none());
    }
    // A retryable status is never a saved answer: it settles nothing either.
    let odd = KeyState::Done {
        status: 503,
        body: Vec::new(),
    };
    assert!(!op.handle_key_state(20_000, &odd));
}

/// Released: the key is free for this payload, so a resumed operation (a reload, or the JS
/// `resume(name)`) sends again with the same key and the same bytes.
#[test]
fn released_leaves_the_operation_to_send_again_under_its_key() {
    let mut journal = MemoryJournal::new();
    let policy = RetryPolicy::default();
    let spec = OperationSpec::post(NAME, json!({ "amount": 1299 }));
    let mut keys = || Uuid::from_u128(9);
    let mut op = Operation::start(spec, policy.clone(), 0, &mut journal, &mut keys).unwrap();
    let Action::Send(first) = op.poll(0, &mut journal, &mut Zero) else {
        panic!("the first attempt")
    };
    // Its answer is lost; the page reloads and asks what became of the key.
    op.handle_timeout(10_000);
    let mut resumed = Operation::resume(NAME, policy, &journal).unwrap().unwrap();
    assert!(!resumed.handle_key_state(20_000, &KeyState::Released));
    let Action::Send(again) = resumed.poll(20_000, &mut journal, &mut Zero) else {
        panic!("a released key is sent again")
    };
    assert_eq!(again.key, first.key);
    assert_eq!(again.body, first.body);
}
