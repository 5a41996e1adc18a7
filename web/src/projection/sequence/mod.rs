//! The sequence diagram's trace (`model/sequence/`) for one checkout of the simulated world:
//! its messages with their fates and bytes, from the history's message log
//! (`idem_sim::history::messages`), the store's, the worker's and PayCo's decisions as marks,
//! and the page's own moments (the journal write, a second click, timeouts, the outcome, the
//! settled entry its journal keeps): the ground truth beside the page's own lane, from which
//! `model::sequence::knew` reads what the page knew at each message.
//!
//! The outbox's relay and its consumer get a lane of their own (`outbox.rs`).
//!
//! It reads the world; it never changes it. A real-server source builds the same `Trace` from
//! what the page sent and received and what the server's event stream reported.

use idem_client::{Entry, RecordState};
use idem_sim::{
    op_name, AttemptResult, CheckoutId, CheckoutOutcome, Command, Decision, History, InfoCause,
    MessageKind, PaycoDecision, StepKind, WorkEnd, World,
};

mod outbox;

use super::feed::short;
use crate::model::cart::euros;
use crate::model::sequence::{Hop, Lane, Mark, Msg, Trace};

fn decision(d: Decision, retry_after: Option<&str>) -> (&'static str, String) {
    let (kind, text, n) = match d {
        Decision::Claimed { token } => ("claimed", "claimed · lease ", Some(token)),
        Decision::TakenOver { token } => ("takeover", "taken over · lease ", Some(token)),
        Decision::Unkeyed => ("unkeyed", "no key: the work runs", None),
        Decision::Replayed => ("replayed", "replayed the saved answer", None),
        Decision::InFlight => {
            let wait = ["409 + Retry-After: ", retry_after.unwrap_or("?"), " s"].concat();
            return ("409", wait);
        }
        Decision::Mismatch => ("422", "422: other parameters", None),
        Decision::KeyExpired => ("412", "412: key expired, not run again", None),
        Decision::Invalid { status } => ("400", "refused: ", Some(u64::from(status))),
    };
    (
        kind,
        [text, &n.map_or(String::new(), |n| n.to_string())].concat(),
    )
}

fn work_end(e: WorkEnd) -> (&'static str, String) {
    let (kind, text, status) = match e {
        WorkEnd::Saved { status } => ("saved", "saved ", status),
        WorkEnd::Released { status } => ("released", "released · ", status),
        WorkEnd::Answered { status } => ("answered", "answered, nothing saved · ", status),
        WorkEnd::Fenced => return ("fenced", "fenced: lease lost".into()),
        WorkEnd::Crashed => return ("crashed", "✝ crashed after the charge".into()),
    };
    (kind, [text, &status.to_string()].concat())
}

fn payco(d: PaycoDecision) -> (&'static str, String) {
    match d {
        PaycoDecision::Charged { charge } => {
            ("charged", ["charged ", &charge.to_string()].concat())
        }
        PaycoDecision::Deduped { charge } => (
            "deduped",
            [
                "deduped → ",
                &charge.map_or("its decline".into(), |c| c.to_string()),
                ": no money",
            ]
            .concat(),
        ),
        PaycoDecision::Declined => ("declined", "declined".into()),
    }
}

/// `start`, then one `name: value` line per header, a blank line and `body`.
fn http_text(start: &str, headers: &[(String, String)], body: &str) -> String {
    let mut out = start.to_string();
    for (n, v) in headers {
        out.push_str(&["\n", n, ": ", v].concat());
    }
    out.push_str("\n\n");
    out.push_str(body);
    out
}

/// Checkout `c`'s messages as the diagram numbers them, by their history ids: the trace's
/// messages in order, and its requests in the order they left (request `n` is `#n+1`).
struct Numbering {
    msgs: Vec<u32>,
    requests: Vec<u32>,
}

impl Numbering {
    /// History message `id`'s index in the trace's messages.
    fn index(&self, id: u32) -> Option<usize> {
        self.msgs.iter().position(|&m| m == id)
    }

    /// The diagram's number of request `id` (0 if it is none of this checkout's).
    fn request(&self, id: u32) -> usize {
        self.requests
            .iter()
            .position(|&r| r == id)
            .map_or(0, |n| n + 1)
    }
}

/// Checkout `c`'s messages, their numbering, and each 409's Retry-After by the request it
/// answered. Requests are numbered in the order they left, whatever the page's attempt
/// counter says (a double click's second request is not an attempt of the operation): the
/// response to request 2 and the timeout of request 2 say `#2` too.
fn messages(
    world: &World,
    h: &History,
    c: CheckoutId,
    attempts: &[&idem_sim::AttemptRecord],
) -> (Vec<Msg>, Numbering, Vec<(u32, String)>) {
    let mut out: Vec<Msg> = Vec::new();
    let mut numbering = Numbering {
        msgs: Vec::new(),
        requests: Vec::new(),
    };
    let mut waits = Vec::new();
    let Some(rec) = world.checkout(c) else {
        return (out, numbering, waits);
    };
    for (i, m) in h.messages.iter().enumerate() {
        if m.checkout != c {
            continue;
        }
        let id = i as u32;
        let arrivals = match m.fate {
            idem_sim::Fate::Lost => Vec::new(),
            idem_sim::Fate::Delivered { at } => vec![at],
            idem_sim::Fate::Duplicated { at, again } => vec![at, again],
        };
        let mut late = m.late;
        let (hop, label, wire) = match m.kind {
            MessageKind::Request { key, amount } => {
                numbering.requests.push(id);
                let n = numbering.requests.len();
                let full = key.map(|k| k.to_string()).unwrap_or_default();
                let body = idem_sim::world::body_for(c, amount);
                let wire = [
                    "POST /api/checkout\nContent-Type: application/json",
                    if full.is_empty() {
                        ""
                    } else {
                        "\nIdempotency-Key: "
                    },
                    &full,
                    "\n\n",
                    std::str::from_utf8(&body).unwrap_or_default(),
                ]
                .concat();
                let k = if full.is_empty() {
                    "no key"
                } else {
                    short(&full)
                };
                // The world flags a request the page had stopped waiting for; the diagram says
                // "late" only of one that arrived late: after its attempt timed out (or its tab
                // reloaded), not one the page dropped for a second click before it arrived.
                let gave_up = attempts.iter().any(|a| {
                    a.n == m.attempt
                        && m.attempt > 0
                        && matches!(
                            a.result,
                            AttemptResult::Info {
                                cause: InfoCause::Timeout | InfoCause::Reloaded
                            }
                        )
                        && arrivals.first().is_some_and(|&at| a.ended_at <= at)
                });
                late &= gave_up;
                let label = ["#", &n.to_string(), " POST ", k].concat();
                (Hop::Request, label, wire)
            }
            MessageKind::Response {
                request,
                status,
                replayed,
            } => {
                let http = h.response_http(id);
                let wait = http.and_then(|r| r.header("Retry-After"));
                let n = numbering.request(request).to_string();
                let mut label = ["#", &n, " ← ", &status.to_string()].concat();
                if replayed {
                    label.push_str(" replayed");
                }
                if let Some(w) = wait {
                    label.push_str(&[" · Retry-After ", w].concat());
                    waits.push((request, w.to_string()));
                }
                let wire = http.map_or(String::new(), |r| {
                    let body = String::from_utf8(r.body.clone()).unwrap_or_default();
                    http_text(&["HTTP ", &status.to_string()].concat(), &r.headers, &body)
                });
                (Hop::Response, label, wire)
            }
            MessageKind::Charge { order, key } => {
                let key = key.map_or("none (no key!)".to_string(), |k| k.to_string());
                let wire = [
                    "PayCo charge (an in-process call)\nIdempotency-Key: ",
                    &key,
                    "\n\norder ",
                    &order.to_string(),
                    ", ",
                    &euros(u64::from(rec.amount)),
                ]
                .concat();
                (Hop::Call, key, wire)
            }
            MessageKind::ChargeAnswer { charge, .. } => {
                let said = charge.map_or("declined".to_string(), |ch| ch.to_string());
                let wire = ["PayCo answer\n\n", &said].concat();
                (Hop::Answer, said, wire)
            }
        };
        numbering.msgs.push(id);
        out.push(Msg {
            hop,
            sent_at: m.sent_at,
            arrivals,
            lost: m.fate == idem_sim::Fate::Lost,
            late,
            label,
            wire,
        });
    }
    (out, numbering, waits)
}

/// One checkout's trace as of now: its exchange with the server and PayCo, then what the
/// outbox's relay did with the message its save wrote.
pub fn trace(world: &World, c: CheckoutId) -> Trace {
    let mut t = exchange(world, c);
    outbox::add(world, c, &mut t);
    t
}

/// The page's, the server's and PayCo's part of checkout `c`'s trace.
fn exchange(world: &World, c: CheckoutId) -> Trace {
    let h = world.history();
    let attempts = world.attempts_of(c);
    let (msgs, numbering, waits) = messages(world, h, c, &attempts);
    let mut marks = Vec::new();
    let mut mark = |at, lane, on: Option<usize>, (kind, text): (&'static str, String)| {
        marks.push(Mark {
            at,
            lane,
            kind,
            text,
            on,
        })
    };
    for s in h.steps.iter().filter(|s| s.checkout == c) {
        let (lane, on, what) = match s.kind {
            StepKind::Journaled { key } => (
                Lane::Browser,
                None,
                (
                    "journal",
                    ["localStorage ← key ", short(&key.to_string())].concat(),
                ),
            ),
            StepKind::Decided {
                request,
                decision: d,
            } => {
                let wait = waits.iter().find(|w| w.0 == request).map(|w| w.1.as_str());
                (Lane::Server, numbering.index(request), decision(d, wait))
            }
            StepKind::Worked { end, .. } => (Lane::Server, None, work_end(end)),
            StepKind::DeclinedUnasked { .. } => (
                Lane::Server,
                None,
                ("declined", "declined, PayCo not asked".into()),
            ),
            StepKind::Paid { call, decision: d } => (Lane::PayCo, numbering.index(call), payco(d)),
        };
        mark(s.at, lane, on, what);
    }
    for input in world.inputs() {
        if input.command == (Command::PayAgain { checkout: c }) {
            mark(
                input.at,
                Lane::Browser,
                None,
                ("click", "Pay pressed again".into()),
            );
        }
    }
    // The request an attempt sent: the first one carrying its number.
    let request_of = |n: u32| {
        let first = numbering
            .requests
            .iter()
            .find(|&&id| h.messages.get(id as usize).is_some_and(|m| m.attempt == n));
        first.map_or(n as usize, |&id| numbering.request(id))
    };
    for a in &attempts {
        let what = match a.result {
            AttemptResult::Info {
                cause: InfoCause::Timeout,
            } => (
                "timeout",
                ["#", &request_of(a.n).to_string(), " timed out: unknown"].concat(),
            ),
            AttemptResult::Info {
                cause: InfoCause::Reloaded,
            } => ("reload", "tab reloaded: memory lost".into()),
            _ => continue,
        };
        mark(a.ended_at, Lane::Browser, None, what);
    }
    let ended = world
        .checkout(c)
        .and_then(|r| Some((r.finished_at?, r.outcome)));
    if let Some((at, outcome)) = ended {
        let what = match outcome {
            CheckoutOutcome::Paid { .. } => ("paid", "paid".to_string()),
            CheckoutOutcome::Rejected { status } => {
                ("rejected", ["refused: ", &status.to_string()].concat())
            }
            _ => ("unknown", "gave up: outcome unknown".into()),
        };
        // Settled by the answer that reached the page then (drawn at its arrowhead).
        let answer = msgs
            .iter()
            .position(|m| m.hop == Hop::Response && !m.late && m.arrivals.first() == Some(&at));
        mark(at, Lane::Browser, answer, what);
        // What the journal keeps once the operation settled (a settled entry: no payload).
        let kept = world
            .journal_of(c)
            .and_then(|j| j.load_entry(&op_name(c)).ok().flatten());
        let (key, status) = match kept {
            Some(Entry::Settled(s)) => (s.key, s.status.to_string()),
            Some(Entry::Open(r)) if r.state != RecordState::Pending => (r.key, "unknown".into()),
            _ => {
                return Trace {
                    msgs,
                    marks,
                    now: world.now(),
                    outbox_unseen: false,
                }
            }
        };
        let text = [
            "journal keeps key ",
            short(&key.to_string()),
            ": ",
            &status,
            ", no payload",
        ]
        .concat();
        mark(at, Lane::Browser, None, ("settled", text));
    }
    Trace {
        msgs,
        marks,
        now: world.now(),
        outbox_unseen: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::sequence::{clash, knew, layout, Fate};
    use idem_sim::{Scenario, ScenarioRun, SimConfig, Strategy, World, SCENARIOS};

    fn quiet_world() -> World {
        let mut config = SimConfig::default();
        config.workload.orders = 0;
        config.faults.jitter_ms = 0;
        World::new(config)
    }

    fn kinds(t: &Trace, lane: Lane) -> Vec<&'static str> {
        let mut marks: Vec<&Mark> = t.marks.iter().filter(|m| m.lane == lane).collect();
        marks.sort_by_key(|m| m.at);
        marks.iter().map(|m| m.kind).collect()
    }

    #[test]
    fn a_lost_response_and_its_replay() {
        let mut w = quiet_world();
        w.drop_next_response();
        let c = w.start_checkout(Strategy::SameKey).unwrap();
        w.finish();
        let t = trace(&w, c);
        let hops: Vec<&str> = t.msgs.iter().map(|m| m.hop.name()).collect();
        assert_eq!(
            hops,
            ["request", "call", "answer", "response", "request", "response", "delivery", "ack"],
            "the exchange, then the outbox's relay delivering order.paid once the run drained"
        );
        assert!(t.msgs[3].lost, "the first answer was lost");
        let lost = knew(&t, 3).join("\n");
        assert!(
            lost.contains("timed out") && lost.contains("never reached"),
            "{lost}"
        );
        assert_eq!(t.msgs[5].label, "#2 ← 201 replayed");
        let replay = knew(&t, 5).join("\n");
        assert!(
            replay.contains("got #2's answer: 201 replayed") && replay.contains("paid"),
            "{replay}"
        );
        let key = w.checkout(c).unwrap().key.unwrap().to_string();
        assert!(t.msgs[4]
            .wire
            .contains(&["Idempotency-Key: ", &key].concat()));
        let retry = knew(&t, 4).join("\n");
        assert!(
            retry.contains("timed out") && !retry.contains("201"),
            "{retry}"
        );
        let amount = w.checkout(c).unwrap().amount;
        let body = format!(r#"{{"amount":{amount},"card":"tok_visa","cart":"co_1"}}"#);
        assert!(
            t.msgs[4].wire.ends_with(&["\n\n", &body].concat()),
            "{}",
            t.msgs[4].wire
        );
        let replayed = &t.msgs[5].wire;
        assert!(replayed.starts_with("HTTP 201\n"), "{replayed}");
        assert!(
            replayed.contains("\nIdempotent-Replayed: true\n"),
            "{replayed}"
        );
        assert!(replayed.contains("\"order\""), "{replayed}");
        assert_eq!(
            kinds(&t, Lane::Browser),
            ["journal", "timeout", "paid", "settled"]
        );
        assert_eq!(
            kinds(&t, Lane::Server),
            ["claimed", "saved", "outbox", "marked-sent", "replayed"]
        );
        assert_eq!(kinds(&t, Lane::Receipts), ["receipt"]);
        assert_eq!(kinds(&t, Lane::PayCo), ["charged"]);
        let settled = t.marks.iter().find(|m| m.kind == "settled").unwrap();
        assert!(settled.text.contains(&key[..8]) && settled.text.contains("201"));
        let l = layout(&t);
        assert_eq!(
            l.arrows.iter().filter(|a| a.fate == Fate::Lost).count(),
            1,
            "one cut"
        );
    }

    #[test]
    fn a_409_says_its_retry_after_and_a_double_click_shows_two_posts() {
        let mut w = quiet_world();
        w.slow_next_worker();
        let c = w.start_checkout(Strategy::SameKey).unwrap();
        w.finish();
        let t = trace(&w, c);
        let conflict = t.marks.iter().find(|m| m.kind == "409").expect("a 409");
        assert!(
            conflict.text.starts_with("409 + Retry-After: "),
            "{}",
            conflict.text
        );
        assert!(!conflict.text.ends_with("? s"), "{}", conflict.text);

        let mut w = quiet_world();
        let c = w.start_checkout(Strategy::NoKey).unwrap();
        w.run_until(5);
        w.pay_again_for(c).unwrap();
        w.finish();
        let t = trace(&w, c);
        let posts = t.msgs.iter().filter(|m| m.hop == Hop::Request).count();
        assert_eq!(posts, 2);
        assert_eq!(kinds(&t, Lane::PayCo), ["charged", "charged"]);
        assert!(kinds(&t, Lane::Browser).contains(&"click"));
        assert!(
            t.msgs.iter().any(|m| m.late),
            "the first answer arrives late"
        );
    }

    #[test]
    fn what_is_not_there_yet_is_not_in_the_trace() {
        let mut w = quiet_world();
        let c = w.start_checkout(Strategy::SameKey).unwrap();
        w.run_until(10);
        let t = trace(&w, c);
        assert_eq!(t.msgs.len(), 1);
        assert_eq!(
            t.msgs[0].arrivals,
            [20],
            "the network decided when it was sent"
        );
        assert_eq!(layout(&t).arrows[0].fate, Fate::OnItsWay);
        assert_eq!(kinds(&t, Lane::Server), Vec::<&str>::new());
    }

    /// Every classroom run (each scenario, and its fix), stepped event by event to its pause
    /// and 50 events past it: at every step, every checkout's diagram (`check`).
    fn every_scenario_step(mut check: impl FnMut(&str, &World)) {
        for s in &SCENARIOS {
            for fixed in [false, true] {
                if fixed && s.fix.is_none() {
                    continue;
                }
                let (mut run, mut world) = ScenarioRun::start(s, fixed);
                let name = format!("{}{}", s.id, if fixed { " (fixed)" } else { "" });
                let mut after = 0;
                while after < 50 && run.step(&mut world) {
                    check(&name, &world);
                    if run.paused_at().is_some() {
                        after += 1;
                    }
                }
                if run.paused_at().is_none() {
                    // A pause at a time with no event: the clock runs to it.
                    run.run_until(&mut world, 60_000, true);
                    check(&name, &world);
                }
                assert!(run.paused_at().is_some(), "{name} pauses");
            }
        }
    }

    #[test]
    fn no_two_labels_meet_at_any_step_of_any_scenario() {
        every_scenario_step(|name, world| {
            for c in 0..world.checkouts().len() as u32 {
                let l = layout(&trace(world, CheckoutId(c)));
                let at = world.events_run();
                assert_eq!(clash(&l), None, "{name}, event {at}");
            }
        });
    }

    #[test]
    fn requests_are_numbered_in_the_order_they_left_and_timeouts_and_answers_say_so() {
        every_scenario_step(|name, world| {
            let t = trace(world, CheckoutId(0));
            let mut n = 0;
            for m in t.msgs.iter().filter(|m| m.hop == Hop::Request) {
                n += 1;
                let want = format!("#{n} POST ");
                assert!(m.label.starts_with(&want), "{name}: {}", m.label);
            }
            for m in t.msgs.iter().filter(|m| m.hop == Hop::Response) {
                let number: u32 = m.label[1..m.label.find(' ').unwrap_or(1)]
                    .parse()
                    .unwrap_or(0);
                assert!((1..=n).contains(&number), "{name}: {}", m.label);
            }
            for k in t.marks.iter().filter(|k| k.kind == "timeout") {
                let number: u32 = k.text[1..k.text.find(' ').unwrap_or(1)]
                    .parse()
                    .unwrap_or(0);
                assert!((1..=n).contains(&number), "{name}: {}", k.text);
            }
        });
    }

    #[test]
    fn select_then_insert_draws_both_requests_both_claims_both_charges_apart() {
        let s = SCENARIOS
            .iter()
            .find(|s| s.id == "bug-select-then-insert")
            .unwrap();
        let (mut run, mut world) = ScenarioRun::start(s, false);
        assert!(run.run_to_pause(&mut world, 60_000));
        let t = trace(&world, CheckoutId(0));
        let l = layout(&t);
        let requests: Vec<_> = l
            .arrows
            .iter()
            .filter(|a| t.msgs[a.msg].hop == Hop::Request)
            .collect();
        assert_eq!(requests.len(), 2);
        assert_eq!(
            t.msgs[requests[0].msg].sent_at, t.msgs[requests[1].msg].sent_at,
            "sent in one millisecond"
        );
        assert_ne!(requests[0].from, requests[1].from, "drawn apart");
        let at = |kind: &str| -> Vec<(i32, i32)> {
            l.marks
                .iter()
                .filter(|m| t.marks[m.mark].kind == kind)
                .map(|m| m.at)
                .collect()
        };
        let (claims, charges) = (at("claimed"), at("charged"));
        assert_eq!(claims.len(), 2);
        assert_ne!(claims[0], claims[1]);
        assert_eq!(charges.len(), 2);
        assert_ne!(charges[0], charges[1]);
        // The bug's claim reads, then inserts a moment later: each after its own arrival.
        assert!(claims[0].1 > requests[0].to.1 && claims[1].1 > requests[1].to.1);
        assert_eq!(t.msgs[requests[1].msg].label[..3], *"#2 ", "not #0");
    }

    #[test]
    fn the_consumer_lane_shows_the_redelivery_and_what_each_consumer_did_with_it() {
        let s = Scenario::by_id("bug-consumer-without-dedupe").unwrap();
        for fixed in [false, true] {
            let (mut run, mut world) = ScenarioRun::start(s, fixed);
            assert!(run.run_to_pause(&mut world, 60_000));
            let t = trace(&world, CheckoutId(0));
            let deliveries: Vec<&Msg> = t.msgs.iter().filter(|m| m.hop == Hop::Delivery).collect();
            assert_eq!(deliveries.len(), 2, "fixed {fixed}: sent, then sent again");
            assert!(deliveries[0].label.starts_with("relay #1: order-"));
            assert!(deliveries[1].label.starts_with("relay #2: order-"));
            assert!(
                kinds(&t, Lane::Server).contains(&"relay-died"),
                "fixed {fixed}: why it was sent again"
            );
            let consumer = kinds(&t, Lane::Receipts);
            let want: &[&str] = if fixed {
                &["receipt", "skipped"]
            } else {
                &["receipt", "receipt-again"]
            };
            assert_eq!(consumer, want, "fixed {fixed}");
            // Each handling is drawn at its delivery's arrowhead, on the consumer's lane.
            let l = layout(&t);
            for spot in l
                .marks
                .iter()
                .filter(|m| t.marks[m.mark].lane == Lane::Receipts)
            {
                assert_eq!(spot.at.0, Lane::Receipts.x());
                assert!(l
                    .arrows
                    .iter()
                    .any(|a| t.msgs[a.msg].hop == Hop::Delivery && a.to == spot.at));
            }
            assert_eq!(clash(&l), None);
            let first = t.msgs.iter().position(|m| m.hop == Hop::Delivery).unwrap();
            assert_eq!(
                knew(&t, first).last().map(String::as_str),
                Some("The page never sees the outbox.")
            );
        }
    }

    #[test]
    fn a_request_is_late_only_when_it_arrived_after_its_page_gave_up_on_it() {
        // A double click without a key: the page drops its first request for the second, but
        // the first still arrives first. Not late; its answer, which the page ignores, is.
        let s = SCENARIOS.iter().find(|s| s.id == "double-click").unwrap();
        let (mut run, mut world) = ScenarioRun::start(s, false);
        run.run_to_pause(&mut world, 60_000);
        world.run_until(world.now() + 5_000);
        let t = trace(&world, CheckoutId(0));
        let requests: Vec<&Msg> = t.msgs.iter().filter(|m| m.hop == Hop::Request).collect();
        assert!(requests[0].arrivals[0] < requests[1].arrivals[0]);
        assert!(!requests[0].late, "it arrived first");
        assert!(
            world.history().messages.iter().any(|m| m.late),
            "the world flags what the page stopped waiting for"
        );
        // A request that reaches the server after its attempt timed out is late.
        let mut w = quiet_world();
        let mut faults = w.config().faults.clone();
        faults.latency_ms = 12_000;
        faults.jitter_ms = 0;
        w.set_faults(faults);
        let c = w.start_checkout(Strategy::SameKey).unwrap();
        w.run_until(20_000);
        let t = trace(&w, c);
        assert!(t.msgs[0].late, "{:?}", t.msgs[0]);
    }
}
