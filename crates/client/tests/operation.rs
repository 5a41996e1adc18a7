//! Scripted tests of the operation state machine: each attempt answered by hand.
#![cfg(not(target_arch = "wasm32"))]

use idem_client::journal::{self, RecordState};
use idem_client::{
    Action, Attempt, Durability, Failure, Journal, JournalError, KeyUse, MemoryJournal, Method,
    Operation, OperationSpec, OutcomeKind, Persistence, Reply, RetryPolicy, StartError,
};
use rand_core::RngCore;
use serde_json::json;
use uuid::Uuid;

const NAME: &str = "checkout:cart-42";

/// A generator that always draws the same value: 0 gives the low end of each jitter range.
struct Constant(u64);

impl RngCore for Constant {
    fn next_u32(&mut self) -> u32 {
        self.0 as u32
    }
    fn next_u64(&mut self) -> u64 {
        self.0
    }
    fn fill_bytes(&mut self, dst: &mut [u8]) {
        dst.fill(self.0 as u8);
    }
}

/// One operation, its journal and its generator.
struct Harness {
    op: Operation,
    journal: MemoryJournal,
    rng: Constant,
}

fn key(n: u128) -> impl FnMut() -> Uuid {
    move || Uuid::from_u128(n)
}

fn spec() -> OperationSpec {
    OperationSpec::post(NAME, json!({ "amount": 1299, "currency": "EUR" }))
}

fn no_jitter() -> RetryPolicy {
    RetryPolicy {
        jitter: false,
        ..RetryPolicy::default()
    }
}

impl Harness {
    fn new(policy: RetryPolicy) -> Self {
        Self::with_journal(policy, MemoryJournal::new())
    }

    fn with_journal(policy: RetryPolicy, mut journal: MemoryJournal) -> Self {
        let op = Operation::start(spec(), policy, 0, &mut journal, &mut key(1)).unwrap();
        Harness {
            op,
            journal,
            rng: Constant(0),
        }
    }

    fn poll(&mut self, now: u64) -> Action {
        self.op.poll(now, &mut self.journal, &mut self.rng)
    }

    #[track_caller]
    fn expect_send(&mut self, now: u64) -> Attempt {
        match self.poll(now) {
            Action::Send(attempt) => attempt,
            other => panic!("expected Send at {now}, got {other:?}"),
        }
    }

    #[track_caller]
    fn expect_wait(&mut self, now: u64) -> u64 {
        match self.poll(now) {
            Action::WaitUntil(at) => at,
            other => panic!("expected WaitUntil at {now}, got {other:?}"),
        }
    }

    #[track_caller]
    fn expect_finished(&mut self, now: u64) -> idem_client::Outcome {
        match self.poll(now) {
            Action::Finished(outcome) => outcome,
            other => panic!("expected Finished at {now}, got {other:?}"),
        }
    }
}

fn problem(status: u16) -> Vec<u8> {
    format!(r#"{{"type":"about:blank","title":"t","status":{status},"detail":"d"}}"#).into_bytes()
}

#[test]
fn success_on_first_attempt_settles_the_record() {
    let mut h = Harness::new(RetryPolicy::default());
    let a = h.expect_send(0);
    assert_eq!(a.key, Some(Uuid::from_u128(1)));
    assert_eq!(a.body, br#"{"amount":1299,"currency":"EUR"}"#);
    assert_eq!((a.method, a.number, a.deadline), (Method::Post, 1, 10_000));
    h.op.handle_reply(5, Reply::new(201, "ok"));
    let outcome = h.expect_finished(5);
    assert_eq!(
        outcome.kind,
        OutcomeKind::Succeeded {
            status: 201,
            body: b"ok".to_vec()
        }
    );
    assert_eq!(
        outcome.key.as_deref(),
        Some("00000000-0000-0000-0000-000000000001")
    );
    assert_eq!(
        (outcome.attempts, outcome.durability),
        (1, Durability::Journaled)
    );
    // No open record is left; the settled entry (see tests/settled.rs) keeps no body.
    assert_eq!(h.journal.load(NAME).unwrap(), None);
    assert!(!h.journal.raw(NAME).unwrap().contains("amount"));
    // Finished is sticky.
    assert_eq!(h.expect_finished(100), outcome);
}

#[test]
fn replayed_header_gives_replayed() {
    let mut h = Harness::new(RetryPolicy::default());
    h.expect_send(0);
    h.op.handle_reply(5, Reply::new(200, "saved").replayed());
    let outcome = h.expect_finished(5);
    assert_eq!(
        outcome.kind,
        OutcomeKind::Replayed {
            status: 200,
            body: b"saved".to_vec()
        }
    );
}

#[test]
fn conflict_waits_retry_after_and_resends_the_same_key_and_bytes() {
    let mut h = Harness::new(RetryPolicy::default());
    let first = h.expect_send(0);
    h.op.handle_reply(10, Reply::new(409, problem(409)).with_retry_after_ms(2000));
    assert_eq!(h.expect_wait(10), 2010);
    assert_eq!(h.expect_wait(2009), 2010);
    let second = h.expect_send(2010);
    assert_eq!(
        (second.key, &second.body, second.number),
        (first.key, &first.body, 2)
    );
    h.op.handle_reply(2020, Reply::new(200, "ok"));
    assert!(matches!(
        h.expect_finished(2020).kind,
        OutcomeKind::Succeeded { .. }
    ));
}

#[test]
fn conflict_without_retry_after_backs_off() {
    let mut h = Harness::new(no_jitter());
    h.expect_send(0);
    h.op.handle_reply(10, Reply::new(409, ""));
    assert_eq!(h.expect_wait(10), 510);
}

#[test]
fn a_tiny_retry_after_waits_the_backoff_instead() {
    let mut h = Harness::new(no_jitter());
    let mut now = 0;
    let mut gaps = Vec::new();
    for _ in 0..6 {
        h.expect_send(now);
        h.op.handle_reply(now, Reply::new(409, problem(409)).with_retry_after_ms(0));
        let at = h.expect_wait(now);
        gaps.push(at - now);
        now = at;
    }
    // Floored at the initial backoff and growing as the backoff does, never 0.
    assert_eq!(gaps, [500, 1000, 2000, 4000, 5000, 5000]);
}

/// A server (a proxy) answering every attempt `409, Retry-After: 0` for an hour of virtual
/// time, with the default policy and jitter from a real generator: the attempts stay on the
/// policy's schedule.
#[test]
fn retry_after_zero_forever_is_not_a_tight_loop() {
    /// xorshift64*: varied draws, so jitter is exercised across its range.
    struct XorShift(u64);
    impl RngCore for XorShift {
        fn next_u32(&mut self) -> u32 {
            (self.next_u64() >> 32) as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        fn fill_bytes(&mut self, dst: &mut [u8]) {
            rand_core::impls::fill_bytes_via_next(self, dst)
        }
    }
    let mut journal = MemoryJournal::new();
    let policy = RetryPolicy::default();
    let mut op = Operation::start(spec(), policy.clone(), 0, &mut journal, &mut key(1)).unwrap();
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let (mut now, mut sends) = (0, Vec::new());
    while now < 3_600_000 {
        match op.poll(now, &mut journal, &mut rng) {
            Action::Send(_) => {
                sends.push(now);
                op.handle_reply(now + 5, Reply::new(409, "").with_retry_after_ms(0));
                now += 5;
            }
            Action::WaitUntil(at) => now = at,
            Action::Finished(outcome) => panic!("finished early: {outcome:?}"),
        }
    }
    let gaps: Vec<u64> = sends.windows(2).map(|w| w[1] - w[0]).collect();
    let min = *gaps.iter().min().unwrap();
    let steady = &gaps[5..];
    let mean = steady.iter().sum::<u64>() as f64 / steady.len() as f64;
    // Never faster than the floor; once at the cap, the jittered backoff [2.5 s, 5 s] plus
    // the 5 ms reply: about 3.75 s apart, about 960 attempts in the hour (not 720,000).
    assert!(min >= policy.initial_backoff_ms, "min gap {min}");
    assert!(
        steady.iter().all(|g| (2_505..=5_005).contains(g)),
        "{steady:?}"
    );
    assert!((3_500.0..=4_000.0).contains(&mean), "mean gap {mean}");
    assert!(
        (850..=1_100).contains(&sends.len()),
        "{} attempts",
        sends.len()
    );
}

#[test]
fn too_many_requests_waits_retry_after() {
    let mut h = Harness::new(RetryPolicy::default());
    h.expect_send(0);
    h.op.handle_reply(10, Reply::new(429, "").with_retry_after_ms(7000));
    assert_eq!(h.expect_wait(10), 7010);
    assert_eq!(h.expect_send(7010).number, 2);
}

#[test]
fn a_retry_after_beyond_the_window_gives_up_instead_of_retrying_sooner() {
    let mut h = Harness::new(no_jitter());
    h.expect_send(0);
    let huge = idem_client::parse_retry_after("99999999999999999999").unwrap();
    h.op.handle_reply(10, Reply::new(503, "").with_retry_after_ms(huge));
    let outcome = h.expect_finished(10);
    assert!(matches!(outcome.kind, OutcomeKind::Unknown { .. }));
    assert_eq!(outcome.attempts, 1);
}

#[test]
fn unprocessable_is_rejected_with_its_problem_and_never_retried() {
    let mut h = Harness::new(RetryPolicy::default());
    h.expect_send(0);
    h.op.handle_reply(10, Reply::new(422, problem(422)).with_retry_after_ms(1));
    let outcome = h.expect_finished(10);
    let OutcomeKind::Rejected {
        status, problem, ..
    } = &outcome.kind
    else {
        panic!("expected Rejected, got {outcome:?}");
    };
    assert_eq!(*status, 422);
    assert_eq!(problem.as_ref().and_then(|p| p.status), Some(422));
    assert_eq!(outcome.attempts, 1);
    assert_eq!(h.expect_finished(60_000), outcome);
    assert_eq!(h.journal.load(NAME).unwrap(), None);
}

#[test]
fn other_client_errors_are_rejected() {
    for status in [400, 401, 403, 404, 408, 410, 413] {
        let mut h = Harness::new(RetryPolicy::default());
        h.expect_send(0);
        h.op.handle_reply(10, Reply::new(status, "plain text"));
        let outcome = h.expect_finished(10);
        assert!(
            matches!(outcome.kind, OutcomeKind::Rejected { status: s, problem: None, .. } if s == status),
            "{status}: {outcome:?}"
        );
    }
}

#[test]
fn server_errors_network_errors_and_timeouts_retry_with_the_same_key() {
    let mut h = Harness::new(no_jitter());
    let first = h.expect_send(0);
    h.op.handle_reply(10, Reply::new(503, ""));
    assert_eq!(h.op.last_error(), Some(&Failure::Status { status: 503 }));
    assert_eq!(h.expect_wait(10), 510);
    let second = h.expect_send(510);
    h.op.handle_network_error(520, "connection reset");
    assert_eq!(h.expect_wait(520), 1520);
    let third = h.expect_send(1520);
    h.op.handle_timeout(11_520);
    assert_eq!(h.op.last_error(), Some(&Failure::Timeout));
    assert_eq!(h.expect_wait(11_520), 13_520);
    let fourth = h.expect_send(13_520);
    for a in [&second, &third, &fourth] {
        assert_eq!((a.key, &a.body), (first.key, &first.body));
    }
    assert_eq!(fourth.number, 4);
    h.op.handle_reply(13_600, Reply::new(500, ""));
    assert_eq!(h.expect_wait(13_600), 17_600);
}

#[test]
fn polling_past_the_deadline_counts_as_a_timeout() {
    let mut h = Harness::new(no_jitter());
    let a = h.expect_send(0);
    assert_eq!(h.expect_wait(5), a.deadline);
    // At the deadline the attempt times out and the backoff starts from then.
    assert_eq!(h.expect_wait(a.deadline), a.deadline + 500);
    assert_eq!(h.op.last_error(), Some(&Failure::Timeout));
}

#[test]
fn a_late_final_reply_is_still_an_answer() {
    let mut h = Harness::new(no_jitter());
    h.expect_send(0);
    h.op.handle_timeout(10_000);
    assert_eq!(h.expect_wait(10_000), 10_500);
    // A late retryable reply is ignored; a late success ends the operation.
    h.op.handle_reply(10_100, Reply::new(503, ""));
    assert_eq!(h.expect_wait(10_100), 10_500);
    h.op.handle_reply(10_200, Reply::new(201, "late"));
    assert!(matches!(
        h.expect_finished(10_200).kind,
        OutcomeKind::Succeeded { status: 201, .. }
    ));
}

#[test]
fn backoff_schedule_is_deterministic_with_an_injected_generator() {
    fn schedule(rng: u64, policy: RetryPolicy) -> Vec<u64> {
        let mut h = Harness::new(policy);
        h.rng = Constant(rng);
        let mut now = 0;
        let mut delays = Vec::new();
        for _ in 0..7 {
            h.expect_send(now);
            h.op.handle_reply(now, Reply::new(500, ""));
            let at = h.expect_wait(now);
            delays.push(at - now);
            now = at;
        }
        delays
    }
    assert_eq!(
        schedule(0, no_jitter()),
        [500, 1000, 2000, 4000, 5000, 5000, 5000]
    );
    // Jitter with a draw of 0: the low end [d/2], never below 500.
    assert_eq!(
        schedule(0, RetryPolicy::default()),
        [500, 500, 1000, 2000, 2500, 2500, 2500]
    );
    // Same generator, same schedule; another draw, another schedule within [d/2, d].
    assert_eq!(
        schedule(12_345, RetryPolicy::default()),
        schedule(12_345, RetryPolicy::default())
    );
    for (d, base) in schedule(12_345, RetryPolicy::default())
        .iter()
        .zip([500, 1000, 2000, 4000, 5000])
    {
        assert!((base / 2..=base).contains(d) && *d >= 500, "{d} for {base}");
    }
}

#[test]
fn retry_window_closes_into_unknown_and_keeps_the_record() {
    let policy = RetryPolicy {
        retry_window_ms: 3_000,
        ..no_jitter()
    };
    let mut h = Harness::new(policy);
    let mut now = 0;
    // 500 + 1000 + 2000 = 3500 > 3000: the third backoff would end past the window.
    for _ in 0..2 {
        h.expect_send(now);
        h.op.handle_network_error(now, "lost");
        now = h.expect_wait(now);
    }
    h.expect_send(now);
    h.op.handle_network_error(now, "lost again");
    let outcome = h.expect_finished(now);
    let lost = Failure::Network {
        message: "lost again".into(),
    };
    assert_eq!(
        outcome.kind,
        OutcomeKind::Unknown {
            last_error: Some(lost.clone())
        }
    );
    assert_eq!(outcome.attempts, 3);
    assert_eq!(
        outcome.key.as_deref(),
        Some(Uuid::from_u128(1).to_string().as_str())
    );
    let record = h
        .journal
        .load(NAME)
        .unwrap()
        .expect("unknown outcomes keep their record");
    assert_eq!(
        record.state,
        RecordState::Unknown {
            last_error: Some(lost)
        }
    );
    assert_eq!((record.key, record.attempts), (Uuid::from_u128(1), 3));
}

#[test]
fn resuming_an_unknown_past_its_window_sends_nothing() {
    let policy = RetryPolicy {
        retry_window_ms: 1_000,
        ..no_jitter()
    };
    let mut h = Harness::new(policy.clone());
    h.expect_send(0);
    h.op.handle_timeout(900);
    assert!(matches!(
        h.expect_finished(900).kind,
        OutcomeKind::Unknown { .. }
    ));
    let mut op = Operation::start(spec(), policy, 5_000, &mut h.journal, &mut key(2)).unwrap();
    assert_eq!(op.key(), Some(Uuid::from_u128(1)));
    let outcome = match op.poll(5_000, &mut h.journal, &mut h.rng) {
        Action::Finished(outcome) => outcome,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        outcome.kind,
        OutcomeKind::Unknown {
            last_error: Some(Failure::Timeout)
        }
    );
}

#[test]
fn max_attempts_ends_in_unknown() {
    let policy = RetryPolicy {
        max_attempts: Some(2),
        ..no_jitter()
    };
    let mut h = Harness::new(policy);
    h.expect_send(0);
    h.op.handle_reply(0, Reply::new(502, ""));
    let at = h.expect_wait(0);
    h.expect_send(at);
    h.op.handle_reply(at, Reply::new(502, ""));
    let at = h.expect_wait(at);
    let outcome = h.expect_finished(at);
    assert_eq!(outcome.attempts, 2);
    assert!(matches!(
        outcome.kind,
        OutcomeKind::Unknown {
            last_error: Some(Failure::Status { status: 502 })
        }
    ));
}

#[test]
fn key_is_persisted_before_the_first_send() {
    let mut journal = MemoryJournal::new();
    let op = Operation::start(
        spec(),
        RetryPolicy::default(),
        42,
        &mut journal,
        &mut key(7),
    )
    .unwrap();
    let record = journal
        .load(NAME)
        .unwrap()
        .expect("written by start, before any poll");
    assert_eq!(record.key, Uuid::from_u128(7));
    assert_eq!(record.body, op.payload().json);
    assert_eq!(record.fingerprint, op.payload().fingerprint);
    assert_eq!(
        (record.attempts, record.created_at, record.version),
        (0, 42, 1)
    );
    assert_eq!(record.state, RecordState::Pending);
}

#[test]
fn a_journal_that_fails_writes_means_no_send() {
    let mut journal = MemoryJournal::new();
    journal.fail_writes(Some(JournalError::QuotaExceeded));
    let mut minted = 0;
    let result = Operation::start(spec(), RetryPolicy::default(), 0, &mut journal, &mut || {
        minted += 1;
        Uuid::from_u128(1)
    });
    assert!(
        matches!(
            result,
            Err(StartError::NotPersisted(JournalError::QuotaExceeded))
        ),
        "{result:?}"
    );
    assert_eq!(journal.names().unwrap(), Vec::<String>::new());
}

#[test]
fn memory_only_mode_sends_and_says_so() {
    let mut journal = MemoryJournal::new();
    journal.fail_writes(Some(JournalError::Unavailable("SecurityError".into())));
    let spec = spec().with_persistence(Persistence::AllowMemoryOnly);
    let op = Operation::start(spec, RetryPolicy::default(), 0, &mut journal, &mut key(1)).unwrap();
    let mut h = Harness {
        op,
        journal,
        rng: Constant(0),
    };
    assert_eq!(h.op.durability(), Durability::MemoryOnly);
    h.expect_send(0);
    h.op.handle_reply(1, Reply::new(200, ""));
    assert_eq!(h.expect_finished(1).durability, Durability::MemoryOnly);
}

#[test]
fn resume_after_reload_keeps_key_bytes_and_attempts() {
    let mut h = Harness::new(no_jitter());
    let first = h.expect_send(0);
    h.op.handle_network_error(10, "lost");
    h.expect_wait(10);
    let second = h.expect_send(510);
    // Reload: the operation in memory is gone; the journal survives.
    let mut journal = h.journal;
    drop(h.op);
    // Same payload, other key order: still the same operation.
    let again = OperationSpec::post(NAME, json!({ "currency": "EUR", "amount": 1299 }));
    let mut op = Operation::start(again, no_jitter(), 60_000, &mut journal, &mut key(99)).unwrap();
    assert_eq!(
        (op.key(), op.attempts(), op.created_at()),
        (first.key, 2, 0)
    );
    let third = match op.poll(60_000, &mut journal, &mut Constant(0)) {
        Action::Send(a) => a,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        (third.key, &third.body, third.number),
        (second.key, &second.body, 3)
    );
    assert_eq!(journal.load(NAME).unwrap().map(|r| r.attempts), Some(3));
    // Resume by name alone (what `pending()` offers after a reload).
    let op = Operation::resume(NAME, no_jitter(), &journal)
        .unwrap()
        .expect("pending");
    assert_eq!(
        (op.key(), op.payload().json.as_bytes()),
        (first.key, &first.body[..])
    );
    assert!(Operation::resume("checkout:other", no_jitter(), &journal)
        .unwrap()
        .is_none());
}

#[test]
fn a_different_payload_while_pending_is_an_error() {
    let mut h = Harness::new(RetryPolicy::default());
    h.expect_send(0);
    let other = OperationSpec::post(NAME, json!({ "amount": 1, "currency": "EUR" }));
    let result = Operation::start(
        other,
        RetryPolicy::default(),
        5,
        &mut h.journal,
        &mut key(2),
    );
    let Err(StartError::PendingWithDifferentPayload { name, key: pending }) = result else {
        panic!("expected PendingWithDifferentPayload, got {result:?}");
    };
    assert_eq!(
        (name.as_str(), pending),
        (NAME, Uuid::from_u128(1).to_string())
    );
    // The pending record is untouched.
    assert_eq!(
        h.journal.load(NAME).unwrap().map(|r| r.key),
        Some(Uuid::from_u128(1))
    );
    // A different method is a different operation too.
    let patch = spec().with_method(Method::Patch);
    assert!(Operation::start(
        patch,
        RetryPolicy::default(),
        5,
        &mut h.journal,
        &mut key(3)
    )
    .is_err());
}

#[test]
fn a_corrupt_record_is_not_overwritten() {
    let mut journal = MemoryJournal::new();
    journal.insert_raw(NAME, "{not ours");
    let result = Operation::start(spec(), RetryPolicy::default(), 0, &mut journal, &mut key(1));
    assert!(
        matches!(
            result,
            Err(StartError::Unreadable(JournalError::Corrupt { .. }))
        ),
        "{result:?}"
    );
    assert_eq!(journal.raw(NAME), Some("{not ours"));
    let listed = journal::pending(&journal).unwrap();
    assert_eq!(
        listed,
        vec![Err(JournalError::Corrupt { name: NAME.into() })]
    );
}

#[test]
fn idempotent_methods_go_without_key_unless_asked() {
    for method in [Method::Get, Method::Head, Method::Put, Method::Delete] {
        let mut journal = MemoryJournal::new();
        journal.fail_writes(Some(JournalError::QuotaExceeded));
        let spec = spec().with_method(method);
        let mut op =
            Operation::start(spec, RetryPolicy::default(), 0, &mut journal, &mut key(1)).unwrap();
        assert_eq!((op.key(), op.durability()), (None, Durability::Unkeyed));
        let Action::Send(a) = op.poll(0, &mut journal, &mut Constant(0)) else {
            panic!()
        };
        assert_eq!(a.key, None);
        assert_eq!(a.body.is_empty(), !method.has_body(), "{method:?}");
    }
    for method in [Method::Post, Method::Patch] {
        let mut journal = MemoryJournal::new();
        let op = Operation::start(
            spec().with_method(method),
            RetryPolicy::default(),
            0,
            &mut journal,
            &mut key(1),
        )
        .unwrap();
        assert_eq!(op.key(), Some(Uuid::from_u128(1)));
    }
    let mut journal = MemoryJournal::new();
    let delete = spec()
        .with_method(Method::Delete)
        .with_key_use(KeyUse::Always);
    let op =
        Operation::start(delete, RetryPolicy::default(), 0, &mut journal, &mut key(5)).unwrap();
    assert_eq!(
        (op.key(), op.durability()),
        (Some(Uuid::from_u128(5)), Durability::Journaled)
    );
}

#[test]
fn keys_from_an_injected_generator_are_v4_and_reproducible() {
    let mut a = Constant(3);
    let mut b = Constant(3);
    let ka = idem_client::KeyMinter::mint(&mut idem_client::RngKeys(&mut a));
    let kb = idem_client::KeyMinter::mint(&mut idem_client::RngKeys(&mut b));
    assert_eq!(ka, kb);
    assert_eq!(ka.get_version_num(), 4);
}

/// Every keyed attempt says when the operation was first sent (its creation, journaled just
/// before): the same date on each retry and after a reload, the header's HTTP-date.
#[test]
fn every_attempt_carries_the_first_sent_time_across_retries_and_reloads() {
    let created = 1_733_140_000_123; // Mon, 02 Dec 2024 11:46:40.123 GMT
    let mut journal = MemoryJournal::new();
    let mut op = Operation::start(spec(), no_jitter(), created, &mut journal, &mut key(1)).unwrap();
    let mut rng = Constant(0);
    let Action::Send(first) = op.poll(created + 5, &mut journal, &mut rng) else {
        panic!("a first send")
    };
    assert_eq!(first.first_sent, created);
    let header = first.first_sent_header().expect("keyed: a header");
    assert_eq!(header, "Mon, 02 Dec 2024 11:46:40 GMT");
    op.handle_network_error(created + 10, "lost");
    let retry = loop {
        match op.poll(created + 5_000, &mut journal, &mut rng) {
            Action::Send(a) => break a,
            Action::WaitUntil(_) => continue,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(retry.first_sent_header().as_deref(), Some(&header[..]));
    // After a reload, from the journal.
    drop(op);
    let mut op = Operation::resume(NAME, no_jitter(), &journal)
        .unwrap()
        .unwrap();
    let Action::Send(resumed) = op.poll(created + 9_000, &mut journal, &mut rng) else {
        panic!("a resumed send")
    };
    assert_eq!(resumed.number, 3);
    assert_eq!(resumed.first_sent_header(), Some(header));
    // An unkeyed attempt carries none.
    let unkeyed = Attempt {
        key: None,
        ..resumed
    };
    assert_eq!(unkeyed.first_sent_header(), None);
}

/// The expired-key guard's 412: unknown for good with the reason, no retry, the record kept
/// (format 3) under the same key, and a new submit of the same payload resumes that key.
#[test]
fn a_key_expired_answer_is_an_unknown_outcome_kept_under_the_same_key() {
    let mut h = Harness::new(no_jitter());
    let first = h.expect_send(0);
    h.op.handle_reply(10, Reply::new(412, problem(412)));
    let outcome = h.expect_finished(10);
    assert_eq!(
        outcome.kind,
        OutcomeKind::Unknown {
            last_error: Some(Failure::KeyExpired)
        }
    );
    assert_eq!(outcome.attempts, 1, "never retried");
    let record = h.journal.load(NAME).unwrap().expect("kept to reconcile");
    assert_eq!(record.version, journal::KEY_EXPIRED_FORMAT_VERSION);
    assert_eq!(
        record.state,
        RecordState::Unknown {
            last_error: Some(Failure::KeyExpired)
        }
    );
    assert!(h
        .journal
        .raw(NAME)
        .unwrap()
        .contains(r#""type":"keyExpired""#));
    // The same payload again: the same key, never a new one.
    let op = Operation::start(spec(), no_jitter(), 20, &mut h.journal, &mut key(2)).unwrap();
    assert_eq!(op.key(), first.key);
}
