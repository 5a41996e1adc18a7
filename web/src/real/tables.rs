//! The server's claim table and event feed rebuilt from its event stream, as
//! crates/server/README.md ("The event stream") says a page does: each event changes at most
//! one row of the tenant's table, and makes one line of the feed. Pure: fed events, read
//! rows, so it is unit-tested natively.
//!
//! Times in the rows are milliseconds since the session's start (`t0`), as the simulated
//! panels count virtual time from the run's start.

use super::parse::{payco_said, PaycoSaid};
use crate::model::real::{ServerEvent, ServerEventKind};
use crate::model::view::{ClaimRow, ClaimStatus, EventKind, EventRow};
use crate::projection::claims::status_text;
use crate::projection::feed::short;

/// The tables one event stream has built so far.
#[derive(Debug, Default)]
pub struct Tables {
    /// The claim table (a session's few rows: a list, found by key).
    claims: Vec<ClaimRow>,
    /// Feed lines not handed to the view yet.
    lines: Vec<EventRow>,
    /// 409s and 422s answered (the feed shows the last lines only; these count them all).
    pub conflicts: u32,
    /// 422s answered.
    pub mismatches: u32,
    /// Stale claims taken over.
    pub takeovers: u32,
    /// Writes by lost leases refused.
    pub fenced: u32,
}

impl Tables {
    /// Applies one event of the tenant's stream: `scope` is the tenant, `t0` the session's
    /// start, `lock_ms` the server's lease length (for the lease countdown).
    pub fn apply(&mut self, e: &ServerEvent, scope: &str, t0: u64, lock_ms: u64) {
        let at = e.at.saturating_sub(t0);
        let row = |claims| row(claims, &e.key, scope, at);
        let lease = |r: &mut ClaimRow, token: u64| {
            r.status = ClaimStatus::InFlight;
            r.locked_at = Some(at);
            r.token = Some(token);
            r.lease_until = Some(at.saturating_add(lock_ms));
        };
        // The line: a fixed text and the number that matters (a lease, a status), or a note's
        // own text (one number-to-text call for all kinds keeps the bundle lean).
        let (kind, text, n) = match &e.kind {
            ServerEventKind::Claimed(token) => {
                // A released key claimed again by its own request keeps its row (and when it
                // was first claimed); any other claim is of a key the table no longer holds.
                let again = self
                    .claims
                    .iter()
                    .any(|r| r.key == e.key && r.status == ClaimStatus::Released);
                if !again {
                    self.remove(&e.key);
                }
                lease(row(&mut self.claims), *token);
                (
                    EventKind::Claimed,
                    "claimed: the work runs, lease #",
                    *token,
                )
            }
            ServerEventKind::TakenOver(_, new) => {
                self.takeovers += 1;
                lease(row(&mut self.claims), *new);
                (EventKind::TakenOver, "stale lease taken over by #", *new)
            }
            ServerEventKind::Saved(_, status) => {
                let r = row(&mut self.claims);
                r.status = ClaimStatus::Done;
                r.response = status_text(*status);
                (r.locked_at, r.token, r.lease_until) = (None, None, None);
                (EventKind::Saved, "saved the answer ", u64::from(*status))
            }
            ServerEventKind::Released(token) => {
                // The lease is over, not the key: the row stays, bound to its request.
                let r = row(&mut self.claims);
                r.status = ClaimStatus::Released;
                r.token = Some(*token);
                r.lease_until = None;
                (EventKind::Released, "released lease #", *token)
            }
            ServerEventKind::Fenced(token) => {
                self.fenced += 1;
                (
                    EventKind::Fenced,
                    "refused the write of lost lease #",
                    *token,
                )
            }
            ServerEventKind::Replayed(status) => (
                EventKind::Replayed,
                "replayed the saved ",
                u64::from(*status),
            ),
            ServerEventKind::Rejected(status) => {
                let kind = match status {
                    409 => {
                        self.conflicts += 1;
                        EventKind::Conflict
                    }
                    422 => {
                        self.mismatches += 1;
                        EventKind::Mismatch
                    }
                    412 => EventKind::KeyExpired,
                    _ => EventKind::BadRequest,
                };
                (kind, "refused: ", u64::from(*status))
            }
            ServerEventKind::Pruned => {
                self.remove(&e.key);
                (EventKind::Pruned, "pruned after retention", 0)
            }
            ServerEventKind::Note(note) => {
                // idem-server's notes of PayCo's answer (`checkout/create.rs` `payco_note`): each is what
                // it says, not every one a charge.
                let kind = if let Some(said) = note.strip_prefix("payco: ") {
                    match payco_said(said) {
                        PaycoSaid::Charged(_) => EventKind::Charged,
                        PaycoSaid::Declined => EventKind::Declined,
                        PaycoSaid::Unclear => EventKind::PaycoUnclear,
                    }
                } else if note.starts_with("fault:") {
                    EventKind::Fault
                } else {
                    EventKind::Client
                };
                (kind, note.as_str(), 0)
            }
        };
        let number = if n > 0 { n.to_string() } else { String::new() };
        let label = if e.key.is_empty() { "" } else { short(&e.key) };
        let detail = [
            label,
            if label.is_empty() { "" } else { " " },
            text,
            &number,
        ]
        .concat();
        self.lines.push(EventRow {
            seq: e.seq,
            at,
            kind,
            key: e.key.clone(),
            detail,
        });
    }

    fn remove(&mut self, key: &str) {
        self.claims.retain(|r| r.key != key);
    }

    /// Adds the rows the server's claim table holds (`GET /api/claims`, server times) that no
    /// event has built: after an idem-server restart the stream's history starts empty, but the
    /// table is durable. A row an event already built is left as the events made it.
    pub fn seed(&mut self, rows: Vec<ClaimRow>, t0: u64, lock_ms: u64) {
        for mut r in rows {
            if self.claims.iter().any(|c| c.key == r.key) {
                continue;
            }
            r.created_at = r.created_at.saturating_sub(t0);
            r.locked_at = r.locked_at.map(|at| at.saturating_sub(t0));
            r.lease_until = r.locked_at.map(|at| at.saturating_add(lock_ms));
            self.claims.push(r);
        }
    }

    /// The claim rows now (any order: the view sorts them).
    pub fn rows(&self) -> Vec<ClaimRow> {
        self.claims.clone()
    }

    /// How many claims are in flight.
    pub fn in_flight(&self) -> usize {
        self.claims
            .iter()
            .filter(|r| r.status == ClaimStatus::InFlight)
            .count()
    }

    /// The feed lines made since the last call.
    pub fn take_lines(&mut self) -> Vec<EventRow> {
        std::mem::take(&mut self.lines)
    }
}

/// The row of `key`; one whose claim fell out of the server's bounded log starts here.
fn row<'a>(claims: &'a mut Vec<ClaimRow>, key: &str, scope: &str, at: u64) -> &'a mut ClaimRow {
    let i = match claims.iter().position(|r| r.key == key) {
        Some(i) => i,
        None => {
            claims.push(ClaimRow {
                scope: scope.to_owned(),
                key: key.to_owned(),
                fingerprint: "—".into(),
                status: ClaimStatus::InFlight,
                response: String::new(),
                locked_at: None,
                token: None,
                lease_until: None,
                created_at: at,
            });
            claims.len() - 1
        }
    };
    &mut claims[i]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(seq: u64, at: u64, key: &str, kind: ServerEventKind) -> ServerEvent {
        ServerEvent {
            seq,
            at,
            key: key.into(),
            kind,
        }
    }

    #[test]
    fn a_crash_and_its_takeover_end_in_one_done_row() {
        let mut t = Tables::default();
        let t0 = 1_000_000;
        for e in [
            ev(1, t0 + 10, "k1", ServerEventKind::Claimed(7)),
            ev(
                2,
                t0 + 20,
                "k1",
                ServerEventKind::Note("payco: charged ch_1".into()),
            ),
            ev(
                3,
                t0 + 30,
                "k1",
                ServerEventKind::Note("fault: crash-after-charge: x".into()),
            ),
            ev(4, t0 + 500, "k1", ServerEventKind::Rejected(409)),
        ] {
            t.apply(&e, "demo-a", t0, 3_000);
        }
        let rows = t.rows();
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(
            (r.status, r.token, r.locked_at, r.lease_until),
            (ClaimStatus::InFlight, Some(7), Some(10), Some(3_010))
        );
        assert_eq!((r.scope.as_str(), r.created_at), ("demo-a", 10));
        assert_eq!(t.in_flight(), 1);
        t.apply(
            &ev(5, t0 + 3_100, "k1", ServerEventKind::TakenOver(7, 8)),
            "demo-a",
            t0,
            3_000,
        );
        let r = &t.rows()[0];
        assert_eq!(
            (r.token, r.locked_at, r.created_at),
            (Some(8), Some(3_100), 10)
        );
        t.apply(
            &ev(6, t0 + 3_200, "k1", ServerEventKind::Saved(8, 201)),
            "demo-a",
            t0,
            3_000,
        );
        let r = &t.rows()[0];
        assert_eq!(
            (r.status, r.response.as_str(), r.token),
            (ClaimStatus::Done, "201 Created", None)
        );
        assert_eq!((t.takeovers, t.conflicts), (1, 1));
        let kinds: Vec<EventKind> = t.take_lines().iter().map(|l| l.kind).collect();
        assert_eq!(
            kinds,
            [
                EventKind::Claimed,
                EventKind::Charged,
                EventKind::Fault,
                EventKind::Conflict,
                EventKind::TakenOver,
                EventKind::Saved
            ]
        );
        assert!(t.take_lines().is_empty(), "lines are handed over once");
    }

    #[test]
    fn seeding_adds_the_servers_rows_no_event_built() {
        let mut t = Tables::default();
        t.apply(
            &ev(1, 1_010, "k1", ServerEventKind::Claimed(7)),
            "s",
            1_000,
            100,
        );
        let seeded = |key: &str, status| ClaimRow {
            scope: "s".into(),
            key: key.into(),
            fingerprint: "0a1b".into(),
            status,
            response: String::new(),
            locked_at: Some(1_050),
            token: Some(1),
            lease_until: None,
            created_at: 1_040,
        };
        t.seed(
            vec![
                seeded("k1", ClaimStatus::Done),
                seeded("k2", ClaimStatus::InFlight),
            ],
            1_000,
            100,
        );
        let rows = t.rows();
        assert_eq!(rows.len(), 2);
        // k1 stays as its events made it; k2 is the server's, in session time with its lease.
        assert_eq!(
            (rows[0].key.as_str(), rows[0].status),
            ("k1", ClaimStatus::InFlight)
        );
        assert_eq!(
            (
                rows[1].key.as_str(),
                rows[1].status,
                rows[1].created_at,
                rows[1].locked_at,
                rows[1].lease_until
            ),
            ("k2", ClaimStatus::InFlight, 40, Some(50), Some(150))
        );
    }

    #[test]
    fn payco_notes_are_labelled_as_what_payco_said() {
        let mut t = Tables::default();
        for (seq, note) in [
            "payco: charged ch_1 for order 1 (1200 cents)",
            "payco: declined order 2",
            "payco: no clear answer for order 3: timed out",
        ]
        .into_iter()
        .enumerate()
        {
            let e = ev(seq as u64 + 1, 10, "k", ServerEventKind::Note(note.into()));
            t.apply(&e, "s", 0, 100);
        }
        let kinds: Vec<EventKind> = t.take_lines().iter().map(|l| l.kind).collect();
        assert_eq!(
            kinds,
            [
                EventKind::Charged,
                EventKind::Declined,
                EventKind::PaycoUnclear
            ]
        );
    }

    #[test]
    fn a_released_row_stays_until_claimed_again_and_pruned_rows_go() {
        let mut t = Tables::default();
        t.apply(&ev(1, 10, "a", ServerEventKind::Claimed(1)), "s", 0, 100);
        t.apply(&ev(2, 20, "b", ServerEventKind::Claimed(2)), "s", 0, 100);
        t.apply(&ev(3, 30, "a", ServerEventKind::Released(1)), "s", 0, 100);
        let a = t.rows().into_iter().find(|r| r.key == "a").expect("kept");
        assert_eq!(
            (a.status, a.token, a.lease_until, a.created_at),
            (ClaimStatus::Released, Some(1), None, 10)
        );
        assert_eq!(t.in_flight(), 1);
        // Claimed again by its own request: the same row, in flight under the new lease.
        t.apply(&ev(4, 40, "a", ServerEventKind::Claimed(3)), "s", 0, 100);
        t.apply(&ev(5, 50, "b", ServerEventKind::Saved(2, 402)), "s", 0, 100);
        t.apply(&ev(6, 60, "b", ServerEventKind::Pruned), "s", 0, 100);
        let rows = t.rows();
        assert_eq!(rows.len(), 1);
        assert_eq!(
            (
                rows[0].key.as_str(),
                rows[0].status,
                rows[0].created_at,
                rows[0].token
            ),
            ("a", ClaimStatus::InFlight, 10, Some(3))
        );
        // A claim of a key whose row is done (after its retention) starts afresh.
        t.apply(&ev(7, 70, "c", ServerEventKind::Claimed(4)), "s", 0, 100);
        t.apply(&ev(8, 80, "c", ServerEventKind::Saved(4, 201)), "s", 0, 100);
        t.apply(&ev(9, 90, "c", ServerEventKind::Claimed(5)), "s", 0, 100);
        let c = t
            .rows()
            .into_iter()
            .find(|r| r.key == "c")
            .expect("claimed");
        assert_eq!((c.created_at, c.token), (90, Some(5)));
        t.apply(&ev(10, 95, "c", ServerEventKind::Pruned), "s", 0, 100);
        let rows = t.rows();
        // Replays, rejections and fenced writes change no row.
        t.apply(&ev(11, 100, "a", ServerEventKind::Fenced(1)), "s", 0, 100);
        t.apply(
            &ev(12, 110, "a", ServerEventKind::Replayed(201)),
            "s",
            0,
            100,
        );
        t.apply(
            &ev(13, 120, "a", ServerEventKind::Rejected(422)),
            "s",
            0,
            100,
        );
        assert_eq!(t.rows(), rows);
        assert_eq!((t.fenced, t.conflicts, t.mismatches), (1, 0, 1));
    }

    #[test]
    fn an_event_for_a_row_never_seen_creates_it() {
        // The server's log is bounded: a stream may start after a claim's first event.
        let mut t = Tables::default();
        t.apply(
            &ev(9, 500, "late", ServerEventKind::Saved(4, 201)),
            "s",
            100,
            10,
        );
        let r = &t.rows()[0];
        assert_eq!((r.status, r.created_at), (ClaimStatus::Done, 400));
        // Server times before the session's start (clock steps) do not underflow.
        t.apply(
            &ev(10, 5, "early", ServerEventKind::Claimed(5)),
            "s",
            100,
            10,
        );
        assert_eq!(t.rows().len(), 2);
    }
}
