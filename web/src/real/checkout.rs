//! Pay in real mode: one idem-client `Operation` per checkout, journaled in the real
//! localStorage before its first attempt, driven by the SDK's `fetch` driver against
//! idem-server's `/api/checkout`; every attempt recorded as it goes ([`Exchange`]); an unknown
//! outcome reconciled through the key-state endpoint (`GET /api/keys/{key}`), as the SDK's
//! `reconcile(name)` does. No retry, classification or wire rule is decided here: the
//! `Operation` decides, `Reply::from_http` reads the wire.

use std::rc::Rc;

use idem_client::{
    journal, CanonicalPayload, KeyState, Operation, OperationSpec, Outcome, OutcomeKind,
    RandomKeys, RecordState,
};
use yew::platform::spawn_local;

use super::trace::ended_as;
use super::wire::{self, Step};
use super::{key_text, policy, Real, ASK_MS};
use crate::model::cart::AMOUNT;
use crate::model::real::{Answer, CheckoutState, Exchange, Link, RealCheckout, Reconciled};

/// The request body of checkout `cart`, in canonical JSON (members sorted, no whitespace): the
/// bytes every attempt sends.
pub fn payload(cart: &str, card: &str) -> String {
    [
        "{\"amount\":",
        &AMOUNT.to_string(),
        ",\"card\":\"",
        card,
        "\",\"cart\":\"",
        cart,
        "\"}",
    ]
    .concat()
}

/// How an outcome shows.
fn state_of(outcome: &Outcome) -> CheckoutState {
    match &outcome.kind {
        OutcomeKind::Succeeded { .. } => CheckoutState::Paid { replayed: false },
        OutcomeKind::Replayed { .. } => CheckoutState::Paid { replayed: true },
        OutcomeKind::Rejected { status, .. } => CheckoutState::Refused(*status),
        OutcomeKind::Unknown { .. } => CheckoutState::Unknown,
    }
}

impl Real {
    /// Pay: a new checkout, unless the last one is still running (then nothing: its own
    /// retries carry on under its key).
    pub fn pay(&self) {
        let (name, body, prefix) = {
            let mut st = self.0.state.borrow_mut();
            let busy = st
                .checkouts
                .last()
                .is_some_and(|c| c.state == CheckoutState::Pending);
            if !st.on || st.link != Link::Up || busy {
                return;
            }
            st.started += 1;
            st.save_tenant();
            let name = ["co_", &st.started.to_string()].concat();
            let card = if std::mem::take(&mut st.decline_next) {
                "tok_decline"
            } else {
                "tok_visa"
            };
            (name.clone(), payload(&name, card), wire::prefix(&st.tenant))
        };
        let mut journal = wire::journal(&prefix);
        let spec = OperationSpec::post_canonical(name, CanonicalPayload::from_canonical(body));
        match Operation::start(
            spec,
            policy(),
            wire::now_ms(),
            &mut journal,
            &mut RandomKeys,
        ) {
            Ok(op) => self.drive(op, journal),
            Err(e) => {
                self.0.state.borrow_mut().notice = Some(e.message());
                self.refresh();
            }
        }
    }

    /// After a reload: every record of this session's journal is one of its checkouts again, so
    /// the counters and panels show what the browser holds, not what this page load saw. Settled
    /// ones come back with their status; open ones resume (pending ones are sent again under
    /// their key; unknown ones wait to be reconciled). A checkout whose settled record the
    /// journal has already let go (its retry window passed) comes back from the page's kept
    /// attempts (`seen.rs`), settled as its last answer says. The attempts each had sent are the
    /// journal's count where it is larger than the kept attempts (which a full storage may have
    /// cut short).
    pub(super) fn resume_pending(&self) {
        let prefix = wire::prefix(&self.0.state.borrow().tenant);
        let journal = wire::journal(&prefix);
        let mut entries: Vec<Restored> = journal::settled(&journal, wire::now_ms())
            .unwrap_or_default()
            .into_iter()
            .map(Restored::Settled)
            .collect();
        // Unreadable entries are left alone (the SDK never resumes them either).
        entries.extend(
            journal::pending(&journal)
                .unwrap_or_default()
                .into_iter()
                .filter_map(Result::ok)
                .map(Restored::Open),
        );
        // Newest attempt first, so each checkout found is found by its last attempt, its last
        // word.
        let kept = self.0.state.borrow().exchanges.clone();
        for x in kept.iter().rev() {
            if !entries.iter().any(|e| e.name() == x.checkout) {
                entries.push(Restored::Kept(x.clone()));
            }
        }
        // Oldest first, so the newest (`co_10` after `co_9`) is last: the one the panels show.
        // Picked one by one rather than sorted: a sort's code per element type costs the bundle
        // kilobytes.
        let number = |e: &Restored| e.name().get(3..).and_then(|n| n.parse::<u32>().ok());
        while let Some(oldest) = (0..entries.len()).min_by_key(|&i| number(&entries[i])) {
            let entry = entries.remove(oldest);
            let known = self
                .0
                .state
                .borrow()
                .checkouts
                .iter()
                .any(|c| c.name == entry.name());
            if known {
                continue;
            }
            let (name, key, attempts, state) = match entry {
                Restored::Kept(x) => {
                    let state = match ended_as(&x.answer) {
                        // Not settled by its last answer, and no record left: never to be known
                        // from here (the SDK's own `unknown`).
                        CheckoutState::Pending => CheckoutState::Unknown,
                        state => state,
                    };
                    self.0.state.borrow_mut().checkouts.push(RealCheckout {
                        name: x.checkout,
                        key: x.key,
                        state,
                        reconciled: None,
                    });
                    continue;
                }
                Restored::Settled(s) => {
                    let state = if (200..300).contains(&s.status) {
                        CheckoutState::Paid { replayed: false }
                    } else {
                        CheckoutState::Refused(s.status)
                    };
                    (s.name, s.key, s.attempts, Some(state))
                }
                Restored::Open(r) => {
                    let state = matches!(r.state, RecordState::Unknown { .. })
                        .then_some(CheckoutState::Unknown);
                    (r.name, r.key, r.attempts, state)
                }
            };
            let shown = kept.iter().filter(|x| x.checkout == name).count() as u32;
            self.0.state.borrow_mut().attempts_restored += attempts.saturating_sub(shown);
            if let Some(state) = state {
                self.0.state.borrow_mut().checkouts.push(RealCheckout {
                    name,
                    key: key_text(key),
                    state,
                    reconciled: None,
                });
                continue;
            }
            let journal = wire::journal(&prefix);
            if let Ok(Some(op)) = Operation::resume(&name, policy(), &journal) {
                self.drive(op, journal);
            }
        }
    }

    /// Runs `op` to its outcome in a task of its own, recording each step.
    fn drive(&self, mut op: Operation, mut journal: wire::PageJournal) {
        let name = op.name().to_owned();
        let key = op.key().map(key_text).unwrap_or_default();
        {
            let mut st = self.0.state.borrow_mut();
            st.checkouts.push(RealCheckout {
                name: name.clone(),
                key,
                state: CheckoutState::Pending,
                reconciled: None,
            });
        }
        self.refresh();
        let real = self.clone();
        spawn_local(async move {
            let (url, headers) = {
                let st = real.0.state.borrow();
                ([st.server.as_str(), "/api/checkout"].concat(), st.headers())
            };
            let mut observe = |at: u64, step: Step<'_>| real.record(&name, at, step);
            let outcome = wire::run(&mut op, &url, &headers, &mut journal, &mut observe).await;
            let state = state_of(&outcome);
            real.set_state(&name, state, None);
            if state == CheckoutState::Unknown {
                real.reconcile(name);
            }
        });
    }

    /// One step of a checkout's attempts, into the record of what was sent and received.
    fn record(&self, name: &str, at: u64, step: Step<'_>) {
        let mut st = self.0.state.borrow_mut();
        note_step(Rc::make_mut(&mut st.exchanges), name, at, step);
        st.unsaved = true;
        drop(st);
        self.refresh_soon();
    }

    fn set_state(&self, name: &str, state: CheckoutState, reconciled: Option<Reconciled>) {
        let mut st = self.0.state.borrow_mut();
        if let Some(c) = st.checkouts.iter_mut().find(|c| c.name == name) {
            c.state = state;
            if reconciled.is_some() {
                c.reconciled = reconciled;
            }
        }
        drop(st);
        self.refresh_soon();
    }

    /// Asks the key-state endpoint what became of checkout `name`'s key and settles it from the
    /// answer (done: the saved answer; in flight, released or not found: it stays unknown).
    pub fn reconcile(&self, name: String) {
        let (prefix, server, headers) = {
            let st = self.0.state.borrow();
            (wire::prefix(&st.tenant), st.server.clone(), st.headers())
        };
        self.set_state(&name, CheckoutState::Unknown, Some(Reconciled::Asking));
        let real = self.clone();
        spawn_local(async move {
            let mut journal = wire::journal(&prefix);
            let (state, answer) = match Operation::resume(&name, policy(), &journal) {
                Ok(Some(mut op)) => {
                    let key = op.key().map(key_text).unwrap_or_default();
                    let url = [server.as_str(), "/api/keys/", &key].concat();
                    let deadline = wire::now_ms() + ASK_MS;
                    let asked =
                        wire::reconcile(&mut op, &url, &headers, &mut journal, deadline).await;
                    let state = op.outcome().map_or(CheckoutState::Unknown, state_of);
                    (state, reconciled(asked))
                }
                _ => (
                    CheckoutState::Unknown,
                    Reconciled::Failed("nothing open under this checkout's name".into()),
                ),
            };
            real.set_state(&name, state, Some(answer));
        });
    }
}

/// One step of checkout `name`'s attempts into `exchanges`: an attempt that leaves is a new
/// exchange; its reply, timeout or transport error completes the last one of that checkout; a
/// wait changes nothing.
fn note_step(exchanges: &mut Vec<Exchange>, name: &str, at: u64, step: Step<'_>) {
    let answer = match step {
        Step::Sent(attempt) => {
            exchanges.push(Exchange {
                checkout: name.to_owned(),
                number: attempt.number,
                key: attempt.key.map(key_text).unwrap_or_default(),
                sent_at: at,
                body: super::text(&attempt.body).to_owned(),
                answer: Answer::Open,
            });
            return;
        }
        Step::Answered(reply) => Answer::Reply {
            at,
            status: reply.status,
            replayed: reply.replayed,
            retry_after_ms: reply.retry_after_ms,
            body: super::text(&reply.body).to_owned(),
        },
        Step::TimedOut => Answer::TimedOut { at },
        Step::Failed(message) => Answer::Failed {
            at,
            message: message.to_owned(),
        },
        Step::Waiting(_) => return,
    };
    if let Some(e) = exchanges.iter_mut().rev().find(|e| e.checkout == name) {
        e.answer = answer;
    }
}

/// The key-state answer as the page shows it.
fn reconciled(asked: Result<KeyState, String>) -> Reconciled {
    match asked {
        Ok(KeyState::Done { status, .. }) => Reconciled::Done(status),
        Ok(KeyState::InFlight {
            lease_age_ms,
            lease_left_ms,
        }) => Reconciled::InFlight {
            lease_age_ms,
            lease_left_ms,
        },
        Ok(KeyState::Released) => Reconciled::Released,
        Ok(KeyState::NotFound) => Reconciled::NotFound,
        Ok(KeyState::BoundToAnotherRequest) => Reconciled::AnotherRequest,
        Err(why) => Reconciled::Failed(why),
    }
}

/// A checkout of this session found after a reload: in the journal, or only in the page's
/// kept attempts (its last one).
enum Restored {
    Settled(journal::SettledRecord),
    Open(journal::Record),
    Kept(Exchange),
}

impl Restored {
    fn name(&self) -> &str {
        match self {
            Restored::Settled(s) => &s.name,
            Restored::Open(r) => &r.name,
            Restored::Kept(x) => &x.checkout,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_is_canonical_json() {
        let body = payload("co_3", "tok_visa");
        assert_eq!(body, r#"{"amount":2590,"card":"tok_visa","cart":"co_3"}"#);
        // RFC 8785's form is what serde_json_canonicalizer writes.
        let value: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!(serde_json_canonicalizer::to_string(&value).unwrap(), body);
    }

    #[test]
    fn every_attempt_is_recorded_with_what_came_back() {
        use idem_client::{Attempt, Method, Reply};
        let key = uuid::Uuid::from_u128(0x0123_4567_89ab_4cde_8f01_2345_6789_abcd);
        let attempt = |number| Attempt {
            first_sent: 0,
            key: Some(key),
            method: Method::Post,
            body: payload("co_1", "tok_visa").into_bytes(),
            number,
            deadline: 0,
        };
        let mut ex = Vec::new();
        note_step(&mut ex, "co_1", 10, Step::Sent(&attempt(1)));
        note_step(&mut ex, "co_2", 11, Step::Sent(&attempt(1)));
        note_step(
            &mut ex,
            "co_1",
            20,
            Step::Answered(&Reply::new(503, "").with_retry_after_ms(1_000)),
        );
        note_step(&mut ex, "co_1", 21, Step::Waiting(1_020));
        note_step(&mut ex, "co_1", 1_020, Step::Sent(&attempt(2)));
        note_step(&mut ex, "co_1", 1_030, Step::Failed("Failed to fetch"));
        note_step(&mut ex, "co_1", 2_000, Step::Sent(&attempt(3)));
        note_step(&mut ex, "co_1", 7_000, Step::TimedOut);
        note_step(&mut ex, "co_1", 8_000, Step::Sent(&attempt(4)));
        note_step(
            &mut ex,
            "co_1",
            8_010,
            Step::Answered(&Reply::new(201, "{}").replayed()),
        );
        let got: Vec<(&str, u32, u64, &Answer)> = ex
            .iter()
            .map(|e| (e.checkout.as_str(), e.number, e.sent_at, &e.answer))
            .collect();
        let reply = |at, status, replayed, retry_after_ms, body: &str| Answer::Reply {
            at,
            status,
            replayed,
            retry_after_ms,
            body: body.into(),
        };
        assert_eq!(
            got,
            [
                ("co_1", 1, 10, &reply(20, 503, false, Some(1_000), "")),
                ("co_2", 1, 11, &Answer::Open),
                (
                    "co_1",
                    2,
                    1_020,
                    &Answer::Failed {
                        at: 1_030,
                        message: "Failed to fetch".into()
                    }
                ),
                ("co_1", 3, 2_000, &Answer::TimedOut { at: 7_000 }),
                ("co_1", 4, 8_000, &reply(8_010, 201, true, None, "{}")),
            ]
        );
        assert!(ex
            .iter()
            .all(|e| e.key == "01234567-89ab-4cde-8f01-23456789abcd"
                && e.body == r#"{"amount":2590,"card":"tok_visa","cart":"co_1"}"#));
    }

    #[test]
    fn outcomes_and_answers_show_as_states() {
        let outcome = |kind| Outcome {
            name: "co_1".into(),
            kind,
            key: None,
            attempts: 1,
            durability: idem_client::Durability::Journaled,
        };
        let cases = [
            (
                OutcomeKind::Succeeded {
                    status: 201,
                    body: vec![],
                },
                "paid",
            ),
            (
                OutcomeKind::Replayed {
                    status: 201,
                    body: vec![],
                },
                "replayed",
            ),
            (
                OutcomeKind::Rejected {
                    status: 402,
                    body: vec![],
                    problem: None,
                },
                "refused",
            ),
            (OutcomeKind::Unknown { last_error: None }, "unknown"),
        ];
        for (kind, value) in cases {
            assert_eq!(state_of(&outcome(kind)).value(), value);
        }
        assert_eq!(
            reconciled(Ok(KeyState::InFlight {
                lease_age_ms: 5,
                lease_left_ms: 0
            })),
            Reconciled::InFlight {
                lease_age_ms: 5,
                lease_left_ms: 0
            }
        );
        assert_eq!(reconciled(Ok(KeyState::NotFound)), Reconciled::NotFound);
        assert_eq!(reconciled(Ok(KeyState::Released)), Reconciled::Released);
        assert_eq!(
            reconciled(Ok(KeyState::BoundToAnotherRequest)),
            Reconciled::AnotherRequest
        );
        assert_eq!(
            reconciled(Ok(KeyState::Done {
                status: 201,
                body: vec![]
            })),
            Reconciled::Done(201)
        );
        assert_eq!(reconciled(Err("x".into())), Reconciled::Failed("x".into()));
    }
}
