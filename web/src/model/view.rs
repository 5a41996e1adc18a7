//! What the panels show of the world: the claim table, the ledger, the event feed, the
//! localStorage record and the counters, as one [`View`]. The projection (`projection/`)
//! builds each new view from the previous one, keeping each unchanged row's `Rc` (see
//! [`merge_claims`], [`merge_ledger`]) so its row component does not re-render, and bumping a
//! changed row's `version` so it flashes; the reducer only swaps views.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::rc::Rc;

use yew::Reducible;

/// A claim's state in the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClaimStatus {
    /// Claimed, work running, response not saved yet.
    InFlight,
    /// Released after a failure that saved no answer: the lease is over, the key is not (the
    /// same request claims it again, another is 422).
    Released,
    /// Response saved; retries replay it.
    Done,
}

impl ClaimStatus {
    /// The `data-status` value and the label.
    pub fn value(self) -> &'static str {
        match self {
            ClaimStatus::InFlight => "in_flight",
            ClaimStatus::Released => "released",
            ClaimStatus::Done => "done",
        }
    }
}

/// One row of the store's claim table.
#[derive(Clone, Debug, PartialEq)]
pub struct ClaimRow {
    /// Tenant scope.
    pub scope: String,
    /// The idempotency key.
    pub key: String,
    /// First hex digits of the request fingerprint.
    pub fingerprint: String,
    /// In flight, released or done.
    pub status: ClaimStatus,
    /// The saved response, short (`"201 order o-12"`), empty while in flight.
    pub response: String,
    /// When the current lease was taken (in flight; released: the lease that released it).
    pub locked_at: Option<u64>,
    /// The current lease's token (in flight; released: the lease that released it).
    pub token: Option<u64>,
    /// When the current lease goes stale (`locked_at + lock_ms`).
    pub lease_until: Option<u64>,
    /// When the record was created; newest rows are shown first.
    pub created_at: u64,
}

/// A claim row as displayed: the row and how many times it changed.
#[derive(Clone, Debug, PartialEq)]
pub struct ShownClaim {
    /// The data.
    pub row: ClaimRow,
    /// Bumped on every change; the row flashes when it moves.
    pub version: u32,
    /// Virtual time of the snapshot that created or last changed it.
    pub changed_at: u64,
}

/// One order at PayCo.
#[derive(Clone, Debug, PartialEq)]
pub struct LedgerRow {
    /// The order (one checkout).
    pub order: String,
    /// Amount of one charge, in cents.
    pub amount: u64,
    /// How many times PayCo charged it.
    pub charges: u32,
    /// Virtual time of the last charge.
    pub last_at: u64,
}

/// Kinds of feed events, each with a label and a colour class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A new claim: the work runs.
    Claimed,
    /// A saved response was replayed.
    Replayed,
    /// 409: in flight, lease live.
    Conflict,
    /// 422: same key, different request.
    Mismatch,
    /// 400 or 413: bad key or body.
    BadRequest,
    /// 412: the expired-key guard refused a request first sent longer ago than retention.
    KeyExpired,
    /// A stale lease was taken over.
    TakenOver,
    /// A zombie's save or release was refused.
    Fenced,
    /// A response was saved.
    Saved,
    /// A claim was released after a failure.
    Released,
    /// A finished record was pruned.
    Pruned,
    /// PayCo charged a card.
    Charged,
    /// PayCo declined a card: nothing charged (real mode: idem-server's `payco:` note).
    Declined,
    /// The server got no clear answer from PayCo (a timeout, a cut connection): the charge may
    /// or may not have happened, and PayCo's own key settles it on the next attempt (real mode).
    PaycoUnclear,
    /// A message was lost, duplicated or a worker crashed.
    Fault,
    /// Something the client did (send, retry, reload, outcome).
    Client,
    /// Something the server did outside the store's own rules (a classic bug's write).
    Server,
}

impl EventKind {
    /// Short label shown in the feed.
    pub fn label(self) -> &'static str {
        match self {
            EventKind::Claimed => "claimed",
            EventKind::Replayed => "replayed",
            EventKind::Conflict => "409 in flight",
            EventKind::Mismatch => "422 mismatch",
            EventKind::BadRequest => "400 rejected",
            EventKind::KeyExpired => "412 key expired",
            EventKind::TakenOver => "takeover",
            EventKind::Fenced => "fenced",
            EventKind::Saved => "saved",
            EventKind::Released => "released",
            EventKind::Pruned => "pruned",
            EventKind::Charged => "charged",
            EventKind::Declined => "declined",
            EventKind::PaycoUnclear => "PayCo unclear",
            EventKind::Fault => "fault",
            EventKind::Client => "client",
            EventKind::Server => "server",
        }
    }

    /// The `data-kind` value (stable, for tests).
    pub fn value(self) -> &'static str {
        match self {
            EventKind::Claimed => "claimed",
            EventKind::Replayed => "replayed",
            EventKind::Conflict => "409",
            EventKind::Mismatch => "422",
            EventKind::BadRequest => "400",
            EventKind::KeyExpired => "412",
            EventKind::TakenOver => "takeover",
            EventKind::Fenced => "fenced",
            EventKind::Saved => "saved",
            EventKind::Released => "released",
            EventKind::Pruned => "pruned",
            EventKind::Charged => "charged",
            EventKind::Declined => "declined",
            EventKind::PaycoUnclear => "payco-unclear",
            EventKind::Fault => "fault",
            EventKind::Client => "client",
            EventKind::Server => "server",
        }
    }
}

/// One line of the event feed.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRow {
    /// Position in the world's history (unique, increasing).
    pub seq: u64,
    /// Virtual time.
    pub at: u64,
    /// What kind.
    pub kind: EventKind,
    /// The key concerned, if any.
    pub key: String,
    /// One line of detail.
    pub detail: String,
}

/// The browser's localStorage record of the pending checkout, as idem-client wrote it.
#[derive(Clone, Debug, PartialEq)]
pub struct StorageRecord {
    /// The localStorage item name.
    pub storage_key: String,
    /// The idempotency key.
    pub key: String,
    /// The payload bytes, as sent on every attempt.
    pub payload: String,
    /// Attempts sent so far.
    pub attempts: u32,
    /// Pending, unknown, …
    pub state: String,
    /// The raw stored value.
    pub raw: String,
}

/// Totals for the header and the lab line.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Checkouts started.
    pub checkouts: u32,
    /// Checkouts still waiting for an outcome.
    pub pending: u32,
    /// Attempts sent.
    pub attempts: u32,
    /// 409 answers.
    pub conflicts: u32,
    /// 422 answers.
    pub mismatches: u32,
    /// Stale leases taken over.
    pub takeovers: u32,
    /// Zombie writes refused.
    pub fenced: u32,
    /// Checkouts that gave up with an unknown outcome.
    pub unknown: u32,
    /// Charges at PayCo.
    pub charges: u32,
    /// Orders charged more than once.
    pub double_charged: u32,
    /// Receipts the outbox's consumer sent (the simulated world's; `None` in real mode, whose
    /// page does not see the server's consumer).
    pub receipts: Option<u32>,
}

/// Most events the feed keeps.
pub const FEED_CAP: usize = 30;

/// What the panels render.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct View {
    /// Virtual time.
    pub now: u64,
    /// Seed of the run.
    pub seed: u64,
    /// Claim rows, newest first; unchanged rows keep their `Rc`.
    pub claims: Rc<Vec<Rc<ShownClaim>>>,
    /// Ledger rows by order; unchanged rows keep their `Rc`.
    pub ledger: Rc<Vec<Rc<LedgerRow>>>,
    /// Newest events last, at most [`FEED_CAP`].
    pub events: Rc<Vec<Rc<EventRow>>>,
    /// The localStorage record; the same `Rc` while it does not change.
    pub storage: Option<Rc<StorageRecord>>,
    /// Counters.
    pub stats: Stats,
    /// The checkout the cart panel shows (Pay's last, or the scenario's) and its state.
    pub cart: Option<(idem_sim::CheckoutId, &'static str)>,
    /// Pay would resume rather than start.
    pub paying: bool,
    /// Bumped whenever the run log gains an input (the page saves it then).
    pub log_rev: u32,
    /// The scenario's state and the property badges.
    pub live: super::scenario::Live,
    /// Real-server mode's own part: `Some` exactly while the page shows real mode.
    pub real: Option<Rc<super::real::RealInfo>>,
}

/// What the session reports.
#[derive(Clone, Debug, PartialEq)]
pub enum ViewAction {
    /// The world's new view, built by the projection from the previous one.
    Refresh(Rc<View>),
}

impl Reducible for View {
    type Action = ViewAction;

    fn reduce(self: Rc<Self>, action: ViewAction) -> Rc<Self> {
        let ViewAction::Refresh(view) = action;
        view
    }
}

/// The feed after `new` events: the old lines, then the new ones, the last [`FEED_CAP`]; the
/// same `Rc` when nothing arrived.
pub fn append_events(feed: &Rc<Vec<Rc<EventRow>>>, new: Vec<EventRow>) -> Rc<Vec<Rc<EventRow>>> {
    if new.is_empty() {
        return feed.clone();
    }
    let mut all: Vec<Rc<EventRow>> = feed.iter().cloned().collect();
    all.extend(new.into_iter().map(Rc::new));
    let skip = all.len().saturating_sub(FEED_CAP);
    Rc::new(all.split_off(skip))
}

/// The claim table's order: newest record first, then scope, then key.
fn claim_order(a: &ClaimRow, b: &ClaimRow) -> Ordering {
    b.created_at
        .cmp(&a.created_at)
        .then_with(|| a.scope.cmp(&b.scope))
        .then_with(|| a.key.cmp(&b.key))
}

/// Order rows newest first, reuse the `Rc` of every unchanged row and bump changed ones (their
/// `changed_at` becomes `now`). Returns the previous `Rc<Vec>` itself when nothing changed.
/// `prev` is in the same order, so one walk over both lists pairs each row with its old self.
pub fn merge_claims(
    prev: &Rc<Vec<Rc<ShownClaim>>>,
    mut rows: Vec<ClaimRow>,
    now: u64,
) -> Rc<Vec<Rc<ShownClaim>>> {
    rows.sort_unstable_by(claim_order);
    let mut unchanged = rows.len() == prev.len();
    let mut j = 0;
    let merged: Vec<Rc<ShownClaim>> = rows
        .into_iter()
        .enumerate()
        .map(|(i, row)| {
            while j < prev.len() && claim_order(&prev[j].row, &row) == Ordering::Less {
                j += 1;
            }
            let old = prev
                .get(j)
                .filter(|o| claim_order(&o.row, &row) == Ordering::Equal);
            match old {
                Some(o) if o.row == row => {
                    unchanged &= i == j;
                    j += 1;
                    Rc::clone(o)
                }
                Some(o) => {
                    unchanged = false;
                    let version = o.version + 1;
                    j += 1;
                    Rc::new(ShownClaim {
                        row,
                        version,
                        changed_at: now,
                    })
                }
                None => {
                    unchanged = false;
                    Rc::new(ShownClaim {
                        row,
                        version: 0,
                        changed_at: now,
                    })
                }
            }
        })
        .collect();
    if unchanged {
        prev.clone()
    } else {
        Rc::new(merged)
    }
}

/// Ledger rows given oldest order first, in the order the ledger shows them: orders charged more
/// than once first, then the newest first (a partition, not a sort: a sort's code per element
/// type costs the bundle kilobytes). Both modes' ledgers go through it.
pub fn ledger_order(oldest_first: Vec<LedgerRow>) -> Vec<LedgerRow> {
    let (mut doubles, singles): (Vec<_>, Vec<_>) =
        oldest_first.into_iter().rev().partition(|r| r.charges > 1);
    doubles.extend(singles);
    doubles
}

/// Ledger rows in the order given; reuse the `Rc` of every unchanged row.
pub fn merge_ledger(prev: &Rc<Vec<Rc<LedgerRow>>>, rows: Vec<LedgerRow>) -> Rc<Vec<Rc<LedgerRow>>> {
    let old: HashMap<&str, &Rc<LedgerRow>> = prev.iter().map(|r| (r.order.as_str(), r)).collect();
    let mut unchanged = rows.len() == prev.len();
    let merged: Vec<Rc<LedgerRow>> = rows
        .into_iter()
        .enumerate()
        .map(|(i, row)| match old.get(row.order.as_str()) {
            Some(o) if ***o == row => {
                unchanged &= prev.get(i).is_some_and(|p| Rc::ptr_eq(o, p));
                Rc::clone(o)
            }
            _ => {
                unchanged = false;
                Rc::new(row)
            }
        })
        .collect();
    if unchanged {
        prev.clone()
    } else {
        Rc::new(merged)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(key: &str, created_at: u64, status: ClaimStatus) -> ClaimRow {
        ClaimRow {
            scope: "shop".into(),
            key: key.into(),
            fingerprint: "abcd1234".into(),
            status,
            response: String::new(),
            locked_at: Some(created_at),
            token: Some(1),
            lease_until: Some(created_at + 2000),
            created_at,
        }
    }

    /// The view with `rows` merged onto its table, as the projection builds the next one.
    fn snap_onto(v: &View, rows: Vec<ClaimRow>) -> Rc<View> {
        Rc::new(View {
            claims: merge_claims(&v.claims, rows, 0),
            ..View::default()
        })
    }

    #[test]
    fn unchanged_rows_keep_their_rc_and_changed_rows_flash() {
        let v = Rc::new(View::default());
        let s = snap_onto(
            &v,
            vec![
                claim("a", 1, ClaimStatus::InFlight),
                claim("b", 2, ClaimStatus::InFlight),
            ],
        );
        let v = v.reduce(ViewAction::Refresh(s));
        assert_eq!(v.claims[0].row.key, "b", "newest first");
        let (a0, b0) = (v.claims[1].clone(), v.claims[0].clone());
        let s = snap_onto(
            &v,
            vec![
                claim("a", 1, ClaimStatus::Done),
                claim("b", 2, ClaimStatus::InFlight),
            ],
        );
        let v = v.reduce(ViewAction::Refresh(s));
        assert!(Rc::ptr_eq(&v.claims[0], &b0));
        assert!(!Rc::ptr_eq(&v.claims[1], &a0));
        assert_eq!(v.claims[1].version, 1);
        assert_eq!(v.claims[1].row.status, ClaimStatus::Done);
    }

    #[test]
    fn a_new_row_in_front_shifts_the_others_without_a_panic() {
        let v = Rc::new(View::default());
        let s = snap_onto(&v, vec![claim("a", 1, ClaimStatus::InFlight)]);
        let v = v.reduce(ViewAction::Refresh(s));
        let a = v.claims[0].clone();
        let s = snap_onto(
            &v,
            vec![
                claim("a", 1, ClaimStatus::InFlight),
                claim("b", 2, ClaimStatus::InFlight),
            ],
        );
        let v = v.reduce(ViewAction::Refresh(s));
        assert_eq!(v.claims.len(), 2);
        assert!(
            Rc::ptr_eq(&v.claims[1], &a),
            "the unchanged row keeps its Rc at its new index"
        );
        assert_eq!(v.claims[0].version, 0);
    }

    #[test]
    fn an_identical_snapshot_keeps_the_table_rc() {
        let v = Rc::new(View::default());
        let s = snap_onto(&v, vec![claim("a", 1, ClaimStatus::InFlight)]);
        let v = v.reduce(ViewAction::Refresh(s));
        let before = v.claims.clone();
        let s = snap_onto(&v, vec![claim("a", 1, ClaimStatus::InFlight)]);
        let v = v.reduce(ViewAction::Refresh(s));
        assert!(Rc::ptr_eq(&before, &v.claims));
    }

    #[test]
    fn the_feed_is_capped() {
        let mut feed = Rc::new(Vec::new());
        for seq in 0..(FEED_CAP as u64 + 50) {
            let kind = if seq % 2 == 0 {
                EventKind::Conflict
            } else {
                EventKind::Mismatch
            };
            let e = EventRow {
                seq,
                at: seq,
                kind,
                key: "k".into(),
                detail: String::new(),
            };
            feed = append_events(&feed, vec![e]);
        }
        assert_eq!(feed.len(), FEED_CAP);
        assert_eq!(feed.last().unwrap().seq, FEED_CAP as u64 + 49);
        assert!(Rc::ptr_eq(&feed, &append_events(&feed, Vec::new())));
    }

    #[test]
    fn removed_and_added_rows_pair_up_correctly() {
        let prev = merge_claims(
            &Rc::new(Vec::new()),
            vec![
                claim("a", 1, ClaimStatus::Done),
                claim("b", 2, ClaimStatus::Done),
                claim("c", 3, ClaimStatus::Done),
            ],
            0,
        );
        let (a, c) = (prev[2].clone(), prev[0].clone());
        // b pruned, d new, c changed.
        let next = merge_claims(
            &prev,
            vec![
                claim("a", 1, ClaimStatus::Done),
                claim("c", 3, ClaimStatus::InFlight),
                claim("d", 4, ClaimStatus::InFlight),
            ],
            9,
        );
        let keys: Vec<&str> = next.iter().map(|c| c.row.key.as_str()).collect();
        assert_eq!(keys, ["d", "c", "a"]);
        assert!(Rc::ptr_eq(&next[2], &a));
        assert_eq!((next[1].version, next[1].changed_at), (c.version + 1, 9));
        assert_eq!(next[0].version, 0);
    }

    #[test]
    fn the_ledger_shows_double_charges_first_then_the_newest() {
        let row = |order: &str, charges| LedgerRow {
            order: order.into(),
            amount: 1,
            charges,
            last_at: 0,
        };
        let rows = ledger_order(vec![
            row("a", 1),
            row("b", 2),
            row("c", 1),
            row("d", 3),
            row("e", 1),
        ]);
        let got: Vec<(&str, u32)> = rows.iter().map(|r| (r.order.as_str(), r.charges)).collect();
        assert_eq!(got, [("d", 3), ("b", 2), ("e", 1), ("c", 1), ("a", 1)]);
    }

    #[test]
    fn ledger_rows_are_reused_when_equal() {
        let row = |charges| LedgerRow {
            order: "o-1".into(),
            amount: 100,
            charges,
            last_at: 5,
        };
        let prev = merge_ledger(&Rc::new(Vec::new()), vec![row(1)]);
        let same = merge_ledger(&prev, vec![row(1)]);
        assert!(Rc::ptr_eq(&prev, &same));
        let next = merge_ledger(&prev, vec![row(2)]);
        assert_eq!(next[0].charges, 2);
    }
}
