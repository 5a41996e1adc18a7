//! The timeline's data: one lane per checkout, its attempts as bars, the fault windows behind,
//! and for one attempt what the client knew against what really happened.
//!
//! "What really happened" is read from the simulator's ground truth that a real client never
//! sees: the history's message log (each message's fate, the store's decision at each arrival,
//! the end of the work, PayCo's decisions; `idem_sim::history::messages`).

use idem_sim::{
    AttemptResult, CheckoutId, CheckoutOutcome, Command, Decision, Fate, Faults, History,
    InfoCause, Message, MessageKind, PaycoDecision, StepKind, WorkEnd, World,
};

use crate::model::run_log::RunLog;

/// An attempt's outcome as the client saw it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A 2xx with a receipt.
    Ok,
    /// A definite refusal (409, 422, 4xx): nothing changed.
    Fail,
    /// No answer (timeout, 5xx, reload) or still out.
    Unknown,
}

impl Outcome {
    /// The `data-outcome` value.
    pub fn value(self) -> &'static str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Fail => "fail",
            Outcome::Unknown => "unknown",
        }
    }
}

/// One attempt's bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// 1-based attempt number.
    pub n: u32,
    /// Sent at (virtual ms).
    pub from: u64,
    /// Ended at, or now when still out.
    pub to: u64,
    /// What the client saw.
    pub outcome: Outcome,
    /// Short label: `201`, `409`, `timeout`…
    pub label: String,
    /// Still out: no answer yet (drawn open-ended).
    pub open: bool,
}

/// One checkout's lane.
#[derive(Clone, Debug, PartialEq)]
pub struct Lane {
    /// The checkout's number (`co_N`).
    pub checkout: u32,
    /// How its page uses keys.
    pub strategy: &'static str,
    /// How it ended so far.
    pub state: &'static str,
    /// Its attempts, oldest first.
    pub bars: Vec<Bar>,
}

/// A stretch of time when a fault was switched on (or a one-shot drop was armed).
#[derive(Clone, Debug, PartialEq)]
pub struct FaultWindow {
    /// CSS class suffix and label.
    pub kind: &'static str,
    /// Start (virtual ms).
    pub from: u64,
    /// End (virtual ms).
    pub to: u64,
}

fn outcome_name(o: &CheckoutOutcome) -> &'static str {
    match o {
        CheckoutOutcome::Pending => "pending",
        CheckoutOutcome::Paid { replayed: true, .. } => "paid (replay)",
        CheckoutOutcome::Paid { .. } => "paid",
        CheckoutOutcome::Rejected { .. } => "rejected",
        CheckoutOutcome::Unknown => "unknown",
    }
}

fn cause_name(c: InfoCause) -> &'static str {
    match c {
        InfoCause::Timeout => "timeout",
        InfoCause::ServerError => "5xx",
        InfoCause::Reloaded => "reloaded",
        InfoCause::Abandoned => "abandoned",
    }
}

fn bar_of(result: &AttemptResult) -> (Outcome, String) {
    match result {
        AttemptResult::Ok { status, .. } => (Outcome::Ok, status.to_string()),
        AttemptResult::Fail { status } => (Outcome::Fail, status.to_string()),
        AttemptResult::Info { cause } => (Outcome::Unknown, cause_name(*cause).to_string()),
    }
}

/// The lanes of checkouts `range` (by index), as of `now`.
pub fn lanes(world: &World, range: std::ops::Range<usize>) -> Vec<Lane> {
    let now = world.now();
    let checkouts = world.checkouts();
    let range = range.start.min(checkouts.len())..range.end.min(checkouts.len());
    checkouts[range]
        .iter()
        .map(|rec| {
            let mut bars: Vec<Bar> = world
                .attempts_of(rec.id)
                .into_iter()
                .map(|a| {
                    let (outcome, label) = bar_of(&a.result);
                    Bar {
                        n: a.n,
                        from: a.sent_at,
                        to: a.ended_at,
                        outcome,
                        label,
                        open: false,
                    }
                })
                .collect();
            // The attempt the page has sent and not heard back from is not in the history yet.
            if rec.outcome == CheckoutOutcome::Pending && rec.attempts as usize > bars.len() {
                let from = bars.last().map_or(rec.started_at, |b| b.to);
                bars.push(Bar {
                    n: rec.attempts,
                    from,
                    to: now,
                    outcome: Outcome::Unknown,
                    label: "in flight".to_string(),
                    open: true,
                });
            }
            Lane {
                checkout: rec.id.0,
                strategy: rec.strategy.name(),
                state: outcome_name(&rec.outcome),
                bars,
            }
        })
        .collect()
}

/// The stretch of virtual time the lanes show: from the first checkout's start to the last
/// attempt's end (or now, while a checkout is pending), so bars keep a readable width however
/// long the run has idled since.
pub fn domain(world: &World) -> (u64, u64) {
    let now = world.now();
    let checkouts = world.checkouts();
    let Some(start) = checkouts.iter().map(|c| c.started_at).min() else {
        return (0, now.max(1));
    };
    let pending = checkouts
        .iter()
        .any(|c| c.outcome == CheckoutOutcome::Pending);
    let last = world
        .history()
        .attempts
        .iter()
        .map(|a| a.ended_at)
        .max()
        .unwrap_or(start);
    let end = if pending { now } else { last.min(now) };
    // A little room after the last bar.
    let end = end + (end - start) / 50 + 1;
    (start, end)
}

/// When each fault was on, from the world's faults at time 0 and every `SetFaults` the page
/// applied, up to `now`; one-shot drops are 1 ms marks.
pub fn fault_windows(log: &RunLog, now: u64) -> Vec<FaultWindow> {
    const KINDS: [&str; 4] = ["request-loss", "response-loss", "crash", "slow"];
    fn on(f: &Faults) -> [bool; 4] {
        [
            f.drop_request > 0.0,
            f.drop_response > 0.0,
            f.crash_after_charge > 0.0,
            f.slow_worker > 0.0,
        ]
    }
    let mut since: [Option<u64>; 4] = on(&log.faults()).map(|b| b.then_some(0));
    let mut out = Vec::new();
    let close = |since: &mut [Option<u64>; 4], state: [bool; 4], at: u64, out: &mut Vec<_>| {
        for i in 0..4 {
            match (since[i], state[i]) {
                (Some(from), false) => {
                    out.push(FaultWindow {
                        kind: KINDS[i],
                        from,
                        to: at,
                    });
                    since[i] = None;
                }
                (None, true) => since[i] = Some(at),
                _ => {}
            }
        }
    };
    for input in &log.inputs {
        let mark = match &input.command {
            Command::SetFaults(f) => {
                close(&mut since, on(f), input.at, &mut out);
                continue;
            }
            Command::DropNextRequest => "drop-request",
            Command::DropNextResponse => "drop-response",
            _ => continue,
        };
        out.push(FaultWindow {
            kind: mark,
            from: input.at,
            to: input.at + 1,
        });
    }
    close(&mut since, [false; 4], now, &mut out);
    out
}

/// What the client knew about one attempt, and what really happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Details {
    /// `co_N`, attempt n.
    pub title: String,
    /// The client's view.
    pub knew: String,
    /// The ground truth, one line each.
    pub really: Vec<String>,
}

/// What the store decided, in words.
fn decision_text(d: Decision) -> &'static str {
    match d {
        Decision::Claimed { .. } => "claimed: the work ran",
        Decision::TakenOver { .. } => "took the stale claim over: the work ran again",
        Decision::Unkeyed => "no key: the work ran unprotected",
        Decision::Replayed => "replayed the saved answer",
        Decision::InFlight => "409 in flight",
        Decision::Mismatch => "422 mismatch",
        Decision::KeyExpired => "412 key expired: not run again",
        Decision::Invalid { .. } => "refused the request (400)",
    }
}

/// How the work ended, in words.
fn end_text(e: WorkEnd) -> String {
    match e {
        WorkEnd::Saved { status } => format!("saved its {status} and answered"),
        WorkEnd::Released { status } => format!("released the claim and answered {status}"),
        WorkEnd::Fenced => "was fenced: its claim had been taken over".to_string(),
        WorkEnd::Answered { status } => format!("answered {status}"),
        WorkEnd::Crashed => "crashed after the charge: nothing saved, nothing answered".to_string(),
    }
}

/// The lines for one request of the attempt: its fate on the way, the store's decision at each
/// arrival, the work it started, PayCo, and its answers' fates.
fn request_lines(h: &History, id: u32, m: &Message, out: &mut Vec<String>) {
    match m.fate {
        Fate::Lost => {
            out.push(format!(
                "The request sent at {} ms was lost on the way: the server never saw it.",
                m.sent_at
            ));
            return;
        }
        Fate::Duplicated { at, again } => out.push(format!(
            "The request sent at {} ms arrived twice (the network duplicated it), at {at} and {again} ms.",
            m.sent_at
        )),
        Fate::Delivered { at } => out.push(format!(
            "The request sent at {} ms arrived at {at} ms{}.",
            m.sent_at,
            if m.late {
                ", after the page had stopped waiting"
            } else {
                ""
            }
        )),
    }
    for s in &h.steps {
        match s.kind {
            StepKind::Decided { request, decision } if request == id => out.push(format!(
                "The store at {} ms: {}.",
                s.at,
                decision_text(decision)
            )),
            StepKind::Worked { request, end } if request == id => {
                out.push(format!("The worker at {} ms {}.", s.at, end_text(end)))
            }
            StepKind::DeclinedUnasked { request } if request == id => out.push(format!(
                "The worker at {} ms declined the card without asking PayCo.",
                s.at
            )),
            _ => {}
        }
    }
    for resp in h.messages.iter() {
        let MessageKind::Response {
            request, status, ..
        } = resp.kind
        else {
            continue;
        };
        if request != id {
            continue;
        }
        out.push(match resp.fate {
            Fate::Lost => format!(
                "Its {status} answer, sent at {} ms, was lost on the way back.",
                resp.sent_at
            ),
            Fate::Delivered { at } | Fate::Duplicated { at, .. } if resp.late => format!(
                "Its {status} answer arrived at {at} ms, after the page had stopped waiting."
            ),
            Fate::Delivered { at } | Fate::Duplicated { at, .. } => {
                format!("Its {status} answer arrived at {at} ms.")
            }
        });
    }
}

/// PayCo's part in the attempt: each call the work made, and what PayCo decided.
fn payco_lines(h: &History, checkout: CheckoutId, n: u32, out: &mut Vec<String>) {
    for (i, call) in h.messages.iter().enumerate() {
        let MessageKind::Charge { order, .. } = call.kind else {
            continue;
        };
        if call.checkout != checkout || call.attempt != n {
            continue;
        }
        if call.fate == Fate::Lost {
            out.push(format!(
                "The call to PayCo for {order} at {} ms was lost: PayCo never saw it.",
                call.sent_at
            ));
            continue;
        }
        for s in &h.steps {
            let StepKind::Paid { call: c, decision } = s.kind else {
                continue;
            };
            if c as usize != i {
                continue;
            }
            out.push(match decision {
                PaycoDecision::Charged { charge } => {
                    format!("PayCo charged this order at {} ms ({charge}).", s.at)
                }
                PaycoDecision::Deduped {
                    charge: Some(charge),
                } => format!(
                    "PayCo knew the key at {} ms: {charge} again, no money moved.",
                    s.at
                ),
                PaycoDecision::Deduped { charge: None } => format!(
                    "PayCo knew the key at {} ms: its saved decline, no money moved.",
                    s.at
                ),
                PaycoDecision::Declined => format!("PayCo declined the card at {} ms.", s.at),
            });
        }
    }
}

/// Details of attempt `n` of checkout `checkout`, or `None` if there is no such attempt.
pub fn details(world: &World, checkout: u32, n: u32) -> Option<Details> {
    let id = CheckoutId(checkout);
    world.checkout(id)?;
    let lane = lanes(world, checkout as usize..checkout as usize + 1).pop()?;
    let bar = lane.bars.iter().find(|b| b.n == n)?.clone();
    let attempt = world
        .attempts_of(id)
        .into_iter()
        .find(|a| a.n == n)
        .copied();
    let title = format!("{id}, attempt {n}");
    let knew = match attempt.map(|a| a.result) {
        Some(AttemptResult::Ok {
            status, replayed, ..
        }) => format!(
            "{status}{}: paid, receipt in hand.",
            if replayed {
                " (Idempotent-Replayed)"
            } else {
                ""
            }
        ),
        Some(AttemptResult::Fail { status }) => {
            format!("{status}: a definite refusal; this attempt changed nothing.")
        }
        Some(AttemptResult::Info { cause }) => match cause {
            InfoCause::Timeout => "No answer before the timeout: outcome unknown.".into(),
            InfoCause::ServerError => "5xx: the work may or may not have run.".into(),
            InfoCause::Reloaded => "The tab reloaded while it was out: outcome unknown.".into(),
            InfoCause::Abandoned => "The page stopped waiting (the checkout ended).".into(),
        },
        None => "Sent, no answer yet: waiting.".into(),
    };
    let mut really = Vec::new();
    if bar.open {
        really.push("Still running: the answer has not come back yet.".to_string());
    }
    let h = world.history();
    for (i, m) in h.messages.iter().enumerate() {
        let request = matches!(m.kind, MessageKind::Request { .. });
        if request && m.checkout == id && m.attempt == n {
            request_lines(h, i as u32, m, &mut really);
        }
    }
    payco_lines(h, id, n, &mut really);
    really.push(format!("Checkout {}: {}.", id, lane.state));
    Some(Details {
        title,
        knew,
        really,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::run_log::input;
    use crate::model::settings::{self, NetworkSettings, ServerSettings, Settings};
    use idem_sim::{SimConfig, Strategy};

    #[test]
    fn fault_windows_follow_the_faults() {
        let s = Settings::default();
        let mut log = RunLog::new(1, Strategy::SameKey, s.network(), s.server());
        let mut lossy = s.network();
        lossy.response_loss = 2_000;
        fn faults(n: &NetworkSettings, srv: &ServerSettings) -> Command {
            Command::SetFaults(settings::faults(n, srv))
        }
        log.push(input(100, 3, faults(&lossy, &s.server())));
        log.push(input(150, 4, Command::DropNextRequest));
        let mut slow = s.server();
        slow.slow_worker = true;
        log.push(input(200, 5, faults(&lossy, &slow)));
        log.push(input(300, 6, faults(&s.network(), &slow)));
        let w = fault_windows(&log, 1_000);
        let find = |k| w.iter().find(|f| f.kind == k).map(|f| (f.from, f.to));
        assert_eq!(find("response-loss"), Some((100, 300)));
        assert_eq!(find("drop-request"), Some((150, 151)));
        assert_eq!(find("slow"), Some((200, 1_000)));
        assert_eq!(find("request-loss"), None);
    }

    fn quiet_world() -> World {
        let mut config = SimConfig::default();
        config.workload.orders = 0;
        config.faults.jitter_ms = 0;
        World::new(config)
    }

    #[test]
    fn what_really_happened_to_a_lost_response_comes_from_the_message_log() {
        let mut w = quiet_world();
        w.drop_next_response();
        w.start_checkout(Strategy::SameKey).unwrap();
        w.finish();
        let d = details(&w, 0, 1).unwrap();
        let text = d.really.join("\n");
        assert!(text.contains("arrived at 20 ms"), "{text}");
        assert!(text.contains("The store at 20 ms: claimed"), "{text}");
        assert!(text.contains("PayCo charged this order"), "{text}");
        assert!(text.contains("saved its 201"), "{text}");
        assert!(text.contains("lost on the way back"), "{text}");
        let retry = details(&w, 0, 2).unwrap().really.join("\n");
        assert!(retry.contains("replayed the saved answer"), "{retry}");
        assert!(retry.contains("Its 201 answer arrived"), "{retry}");
    }

    #[test]
    fn a_lost_request_is_said_lost_and_nothing_else_happened() {
        let mut w = quiet_world();
        w.drop_next_request();
        w.start_checkout(Strategy::SameKey).unwrap();
        w.finish();
        let d = details(&w, 0, 1).unwrap();
        assert!(d.really[0].contains("lost on the way"), "{:?}", d.really);
        assert_eq!(
            d.really.len(),
            2,
            "the loss and the checkout's state: {:?}",
            d.really
        );
    }

    #[test]
    fn a_crash_and_the_takeover_show_paycos_dedupe() {
        let mut w = quiet_world();
        w.crash_next_after_charge();
        w.start_checkout(Strategy::SameKey).unwrap();
        w.finish();
        let all: Vec<String> = (1..=w.checkout(CheckoutId(0)).unwrap().attempts)
            .flat_map(|n| details(&w, 0, n).unwrap().really)
            .collect();
        let text = all.join("\n");
        assert!(text.contains("crashed after the charge"), "{text}");
        assert!(text.contains("took the stale claim over"), "{text}");
        assert!(text.contains("no money moved"), "{text}");
    }
}
