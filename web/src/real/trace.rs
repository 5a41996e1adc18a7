//! The sequence diagram's trace (`model::sequence::Trace`) of one real-mode checkout: what the
//! page sent and got back, attempt by attempt (`model::real::Exchange`), beside what
//! idem-server's event stream reported under its key (`model::real::ServerEvent`), drawn by the
//! simulated mode's layout, `knew` and component.
//!
//! The browser's lane is what the page saw; the server's and PayCo's are what the server says
//! happened. So a response the `drop-response` fault never sent is "saved 201" on the server,
//! a cut arrow, and "no answer" on the browser's lane; a worker that crashed after the charge is
//! claimed, charged, crashed, then taken over by a retry, and PayCo's answer to the takeover is
//! the same charge again (deduped). Times are milliseconds since the session started.
//!
//! An event belongs to the last attempt sent by then (the SDK sends one at a time): a second
//! arrival under one attempt is a copy the browser's network stack sent again (Chromium resends
//! a request whose reused connection closed unanswered), drawn as a request of its own that
//! leaves once the first copy's answer was lost, not as a duplicate of the first send (the SDK
//! never saw it: it is the same attempt, the same bytes). Nothing is made up:
//! a request no event mentions has no arrival ("? no answer") until a reply shows it arrived, a
//! `payco:` note (written once PayCo answered) places the call and its answer at its own time,
//! and a server time is never before the attempt's send, whatever the two clocks say.

use idem_client::{Reply, ReplyClass};

use super::parse::{fired_fault, payco_said, PaycoSaid};
use crate::model::real::{Answer, CheckoutState, RealInfo, ServerEventKind as Kind};
use crate::model::sequence::{Hop, Lane, Mark, Msg, Trace};
use crate::projection::feed::short;

/// The checkouts this page load sent attempts for, oldest first (`co_N`).
pub fn checkouts(info: &RealInfo) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for e in info.exchanges.iter() {
        if !out.contains(&e.checkout.as_str()) {
            out.push(&e.checkout);
        }
    }
    out
}

fn msg(hop: Hop, sent_at: u64, arrivals: Vec<u64>, label: String, wire: String) -> Msg {
    Msg {
        hop,
        sent_at,
        arrivals,
        lost: false,
        late: false,
        label,
        wire,
    }
}

/// A mark; `on`: the message at whose arrival it happens (see `Mark::on`).
fn mark(t: &mut Trace, at: u64, lane: Lane, on: Option<usize>, kind: &'static str, text: String) {
    t.marks.push(Mark {
        at,
        lane,
        kind,
        text,
        on,
    });
}

/// A `payco: …` note at `at`: the call and PayCo's answer, and its mark (a charge id seen before
/// in this trace is PayCo answering its saved charge: no money moved).
fn payco<'a>(t: &mut Trace, at: u64, said: &'a str, charges: &mut Vec<&'a str>) {
    // "charged ch_1 for order 1 (2590 cents)", "declined order 1", "no clear answer for order 1: …"
    // (Words, not a substring search: a `&str` pattern's searcher costs the bundle 1.6 KB.)
    let mut words = said.split(' ').skip_while(|w| *w != "order");
    let order = words.nth(1).unwrap_or_default().trim_end_matches(':');
    let key = ["charge:", order].concat();
    let wire = ["POST /charges (PayCo)\nIdempotency-Key: ", &key].concat();
    let (kind, text, answer) = match payco_said(said) {
        PaycoSaid::Charged(id) => {
            if charges.contains(&id) {
                ("deduped", ["deduped → ", id, ": no money"].concat(), id)
            } else {
                charges.push(id);
                ("charged", ["charged ", id].concat(), id)
            }
        }
        PaycoSaid::Declined => ("declined", "declined".into(), "declined"),
        PaycoSaid::Unclear => {
            // No clear answer: whether PayCo got the call is not known.
            t.msgs.push(msg(Hop::Call, at, Vec::new(), key, wire));
            return;
        }
    };
    let call = t.msgs.len();
    t.msgs.push(msg(Hop::Call, at, vec![at], key, wire));
    let wire = ["PayCo answer\n\n", said].concat();
    t.msgs
        .push(msg(Hop::Answer, at, vec![at], answer.into(), wire));
    mark(t, at, Lane::PayCo, Some(call), kind, text);
}

/// What an attempt's answer makes of its checkout, as far as the answer alone says (the SDK's
/// own reading of a status): paid or refused on a final reply, otherwise still pending.
pub fn ended_as(answer: &Answer) -> CheckoutState {
    let Answer::Reply {
        status, replayed, ..
    } = answer
    else {
        return CheckoutState::Pending;
    };
    let reply = Reply {
        replayed: *replayed,
        ..Reply::new(*status, Vec::new())
    };
    match reply.class() {
        ReplyClass::Succeeded { replayed } => CheckoutState::Paid { replayed },
        ReplyClass::Rejected => CheckoutState::Refused(*status),
        ReplyClass::KeyExpired => CheckoutState::Unknown,
        ReplyClass::RetryAfter(_) => CheckoutState::Pending,
    }
}

/// Checkout `name`'s trace as of `now` (ms since the session started).
pub fn trace(info: &RealInfo, name: &str, now: u64) -> Trace {
    let rel = |at: u64| at.saturating_sub(info.t0);
    let tries: Vec<_> = info
        .exchanges
        .iter()
        .filter(|e| e.checkout == name)
        .collect();
    let mut t = Trace {
        now,
        outbox_unseen: true,
        ..Trace::default()
    };
    let Some(first) = tries.first() else {
        return t;
    };
    let key = first.key.as_str();
    let short_key = short(key);
    // The saved answer's body, as a replay returned it (byte for byte the one saved).
    let saved_body = tries.iter().find_map(|x| match &x.answer {
        Answer::Reply {
            replayed: true,
            body,
            ..
        } => Some(body.as_str()),
        _ => None,
    });
    let (mut saved, mut charges) = (0, Vec::new());
    let text = ["localStorage ← key ", short_key].concat();
    mark(
        &mut t,
        rel(first.sent_at),
        Lane::Browser,
        None,
        "journal",
        text,
    );
    for (i, x) in tries.iter().enumerate() {
        let sent = rel(x.sent_at);
        let n = x.number.to_string();
        // The request the server's decisions answer: this attempt, or the browser's copy of it.
        let mut req = t.msgs.len();
        let wire = [
            "POST /api/checkout\nAuthorization: Bearer ",
            &info.tenant,
            "\nContent-Type: application/json\nIdempotency-Key: ",
            key,
            "\n\n",
            &x.body,
        ]
        .concat();
        let label = ["#", &n, " POST ", short_key].concat();
        t.msgs
            .push(msg(Hop::Request, sent, Vec::new(), label, wire.clone()));
        // When this attempt's answer was lost on the way (a copy the browser resends leaves then).
        let mut lost_at = None;
        let answered = match &x.answer {
            Answer::Reply { at, .. } | Answer::TimedOut { at } | Answer::Failed { at, .. } => {
                rel(*at)
            }
            Answer::Open => u64::MAX,
        };
        // This attempt's events: from its send (the first's: from the start) to the next's.
        let until = tries.get(i + 1).map_or(u64::MAX, |next| next.sent_at);
        let events = info
            .events
            .iter()
            .filter(|e| e.key == key && (i == 0 || e.at >= x.sent_at) && e.at < until);
        // When the server last did something before the answer came: when the answer left.
        let mut last = sent;
        for e in events {
            let at = rel(e.at).max(sent);
            let before = last;
            if at <= answered {
                last = at;
            }
            let token = |n: &u64| n.to_string();
            let (kind, text, tail, arrived) = match &e.kind {
                Kind::Claimed(n) => ("claimed", "claimed · lease ", token(n), true),
                Kind::TakenOver(_, n) => ("takeover", "taken over · lease ", token(n), true),
                Kind::Replayed(_) => ("replayed", "replayed the saved answer", String::new(), true),
                Kind::Rejected(409) => ("409", "409: still in flight", String::new(), true),
                Kind::Rejected(422) => ("422", "422: other parameters", String::new(), true),
                Kind::Rejected(s) => ("400", "refused: ", s.to_string(), true),
                Kind::Saved(_, s) => {
                    saved = *s;
                    ("saved", "saved ", s.to_string(), false)
                }
                Kind::Released(n) => ("released", "released lease ", token(n), false),
                Kind::Fenced(_) => ("fenced", "fenced: lease lost", String::new(), false),
                Kind::Pruned => continue,
                Kind::Note(note) => {
                    if let Some(said) = note.strip_prefix("payco: ") {
                        payco(&mut t, at, said, &mut charges);
                        continue;
                    }
                    let Some(fault) = fired_fault(note) else {
                        continue;
                    };
                    if fault == "crash-after-charge" {
                        (
                            "crashed",
                            "✝ crashed after the charge",
                            String::new(),
                            false,
                        )
                    } else {
                        if fault == "drop-response" {
                            // Saved, then the connection closed before a byte of it left.
                            let status = saved.to_string();
                            let body = saved_body.unwrap_or_default();
                            let wire = ["HTTP ", &status, " (", note, ")\n\n", body].concat();
                            let label = ["#", &n, " ← ", &status].concat();
                            let mut lost = msg(Hop::Response, at, Vec::new(), label, wire);
                            lost.lost = true;
                            t.msgs.push(lost);
                            lost_at = Some(at);
                        }
                        // `unavailable` answers 503 on arrival, before any claim.
                        let arrived = fault == "unavailable";
                        ("fault", "demo fault: ", fault.to_owned(), arrived)
                    }
                }
            };
            if arrived && !t.msgs[req].arrivals.is_empty() {
                // Arrived again: the browser's own copy, sent once it saw the connection close
                // (a millisecond after the loss: its row is below the cut answer), or with no loss
                // seen, after the server's last step.
                let from = lost_at.map_or(before, |lost| lost + 1).min(at);
                let label = ["#", &n, " again: the browser resent it"].concat();
                req = t.msgs.len();
                t.msgs
                    .push(msg(Hop::Request, from, vec![at], label, wire.clone()));
            } else if arrived {
                t.msgs[req].arrivals.push(at);
            }
            let on = arrived.then_some(req);
            mark(&mut t, at, Lane::Server, on, kind, [text, &tail].concat());
        }
        match &x.answer {
            Answer::Reply {
                at,
                status,
                replayed,
                retry_after_ms,
                body,
            } => {
                // A reply came: the request arrived, whether or not an event said so.
                if t.msgs[req].arrivals.is_empty() {
                    t.msgs[req].arrivals.push(last);
                }
                let mut label = ["#", &n, " ← ", &status.to_string()].concat();
                let mut head = String::new();
                if *replayed {
                    label.push_str(" replayed");
                    head.push_str("\nIdempotent-Replayed: true");
                }
                if let Some(ms) = retry_after_ms {
                    let s = ms.div_ceil(1_000).to_string();
                    label.push_str(&[" · Retry-After ", &s].concat());
                    head.push_str(&["\nRetry-After: ", &s].concat());
                }
                let wire = ["HTTP ", &status.to_string(), &head, "\n\n", body].concat();
                let got = vec![rel(*at).max(last)];
                t.msgs.push(msg(Hop::Response, last, got, label, wire));
            }
            Answer::TimedOut { .. } => {
                let text = ["#", &n, " timed out: unknown"].concat();
                mark(&mut t, answered, Lane::Browser, None, "timeout", text);
            }
            Answer::Failed { message, .. } => {
                let text = ["#", &n, " no answer: ", message].concat();
                mark(&mut t, answered, Lane::Browser, None, "failed", text);
            }
            Answer::Open => {}
        }
    }
    // The outcome: the controller's for its current checkout; for an earlier one, only what
    // its last reply makes final (the SDK's own reading of a status).
    let Some(last) = tries.last() else {
        return t;
    };
    let state = match &info.checkout {
        Some(c) if c.name == name => c.state,
        _ => ended_as(&last.answer),
    };
    let at = match &last.answer {
        Answer::Reply { at, .. } | Answer::TimedOut { at } | Answer::Failed { at, .. } => *at,
        Answer::Open => info.t0 + now,
    };
    let (kind, text) = match state {
        CheckoutState::Pending => return t,
        CheckoutState::Paid { replayed: false } => ("paid", "paid".to_owned()),
        CheckoutState::Paid { replayed: true } => ("paid", "paid (the saved answer)".to_owned()),
        CheckoutState::Refused(s) => ("rejected", ["refused: ", &s.to_string()].concat()),
        CheckoutState::Unknown => ("unknown", "gave up: outcome unknown".to_owned()),
    };
    mark(&mut t, rel(at), Lane::Browser, None, kind, text);
    t
}

#[cfg(test)]
mod tests {
    use std::rc::Rc;

    use super::*;
    use crate::model::real::{Exchange, Link, RealCheckout, ServerEvent};
    use crate::model::sequence::{knew, layout, Fate};

    const T0: u64 = 1_796_154_650_000;
    const KEY: &str = "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9";
    const BODY: &str = r#"{"amount":2590,"card":"tok_visa","cart":"co_1"}"#;
    const SAVED: &str = r#"{"order":1,"status":"paid","charge":"ch_1","amount":2590}"#;

    fn reply(at: u64, status: u16, replayed: bool, retry_after_ms: Option<u64>) -> Answer {
        let body = if status == 201 { SAVED } else { "{}" };
        Answer::Reply {
            at: T0 + at,
            status,
            replayed,
            retry_after_ms,
            body: body.into(),
        }
    }

    fn failed(at: u64) -> Answer {
        Answer::Failed {
            at: T0 + at,
            message: "Failed to fetch".into(),
        }
    }

    /// Attempt `number` of checkout `co_1` (under [`KEY`]), sent at `sent` ms.
    fn sent(number: u32, sent: u64, answer: Answer) -> Exchange {
        Exchange {
            checkout: "co_1".into(),
            number,
            key: KEY.into(),
            sent_at: T0 + sent,
            body: BODY.into(),
            answer,
        }
    }

    fn event(at: u64, kind: Kind) -> ServerEvent {
        ServerEvent {
            seq: at,
            at: T0 + at,
            key: KEY.into(),
            kind,
        }
    }

    fn note(at: u64, text: &str) -> ServerEvent {
        event(at, Kind::Note(text.into()))
    }

    const CHARGED: &str = "payco: charged ch_1 for order 1 (2590 cents)";
    const DROPPED: &str = "fault: drop-response: committed; the connection is closed unanswered";

    fn info(exchanges: Vec<Exchange>, events: Vec<ServerEvent>, state: CheckoutState) -> RealInfo {
        RealInfo {
            server: "http://127.0.0.1:8000".into(),
            tenant: "demo-t".into(),
            t0: T0,
            link: Link::Up,
            lock_ms: Some(3_000),
            notice: None,
            checkout: Some(RealCheckout {
                name: "co_1".into(),
                key: KEY.into(),
                state,
                reconciled: None,
            }),
            decline_next: false,
            exchanges: Rc::new(exchanges),
            events: Rc::new(events),
        }
    }

    fn fates(t: &Trace) -> Vec<Fate> {
        layout(t).arrows.iter().map(|a| a.fate).collect()
    }

    /// The request, PayCo's call and answer arrive; the response is cut; then a request and
    /// its answer arrive.
    const LOST_THEN_ANSWERED: [Fate; 6] = [
        Fate::Delivered,
        Fate::Delivered,
        Fate::Delivered,
        Fate::Lost,
        Fate::Delivered,
        Fate::Delivered,
    ];

    fn kinds(t: &Trace, lane: Lane) -> Vec<&'static str> {
        t.marks
            .iter()
            .filter(|m| m.lane == lane)
            .map(|m| m.kind)
            .collect()
    }

    fn texts(t: &Trace, lane: Lane) -> Vec<&str> {
        t.marks
            .iter()
            .filter(|m| m.lane == lane)
            .map(|m| m.text.as_str())
            .collect()
    }

    fn hops(t: &Trace) -> Vec<&'static str> {
        t.msgs.iter().map(|m| m.hop.name()).collect()
    }

    #[test]
    fn a_dropped_response_is_saved_on_the_server_and_unanswered_in_the_browser() {
        let info = info(
            vec![
                sent(1, 10, failed(20)),
                sent(2, 1_200, reply(1_204, 201, true, None)),
            ],
            vec![
                event(12, Kind::Claimed(1)),
                note(15, CHARGED),
                event(18, Kind::Saved(1, 201)),
                note(18, DROPPED),
                event(1_202, Kind::Replayed(201)),
            ],
            CheckoutState::Paid { replayed: true },
        );
        let t = trace(&info, "co_1", 2_000);
        assert_eq!(
            hops(&t),
            ["request", "call", "answer", "response", "request", "response"]
        );
        let lost = &t.msgs[3];
        assert!(lost.lost && lost.arrivals.is_empty());
        assert_eq!((lost.sent_at, lost.label.as_str()), (18, "#1 ← 201"));
        assert!(lost.wire.starts_with("HTTP 201 (fault: drop-response"));
        assert!(
            lost.wire.ends_with(&["\n\n", SAVED].concat()),
            "the saved body"
        );
        assert_eq!(
            kinds(&t, Lane::Server),
            ["claimed", "saved", "fault", "replayed"]
        );
        assert_eq!(texts(&t, Lane::Server)[1], "saved 201");
        assert_eq!(kinds(&t, Lane::PayCo), ["charged"]);
        assert_eq!(kinds(&t, Lane::Browser), ["journal", "failed", "paid"]);
        assert_eq!(t.msgs[0].arrivals, [12], "arrived when claimed");
        assert_eq!(t.msgs[4].arrivals, [1_202]);
        let replay = &t.msgs[5];
        assert_eq!(
            (replay.sent_at, replay.arrivals.as_slice()),
            (1_202, &[1_204][..])
        );
        assert_eq!(replay.label, "#2 ← 201 replayed");
        assert_eq!(
            replay.wire,
            ["HTTP 201\nIdempotent-Replayed: true\n\n", SAVED].concat()
        );
        assert_eq!(
            t.msgs[4].wire,
            [
                "POST /api/checkout\nAuthorization: Bearer demo-t\nContent-Type: application/json\nIdempotency-Key: ",
                KEY,
                "\n\n",
                BODY
            ]
            .concat()
        );
        assert_eq!(
            knew(&t, 3),
            [
                "10 ms: localStorage ← key 0f1e2d3c",
                "20 ms: #1 no answer: Failed to fetch",
                "1204 ms: got #2's answer: 201 replayed",
                "1204 ms: paid (the saved answer)",
                "This answer never reached the page."
            ]
        );
        assert_eq!(
            knew(&t, 4),
            [
                "10 ms: localStorage ← key 0f1e2d3c",
                "20 ms: #1 no answer: Failed to fetch"
            ],
            "the retry knew nothing of the save"
        );
        assert_eq!(fates(&t), LOST_THEN_ANSWERED);
    }

    #[test]
    fn a_crash_after_the_charge_is_taken_over_and_paco_answers_its_saved_charge() {
        let info = info(
            vec![
                sent(1, 0, failed(6)),
                sent(2, 500, reply(502, 409, false, Some(2_500))),
                sent(3, 3_500, reply(3_511, 201, false, None)),
            ],
            vec![
                event(2, Kind::Claimed(1)),
                note(5, CHARGED),
                note(
                    5,
                    "fault: crash-after-charge: the worker died after PayCo's charge",
                ),
                event(501, Kind::Rejected(409)),
                event(3_501, Kind::TakenOver(1, 2)),
                note(3_505, CHARGED),
                event(3_510, Kind::Saved(2, 201)),
            ],
            CheckoutState::Paid { replayed: false },
        );
        let t = trace(&info, "co_1", 4_000);
        assert_eq!(
            kinds(&t, Lane::Server),
            ["claimed", "crashed", "409", "takeover", "saved"]
        );
        let server = texts(&t, Lane::Server);
        assert_eq!(server[1], "✝ crashed after the charge");
        assert_eq!(server[3], "taken over · lease 2");
        assert_eq!(kinds(&t, Lane::PayCo), ["charged", "deduped"]);
        assert_eq!(texts(&t, Lane::PayCo)[1], "deduped → ch_1: no money");
        assert_eq!(kinds(&t, Lane::Browser), ["journal", "failed", "paid"]);
        // No answer to the first attempt: no response drawn for it.
        assert_eq!(
            hops(&t),
            [
                "request", "call", "answer", "request", "response", "request", "call", "answer",
                "response"
            ]
        );
        let conflict = &t.msgs[4];
        assert_eq!(conflict.label, "#2 ← 409 · Retry-After 3");
        assert!(conflict.wire.starts_with("HTTP 409\nRetry-After: 3\n\n"));
        assert_eq!(
            t.msgs[1].wire,
            "POST /charges (PayCo)\nIdempotency-Key: charge:1"
        );
        assert_eq!(t.msgs[2].label, "ch_1");
        assert_eq!(t.msgs[8].sent_at, 3_510, "the answer leaves once saved");
    }

    #[test]
    fn a_copy_the_browser_resent_leaves_after_the_loss_and_other_checkouts_stay_out() {
        let mut other = sent(1, 5_000, reply(5_010, 422, false, None));
        other.checkout = "co_2".into();
        other.key = "another".into();
        let mut foreign = event(5_005, Kind::Rejected(422));
        foreign.key = "another".into();
        let mut info = info(
            vec![sent(1, 10, reply(40, 201, true, None)), other],
            vec![
                // The server's clock a little behind the browser's: kept after the send.
                event(9, Kind::Claimed(1)),
                note(15, CHARGED),
                event(18, Kind::Saved(1, 201)),
                note(18, DROPPED),
                event(30, Kind::Replayed(201)),
                foreign,
            ],
            CheckoutState::Pending,
        );
        info.checkout.as_mut().unwrap().name = "co_2".into();
        assert_eq!(checkouts(&info), ["co_1", "co_2"]);
        let t = trace(&info, "co_1", 6_000);
        assert_eq!(t.msgs[0].arrivals, [10]);
        assert_eq!(
            hops(&t),
            ["request", "call", "answer", "response", "request", "response"]
        );
        // The copy leaves when the first answer was lost (18), not with the first send (10),
        // and is the attempt's own bytes; the replay answers it.
        let copy = &t.msgs[4];
        assert_eq!((copy.sent_at, copy.arrivals.as_slice()), (19, &[30][..]));
        assert_eq!(copy.label, "#1 again: the browser resent it");
        assert_eq!(copy.wire, t.msgs[0].wire);
        assert_eq!(t.msgs[5].label, "#1 ← 201 replayed");
        let replayed = t.marks.iter().find(|m| m.kind == "replayed").unwrap();
        assert_eq!(replayed.on, Some(4), "the replay answers the copy");
        assert_eq!(
            fates(&t),
            LOST_THEN_ANSWERED,
            "no duplicate of the first send"
        );
        // Drawn below the lost answer: the copy follows the loss.
        let rows = layout(&t);
        let y = |msg: usize| rows.arrows.iter().find(|a| a.msg == msg).unwrap().from.1;
        assert!(y(4) > y(3), "the copy leaves after the loss");
        // Not the controller's current checkout: its last reply says how it ended.
        assert_eq!(kinds(&t, Lane::Browser), ["journal", "paid"]);
        assert!(!t.marks.iter().any(|m| m.text.contains("422")));

        let t = trace(&info, "co_2", 6_000);
        assert_eq!(hops(&t), ["request", "response"]);
        assert_eq!(kinds(&t, Lane::Server), ["422"]);
        assert_eq!(
            kinds(&t, Lane::Browser),
            ["journal"],
            "still pending: no outcome yet"
        );
        assert!(trace(&info, "co_9", 6_000).msgs.is_empty());
    }

    #[test]
    fn what_the_server_never_mentioned_is_not_made_up() {
        // A 503 from the demo fault before any claim; then an attempt still out, unmentioned.
        let info = info(
            vec![
                sent(1, 0, reply(3, 503, false, Some(1_000))),
                sent(2, 1_010, Answer::Open),
            ],
            vec![note(
                2,
                "fault: unavailable: answered 503 before anything was claimed",
            )],
            CheckoutState::Pending,
        );
        let t = trace(&info, "co_1", 1_500);
        assert_eq!(t.msgs[0].arrivals, [2]);
        assert_eq!(kinds(&t, Lane::Server), ["fault"]);
        assert_eq!(texts(&t, Lane::Server), ["demo fault: unavailable"]);
        assert!(t.msgs[2].arrivals.is_empty() && !t.msgs[2].lost);
        assert_eq!(layout(&t).arrows[2].fate, Fate::Unanswered);
        assert_eq!(kinds(&t, Lane::Browser), ["journal"]);
        // A reply with no event about it: the request arrived all the same.
        let info = super::tests::info(
            vec![sent(1, 0, reply(7, 400, false, None))],
            Vec::new(),
            CheckoutState::Refused(400),
        );
        let t = trace(&info, "co_1", 10);
        assert_eq!(t.msgs[0].arrivals, [0]);
        assert_eq!(kinds(&t, Lane::Browser), ["journal", "rejected"]);
    }
}
