//! Settled entries and unlocked starts: one key per operation for the whole retry window, and
//! for two writers that start the same operation at the same instant without a lock.
#![cfg(not(target_arch = "wasm32"))]

#[path = "common/rng.rs"]
mod rng;

use idem_client::journal::{self, Entry, SETTLED_FORMAT_VERSION};
use idem_client::{
    Action, Journal, MemoryJournal, Method, Operation, OperationSpec, OutcomeKind, Reply,
    RetryPolicy, StartError, Unconfirmed,
};
use serde_json::json;
use uuid::Uuid;

use rng::Zero;

const NAME: &str = "checkout:cart-42";
const WINDOW: u64 = 24 * 60 * 60 * 1000;

fn key(n: u128) -> impl FnMut() -> Uuid {
    move || Uuid::from_u128(n)
}

fn cart(amount: u64) -> OperationSpec {
    OperationSpec::post(NAME, json!({ "amount": amount, "currency": "EUR" }))
}

fn start(journal: &mut MemoryJournal, spec: OperationSpec, now: u64, k: u128) -> Operation {
    Operation::start(spec, RetryPolicy::default(), now, journal, &mut key(k)).unwrap()
}

/// An unlocked start of `cart(1299)` at `now` with key `k`, confirmed after `settle_ms`.
fn unlocked(journal: &mut MemoryJournal, now: u64, k: u128, settle_ms: u64) -> Unconfirmed {
    let policy = RetryPolicy::default();
    Operation::start_unlocked(cart(1299), policy, now, journal, &mut key(k), settle_ms).unwrap()
}

/// Runs `op` from `now`: its first attempt is answered `reply`; returns the attempt's key and the
/// outcome kind.
fn answer(
    op: &mut Operation,
    journal: &mut MemoryJournal,
    now: u64,
    reply: Reply,
) -> (Option<Uuid>, OutcomeKind) {
    let Action::Send(attempt) = op.poll(now, journal, &mut Zero) else {
        panic!("expected a send at {now}")
    };
    op.handle_reply(now + 10, reply);
    let Action::Finished(outcome) = op.poll(now + 10, journal, &mut Zero) else {
        panic!("expected the outcome at {now}")
    };
    (attempt.key, outcome.kind)
}

fn settled_entry(journal: &MemoryJournal) -> idem_client::SettledRecord {
    match journal.load_entry(NAME).unwrap() {
        Some(Entry::Settled(s)) => s,
        other => panic!("expected a settled entry, got {other:?}"),
    }
}

#[test]
fn a_final_answer_leaves_key_and_fingerprint_but_not_the_body() {
    let mut journal = MemoryJournal::new();
    let mut op = start(&mut journal, cart(1299), 1_000, 1);
    let fingerprint = op.payload().fingerprint.clone();
    answer(
        &mut op,
        &mut journal,
        1_000,
        Reply::new(201, r#"{"order":7}"#),
    );
    let settled = settled_entry(&journal);
    assert_eq!(
        (settled.key, settled.fingerprint.as_str(), settled.method),
        (Uuid::from_u128(1), fingerprint.as_str(), Method::Post)
    );
    assert_eq!(
        (settled.version, settled.status, settled.attempts),
        (SETTLED_FORMAT_VERSION, 201, 1)
    );
    assert_eq!(
        (settled.created_at, settled.settled_at, settled.expires_at),
        (1_000, 1_010, 1_000 + WINDOW)
    );
    let raw = journal.raw(NAME).unwrap();
    for personal in ["amount", "1299", "EUR", "order"] {
        assert!(!raw.contains(personal), "{personal} in {raw}");
    }
    // Not an operation to resume, and not pending; listed as settled.
    assert_eq!(journal.load(NAME).unwrap(), None);
    assert!(Operation::resume(NAME, RetryPolicy::default(), &journal)
        .unwrap()
        .is_none());
    assert!(journal::pending(&journal).unwrap().is_empty());
    assert_eq!(
        journal::settled(&journal, 2_000).unwrap(),
        vec![settled.clone()]
    );
    assert!(journal::settled(&journal, 1_000 + WINDOW)
        .unwrap()
        .is_empty());
}

#[test]
fn a_duplicate_submit_in_the_window_resends_under_the_same_key() {
    let mut journal = MemoryJournal::new();
    let mut first = start(&mut journal, cart(1299), 0, 1);
    let (sent, _) = answer(&mut first, &mut journal, 0, Reply::new(201, "o-1"));
    // Later, the same payload (other key order): the same key goes out, with the same bytes.
    let again = OperationSpec::post(NAME, json!({ "currency": "EUR", "amount": 1299 }));
    let mut second = start(&mut journal, again, WINDOW - 1_000, 2);
    assert_eq!((second.key(), second.created_at()), (sent, 0));
    assert_eq!(second.payload(), first.payload());
    // While it is out, the journal holds an open record again (a reload resumes it).
    let Action::Send(attempt) = second.poll(WINDOW - 1_000, &mut journal, &mut Zero) else {
        panic!()
    };
    assert_eq!((attempt.key, attempt.number), (sent, 2));
    assert_eq!(attempt.body, first.payload().json.as_bytes());
    assert_eq!(journal.load(NAME).unwrap().map(|r| r.key), sent);
    second.handle_reply(WINDOW - 990, Reply::new(201, "o-1").replayed());
    let Action::Finished(outcome) = second.poll(WINDOW - 990, &mut journal, &mut Zero) else {
        panic!()
    };
    assert!(matches!(outcome.kind, OutcomeKind::Replayed { .. }));
    assert_eq!(outcome.attempts, 2);
    // Settled again, still counting from the operation's creation.
    assert_eq!(settled_entry(&journal).expires_at, WINDOW);
}

#[test]
fn a_rejection_is_settled_too() {
    let mut journal = MemoryJournal::new();
    let mut op = start(&mut journal, cart(1299), 0, 1);
    answer(&mut op, &mut journal, 0, Reply::new(402, "declined"));
    assert_eq!(settled_entry(&journal).status, 402);
    // The same payload again: the same key, so the server replays its decline.
    let again = start(&mut journal, cart(1299), 100, 2);
    assert_eq!(again.key(), Some(Uuid::from_u128(1)));
}

#[test]
fn another_payload_under_a_settled_name_is_refused_until_discarded() {
    let mut journal = MemoryJournal::new();
    let mut op = start(&mut journal, cart(1299), 0, 1);
    answer(&mut op, &mut journal, 0, Reply::new(201, "o-1"));
    let refused = Operation::start(
        cart(1),
        RetryPolicy::default(),
        100,
        &mut journal,
        &mut key(2),
    );
    let Err(StartError::SettledWithDifferentPayload { name, key: settled }) = refused else {
        panic!("expected SettledWithDifferentPayload, got {refused:?}")
    };
    assert_eq!(
        (name.as_str(), settled),
        (NAME, Uuid::from_u128(1).to_string())
    );
    // Another method under the name is another request too.
    let patch = cart(1299).with_method(Method::Patch);
    assert!(matches!(
        Operation::start(
            patch,
            RetryPolicy::default(),
            100,
            &mut journal,
            &mut key(3)
        ),
        Err(StartError::SettledWithDifferentPayload { .. })
    ));
    assert_eq!(settled_entry(&journal).key, Uuid::from_u128(1));
    // Discarded (the page pays again with another card): a new operation, a new key.
    journal.remove(NAME).unwrap();
    let new = start(&mut journal, cart(1), 200, 4);
    assert_eq!(new.key(), Some(Uuid::from_u128(4)));
}

#[test]
fn past_its_window_a_settled_entry_is_forgotten() {
    let mut journal = MemoryJournal::new();
    let mut op = start(&mut journal, cart(1299), 0, 1);
    answer(&mut op, &mut journal, 0, Reply::new(201, "o-1"));
    // The server's retention (no shorter than the window) may have pruned the key: a submit
    // now is a new operation, with a new key, whatever its payload.
    let same = start(&mut journal, cart(1299), WINDOW, 2);
    assert_eq!(
        (same.key(), same.created_at()),
        (Some(Uuid::from_u128(2)), WINDOW)
    );
    let mut other = MemoryJournal::new();
    let mut op = start(&mut other, cart(1299), 0, 1);
    answer(&mut op, &mut other, 0, Reply::new(201, "o-1"));
    assert_eq!(
        start(&mut other, cart(5), WINDOW, 3).key(),
        Some(Uuid::from_u128(3))
    );
}

#[test]
fn a_shorter_window_now_forgets_a_settled_entry_sooner() {
    let mut journal = MemoryJournal::new();
    let mut op = start(&mut journal, cart(1299), 0, 1);
    answer(&mut op, &mut journal, 0, Reply::new(201, "o-1"));
    // The page now runs a one-hour window: an entry settled under 24 h is not reused after it,
    // where a re-send would be given up as unknown before it was sent.
    let hour = RetryPolicy {
        retry_window_ms: 3_600_000,
        ..RetryPolicy::default()
    };
    let reused = Operation::start(
        cart(1299),
        hour.clone(),
        3_599_999,
        &mut journal,
        &mut key(2),
    );
    assert_eq!(reused.unwrap().key(), Some(Uuid::from_u128(1)));
    let mut journal = MemoryJournal::new();
    let mut op = start(&mut journal, cart(1299), 0, 1);
    answer(&mut op, &mut journal, 0, Reply::new(201, "o-1"));
    let fresh = Operation::start(cart(1299), hour, 3_600_000, &mut journal, &mut key(3));
    assert_eq!(fresh.unwrap().key(), Some(Uuid::from_u128(3)));
}

#[test]
fn pruning_removes_only_expired_settled_entries() {
    let mut journal = MemoryJournal::new();
    for (name, at) in [("a", 0), ("b", 10_000)] {
        let spec = OperationSpec::post(name, json!({ "n": 1 }));
        let mut op =
            Operation::start(spec, RetryPolicy::default(), at, &mut journal, &mut key(1)).unwrap();
        let Action::Send(_) = op.poll(at, &mut journal, &mut Zero) else {
            panic!()
        };
        op.handle_reply(at, Reply::new(200, ""));
        let Action::Finished(_) = op.poll(at, &mut journal, &mut Zero) else {
            panic!()
        };
    }
    let pending = OperationSpec::post("c", json!({ "n": 1 }));
    Operation::start(
        pending,
        RetryPolicy::default(),
        0,
        &mut journal,
        &mut key(2),
    )
    .unwrap();
    journal.insert_raw("d", "not ours");
    assert_eq!(journal::prune_settled(&mut journal, WINDOW).unwrap(), 1);
    assert_eq!(journal.names().unwrap(), ["b", "c", "d"]);
    assert_eq!(journal::prune_settled(&mut journal, WINDOW).unwrap(), 0);
}

#[test]
fn a_journal_without_settled_entries_removes_the_record() {
    /// A journal implementing only the required methods (the default `save_settled`), like a
    /// host journal written before settled entries existed.
    struct Plain(MemoryJournal);
    impl Journal for Plain {
        fn load(
            &self,
            name: &str,
        ) -> Result<Option<idem_client::Record>, idem_client::JournalError> {
            self.0.load(name)
        }
        fn save(&mut self, r: &idem_client::Record) -> Result<(), idem_client::JournalError> {
            self.0.save(r)
        }
        fn remove(&mut self, name: &str) -> Result<(), idem_client::JournalError> {
            self.0.remove(name)
        }
        fn names(&self) -> Result<Vec<String>, idem_client::JournalError> {
            self.0.names()
        }
    }
    let mut journal = Plain(MemoryJournal::new());
    let mut op = Operation::start(
        cart(1299),
        RetryPolicy::default(),
        0,
        &mut journal,
        &mut key(1),
    )
    .unwrap();
    let Action::Send(_) = op.poll(0, &mut journal, &mut Zero) else {
        panic!()
    };
    op.handle_reply(5, Reply::new(201, ""));
    let Action::Finished(_) = op.poll(5, &mut journal, &mut Zero) else {
        panic!()
    };
    assert!(journal.names().unwrap().is_empty());
}

// --- Two writers without a lock -------------------------------------------------------------

/// Two tabs that both read "nothing here" (the second's view of storage was stale) and minted
/// two keys: the later write stands, and confirmation makes both use its key.
#[test]
fn two_unlocked_starts_that_both_minted_confirm_one_key() {
    let mut shared = MemoryJournal::new();
    let stale = shared.clone();
    let a = unlocked(&mut shared, 0, 1, 100);
    // Tab B read the empty storage before A's write reached it, then its own write landed last.
    let mut b_view = stale;
    let b = unlocked(&mut b_view, 2, 2, 100);
    assert_eq!(
        (a.key(), b.key()),
        (Some(Uuid::from_u128(1)), Some(Uuid::from_u128(2)))
    );
    assert_eq!((a.confirm_at(), b.confirm_at()), (Some(100), Some(102)));
    shared.save(&b_view.load(NAME).unwrap().unwrap()).unwrap();

    let mut a = a.confirm(100, &mut shared).unwrap();
    let mut b = b.confirm(102, &mut shared).unwrap();
    assert_eq!(
        a.key(),
        Some(Uuid::from_u128(2)),
        "A adopts the key that stands"
    );
    assert_eq!(b.key(), Some(Uuid::from_u128(2)));
    let Action::Send(sa) = a.poll(100, &mut shared, &mut Zero) else {
        panic!()
    };
    let Action::Send(sb) = b.poll(102, &mut shared, &mut Zero) else {
        panic!()
    };
    assert_eq!((sa.key, &sa.body), (sb.key, &sb.body));
}

#[test]
fn an_unlocked_start_that_lost_to_another_payload_is_refused() {
    let mut shared = MemoryJournal::new();
    let a = unlocked(&mut shared, 0, 1, 50);
    // Another tab's different cart overwrote the name before A confirmed.
    let mut other = MemoryJournal::new();
    Operation::start(cart(5), RetryPolicy::default(), 1, &mut other, &mut key(2)).unwrap();
    shared.save(&other.load(NAME).unwrap().unwrap()).unwrap();
    let refused = a.confirm(50, &mut shared);
    assert!(
        matches!(&refused, Err(StartError::PendingWithDifferentPayload { key, .. }) if *key == Uuid::from_u128(2).to_string()),
        "{refused:?}"
    );
    // The winner's record is left as it was.
    assert_eq!(
        shared.load(NAME).unwrap().map(|r| r.key),
        Some(Uuid::from_u128(2))
    );
}

#[test]
fn an_unlocked_start_adopts_a_key_settled_meanwhile() {
    let mut shared = MemoryJournal::new();
    let a = unlocked(&mut shared, 0, 1, 50);
    // Tab B's operation under key 2 ran and settled before A confirmed.
    let mut b_view = MemoryJournal::new();
    let mut b = start(&mut b_view, cart(1299), 1, 2);
    answer(&mut b, &mut b_view, 1, Reply::new(201, "o-1"));
    shared.save_settled(&settled_entry(&b_view)).unwrap();
    let a = a.confirm(50, &mut shared).unwrap();
    assert_eq!(a.key(), Some(Uuid::from_u128(2)));
    // Its open record is written again, with the request's bytes, for a reload.
    assert_eq!(
        shared.load(NAME).unwrap().map(|r| (r.key, r.body)),
        Some((Uuid::from_u128(2), a.payload().json.clone()))
    );
}

#[test]
fn an_unlocked_start_keeps_its_key_when_it_stands_or_vanished() {
    let mut shared = MemoryJournal::new();
    let a = unlocked(&mut shared, 0, 1, 50);
    assert_eq!(
        a.confirm(50, &mut shared).unwrap().key(),
        Some(Uuid::from_u128(1))
    );
    // Discarded meanwhile: ours is written again before anything is sent.
    let mut shared = MemoryJournal::new();
    let a = unlocked(&mut shared, 0, 1, 50);
    shared.remove(NAME).unwrap();
    assert_eq!(
        a.confirm(50, &mut shared).unwrap().key(),
        Some(Uuid::from_u128(1))
    );
    assert_eq!(
        shared.load(NAME).unwrap().map(|r| r.key),
        Some(Uuid::from_u128(1))
    );
}

#[test]
fn an_unlocked_start_that_read_an_existing_key_has_nothing_to_confirm() {
    let mut shared = MemoryJournal::new();
    start(&mut shared, cart(1299), 0, 1);
    let b = unlocked(&mut shared, 5, 2, 50);
    assert_eq!((b.key(), b.confirm_at()), (Some(Uuid::from_u128(1)), None));
    // Even if the entry changed since, a read key is kept: it was already someone's key.
    shared.remove(NAME).unwrap();
    assert_eq!(
        b.confirm(60, &mut shared).unwrap().key(),
        Some(Uuid::from_u128(1))
    );
}
