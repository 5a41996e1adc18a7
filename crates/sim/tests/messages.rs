//! The message log: every message's fate (sent, lost, duplicated, late, answered) and what each
//! party did at its arrival, read back as a sequence diagram would; and the replies a page sees
//! come from the store's HTTP answers through the client's own conversion (`Retry-After`,
//! `Idempotent-Replayed` read from headers).
#![cfg(not(target_arch = "wasm32"))]

use idem_sim::{
    CheckoutId, CheckoutOutcome, Decision, Fate, Faults, History, Message, MessageKind,
    PaycoDecision, SimConfig, Step, StepKind, Strategy, WorkEnd, World,
};

/// A quiet world with no scripted checkouts: latency 20 ms, no jitter, nothing lost.
fn quiet() -> World {
    let mut config = SimConfig::default();
    config.workload.orders = 0;
    config.faults = Faults {
        jitter_ms: 0,
        ..Faults::default()
    };
    World::new(config)
}

fn requests(h: &History, c: CheckoutId) -> Vec<(u32, &Message)> {
    h.messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.checkout == c && matches!(m.kind, MessageKind::Request { .. }))
        .map(|(i, m)| (i as u32, m))
        .collect()
}

fn responses_to(h: &History, request: u32) -> Vec<&Message> {
    h.messages
        .iter()
        .filter(|m| matches!(m.kind, MessageKind::Response { request: r, .. } if r == request))
        .collect()
}

fn decisions_for(h: &History, request: u32) -> Vec<Decision> {
    h.steps
        .iter()
        .filter_map(|s| match s.kind {
            StepKind::Decided {
                request: r,
                decision,
            } if r == request => Some(decision),
            _ => None,
        })
        .collect()
}

fn steps(h: &History) -> impl Iterator<Item = &Step> {
    h.steps.iter()
}

#[test]
fn a_lost_response_and_its_replay_read_as_a_sequence_diagram() {
    let mut w = quiet();
    w.drop_next_response();
    let c = w.start_checkout(Strategy::SameKey).unwrap();
    w.finish();
    let h = w.history();
    let key = h.checkouts[0].key.expect("a same-key checkout has a key");

    // The key is in the journal before the first request leaves.
    let journaled = steps(h)
        .find(|s| matches!(s.kind, StepKind::Journaled { key: k } if k == key))
        .expect("the journal write is recorded");
    let sent = requests(h, c);
    assert_eq!(sent.len(), 2, "the first attempt and its retry");
    assert!(journaled.at <= sent[0].1.sent_at);
    assert_eq!(steps(h).position(|s| s == journaled), Some(0));

    // First attempt: arrives after the latency, claimed, charged, saved, answer lost.
    let (first, m) = sent[0];
    assert_eq!(m.attempt, 1);
    assert_eq!(m.fate, Fate::Delivered { at: m.sent_at + 20 });
    assert!(matches!(
        decisions_for(h, first)[..],
        [Decision::Claimed { .. }]
    ));
    let answer = responses_to(h, first);
    assert_eq!(answer.len(), 1);
    assert_eq!(answer[0].fate, Fate::Lost);
    assert!(steps(h).any(|s| matches!(
        s.kind,
        StepKind::Paid {
            decision: PaycoDecision::Charged { .. },
            ..
        }
    )));
    assert!(steps(h).any(|s| matches!(
        s.kind,
        StepKind::Worked { request, end: WorkEnd::Saved { status: 201 } } if request == first
    )));

    // The retry: replayed, answered, and the page reports a replay (read from the header).
    let (retry, m) = sent[1];
    assert_eq!(m.attempt, 2);
    assert_eq!(decisions_for(h, retry), [Decision::Replayed]);
    let answer = responses_to(h, retry);
    assert!(matches!(
        answer[..],
        [Message {
            kind: MessageKind::Response {
                status: 201,
                replayed: true,
                ..
            },
            fate: Fate::Delivered { .. },
            late: false,
            ..
        }]
    ));
    assert!(matches!(
        h.checkouts[0].outcome,
        CheckoutOutcome::Paid { replayed: true, .. }
    ));
}

#[test]
fn a_duplicated_request_arrives_twice_and_gets_two_decisions() {
    let mut config = SimConfig::default();
    config.workload.orders = 0;
    config.faults = Faults {
        duplicate: 1.0,
        ..Faults::default()
    };
    let mut w = World::new(config);
    let c = w.start_checkout(Strategy::SameKey).unwrap();
    w.finish();
    let h = w.history();
    let (first, m) = requests(h, c)[0];
    let Fate::Duplicated { at, again } = m.fate else {
        panic!("not duplicated: {:?}", m.fate)
    };
    assert!(at >= m.sent_at + 20 && again >= m.sent_at + 20);
    let decisions = decisions_for(h, first);
    assert_eq!(decisions.len(), 2, "{decisions:?}");
    assert!(decisions.contains(&Decision::InFlight) || decisions.contains(&Decision::Replayed));
    assert_eq!(responses_to(h, first).len(), 2, "each copy is answered");
}

#[test]
fn a_response_after_the_timeout_is_late_and_a_409_waits_its_retry_after() {
    // The worker outlives the page's 1 s timeout and its 2 s lease: the retry meets the live
    // claim (409 with Retry-After), and the slow worker's own answer arrives late.
    let mut w = quiet();
    w.slow_next_worker();
    let c = w.start_checkout(Strategy::SameKey).unwrap();
    w.finish();
    let h = w.history();
    let sent = requests(h, c);
    let conflict = sent
        .iter()
        .find(|(i, _)| decisions_for(h, *i).contains(&Decision::InFlight))
        .map(|(i, _)| *i)
        .expect("a retry met the live claim");
    let answer = responses_to(h, conflict)[0];
    assert!(matches!(
        answer.kind,
        MessageKind::Response { status: 409, .. }
    ));
    let Fate::Delivered { at: heard } = answer.fate else {
        panic!("the 409 was not delivered")
    };
    // The 409's Retry-After, as the store writes it (whole seconds, rounded up), is the wait
    // the page's operation kept before its next attempt.
    let store_wait = {
        let lease_left = w
            .store()
            .events()
            .find_map(|e| match e.kind() {
                idem_store::EventKind::Rejected {
                    reason: idem_store::Rejection::InFlight { retry_after_ms },
                    ..
                } => Some(*retry_after_ms),
                _ => None,
            })
            .expect("the store logged the 409");
        idem_store::http::retry_after_secs(lease_left) * 1000
    };
    let next = sent
        .iter()
        .find(|(_, m)| m.sent_at > heard)
        .expect("the page retried after the 409");
    assert_eq!(next.1.sent_at - heard, store_wait);

    let first = sent[0].0;
    let slow_answer = responses_to(h, first)[0];
    assert!(slow_answer.late, "the first attempt had timed out");
    assert!(
        !sent[0].1.late,
        "the first request arrived while the page waited"
    );
}

#[test]
fn paycos_calls_and_answers_are_messages_between_server_and_payco() {
    let mut w = quiet();
    w.crash_next_after_charge();
    let c = w.start_checkout(Strategy::SameKey).unwrap();
    w.finish();
    let h = w.history();
    let calls: Vec<&Message> = h
        .messages
        .iter()
        .filter(|m| matches!(m.kind, MessageKind::Charge { .. }))
        .collect();
    assert_eq!(
        calls.len(),
        2,
        "the crashed worker's call and the takeover's"
    );
    assert!(calls.iter().all(|m| m.checkout == c));
    let decisions: Vec<PaycoDecision> = steps(h)
        .filter_map(|s| match s.kind {
            StepKind::Paid { decision, .. } => Some(decision),
            _ => None,
        })
        .collect();
    assert!(matches!(
        decisions[..],
        [
            PaycoDecision::Charged { charge },
            PaycoDecision::Deduped { charge: Some(again) }
        ] if charge == again
    ));
    assert!(steps(h).any(|s| matches!(
        s.kind,
        StepKind::Worked {
            end: WorkEnd::Crashed,
            ..
        }
    )));
    assert!(steps(h).any(|s| matches!(
        s.kind,
        StepKind::Decided {
            decision: Decision::TakenOver { .. },
            ..
        }
    )));
}

#[test]
fn a_lost_request_is_cut_at_the_network_and_nothing_decides_it() {
    let mut w = quiet();
    w.drop_next_request();
    let c = w.start_checkout(Strategy::NoKey).unwrap();
    w.finish();
    let h = w.history();
    let (lost, m) = requests(h, c)[0];
    assert_eq!(m.fate, Fate::Lost);
    assert!(decisions_for(h, lost).is_empty());
    assert!(responses_to(h, lost).is_empty());
    let (retry, _) = requests(h, c)[1];
    assert_eq!(decisions_for(h, retry), [Decision::Unkeyed]);
}

/// Each response's HTTP is kept as the server wrote it, by the response's message id: the
/// 409 with its Retry-After, the first 201 with the receipt, the replay with
/// Idempotent-Replayed and the same body.
#[test]
fn each_response_keeps_the_http_the_server_wrote() {
    let mut w = quiet();
    w.slow_next_worker();
    let c = w.start_checkout(Strategy::SameKey).unwrap();
    w.run_until(10_000);
    // The page sends the request again once the answer is saved: the store replays it.
    w.resend_same_cart(c).unwrap();
    w.finish();
    let h = w.history();
    let mut seen = Vec::new();
    for (i, m) in h.messages.iter().enumerate() {
        let MessageKind::Response {
            status, replayed, ..
        } = m.kind
        else {
            assert!(
                h.response_http(i as u32).is_none(),
                "only responses have HTTP"
            );
            continue;
        };
        let http = h.response_http(i as u32).expect("every response is kept");
        assert_eq!(http.status, status);
        let header = |n| http.header(n).map(str::to_owned);
        assert_eq!(
            header(idem_store::http::IDEMPOTENT_REPLAYED).is_some(),
            replayed
        );
        if status == 409 {
            let wait: u64 = header("Retry-After").unwrap().parse().unwrap();
            assert!(wait >= 1, "{http:?}");
        }
        seen.push((status, replayed, http.body.clone()));
    }
    assert!(seen.iter().any(|s| s.0 == 409), "{seen:?}");
    let first = seen
        .iter()
        .find(|s| s.0 == 201 && !s.1)
        .expect("the first 201");
    let replay = seen.iter().find(|s| s.0 == 201 && s.1).expect("a replay");
    assert_eq!(
        first.2, replay.2,
        "a replay is the saved body, byte for byte"
    );
    let receipt = idem_sim::Receipt::from_body(&first.2).expect("a receipt");
    assert_eq!(receipt.amount, w.checkout(c).unwrap().amount);
}
