//! The timeline's data: one lane per checkout, its attempts as bars, the fault windows behind,
//! and for one attempt what the client knew against what really happened.
//!
//! "What really happened" is read from the simulator's ground truth that a real client never
//! sees: PayCo's ledger (charges carry the checkout) and the store's event log (events carry
//! the key and the time).

use idem_sim::{AttemptResult, CheckoutId, CheckoutOutcome, InfoCause, World};
use idem_store::EventKind as StoreEvent;

use super::run_log::{Command, RunLog};
use super::settings::{NetworkSettings, ServerSettings, Strategy};

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

fn strategy_name(s: idem_sim::Strategy) -> &'static str {
    match s {
        idem_sim::Strategy::NoKey => Strategy::NoKey.value(),
        idem_sim::Strategy::KeyPerAttempt => Strategy::KeyPerTry.value(),
        idem_sim::Strategy::SameKey => Strategy::SameKey.value(),
    }
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
                strategy: strategy_name(rec.strategy),
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

/// When each fault was on, from the run log's settings, up to `now`; one-shot drops are
/// 1 ms marks.
pub fn fault_windows(log: &RunLog, now: u64) -> Vec<FaultWindow> {
    const KINDS: [&str; 4] = ["request-loss", "response-loss", "crash", "slow"];
    fn on(n: &NetworkSettings, s: &ServerSettings) -> [bool; 4] {
        [
            n.request_loss > 0,
            n.response_loss > 0,
            s.crash_after_charge,
            s.slow_worker,
        ]
    }
    let (mut net, mut srv) = (log.network.clone(), log.server.clone());
    let mut since: [Option<u64>; 4] = on(&net, &srv).map(|b| b.then_some(0));
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
    for e in &log.entries {
        match &e.command {
            Command::Network(n) => net = n.clone(),
            Command::Server(s) => srv = s.clone(),
            Command::DropNextRequest | Command::DropNextResponse => {
                let kind = if e.command == Command::DropNextRequest {
                    "drop-request"
                } else {
                    "drop-response"
                };
                out.push(FaultWindow {
                    kind,
                    from: e.at,
                    to: e.at + 1,
                });
                continue;
            }
            _ => continue,
        }
        close(&mut since, on(&net, &srv), e.at, &mut out);
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

/// Details of attempt `n` of checkout `checkout`, or `None` if there is no such attempt.
pub fn details(world: &World, checkout: u32, n: u32) -> Option<Details> {
    let id = CheckoutId(checkout);
    let rec = world.checkout(id)?;
    let lane = lanes(world, checkout as usize..checkout as usize + 1).pop()?;
    let bar = lane.bars.iter().find(|b| b.n == n)?.clone();
    let attempt = world
        .attempts_of(id)
        .into_iter()
        .find(|a| a.n == n)
        .copied();
    let key = attempt.and_then(|a| a.key).or(rec.key);
    let key_text = key.map(|k| k.to_string());
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
    let (from, to) = (bar.from, bar.to);
    let charges: Vec<u64> = world
        .payco()
        .charges()
        .iter()
        .filter(|c| c.checkout == id && c.at >= from && c.at <= to)
        .map(|c| c.at)
        .collect();
    let mut seen = Vec::new();
    if let Some(k) = &key_text {
        for e in world.store().events_since(0) {
            if e.key() != Some(k.as_str()) || e.at() < from || e.at() > to {
                continue;
            }
            let what = match e.kind() {
                StoreEvent::Claimed { .. } => "claimed",
                StoreEvent::Replayed { .. } => "replayed",
                StoreEvent::Rejected { status, .. } if *status == 409 => "409 in flight",
                StoreEvent::Rejected { status, .. } if *status == 422 => "422 mismatch",
                StoreEvent::Rejected { .. } => "rejected",
                StoreEvent::TakenOver { .. } => "taken over",
                StoreEvent::Fenced { .. } => "fenced",
                StoreEvent::Saved { .. } => "saved",
                StoreEvent::Released { .. } => "released",
                StoreEvent::Pruned => "pruned",
                StoreEvent::Note { .. } => continue,
            };
            if seen.len() < 6 {
                seen.push(format!("{what} at {} ms", e.at()));
            }
        }
    }
    for at in &charges {
        really.push(format!("PayCo charged this order at {at} ms."));
    }
    if !seen.is_empty() {
        really.push(format!("The store saw this key: {}.", seen.join(", ")));
    }
    let arrived = !charges.is_empty() || !seen.is_empty();
    match (bar.outcome, arrived, bar.open) {
        (Outcome::Unknown, true, false) => really
            .push("The request arrived and the server acted: the response was lost or late.".into()),
        (Outcome::Unknown, false, false) => really.push(
            "No charge and no server record during this attempt: the request was lost on the way."
                .into(),
        ),
        (Outcome::Ok, _, _) if charges.is_empty() => {
            really.push("No new charge during this attempt: the server answered from its table (or an earlier charge).".into())
        }
        _ => {}
    }
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
    use crate::model::settings::Settings;

    #[test]
    fn fault_windows_follow_the_settings() {
        let s = Settings::default();
        let mut log = RunLog::new(1, Strategy::SameKey, s.network(), s.server());
        let mut lossy = s.network();
        lossy.response_loss = 2_000;
        log.push(100, 3, Command::Network(lossy));
        log.push(150, 4, Command::DropNextRequest);
        let mut slow = s.server();
        slow.slow_worker = true;
        log.push(200, 5, Command::Server(slow));
        log.push(300, 6, Command::Network(s.network()));
        let w = fault_windows(&log, 1_000);
        let find = |k| w.iter().find(|f| f.kind == k).map(|f| (f.from, f.to));
        assert_eq!(find("response-loss"), Some((100, 300)));
        assert_eq!(find("drop-request"), Some((150, 151)));
        assert_eq!(find("slow"), Some((200, 1_000)));
        assert_eq!(find("request-loss"), None);
    }
}
