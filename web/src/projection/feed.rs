//! The event feed: the store's decisions, PayCo's charges and the page's own notes, in time
//! order, the last [`FEED_CAP`] of them.

use std::rc::Rc;

use idem_sim::World;
use idem_store::{EventKind as StoreEvent, Rejection};

use crate::model::cart::euros;
use crate::model::view::{append_events, EventKind, EventRow, FEED_CAP};

/// First 8 characters of a key, for one-line messages.
pub fn short(key: &str) -> &str {
    key.get(..8).unwrap_or(key)
}

/// The feed, and where in the store's log and PayCo's ledger it stopped. A new one starts from
/// the beginning of both (the last [`FEED_CAP`] lines): a rebuilt run (a link, `←`/`→`) shows
/// the lines its world made.
#[derive(Default)]
pub struct Feed {
    store_cursor: u64,
    charge_cursor: usize,
    seq: u64,
    lines: Rc<Vec<Rc<EventRow>>>,
}

impl Feed {
    /// The feed with what happened since the last call and the page's `notes`.
    pub fn update(&mut self, world: &World, notes: Vec<EventRow>) -> Rc<Vec<Rc<EventRow>>> {
        // One feed, in time order; sequence numbers give every line a stable identity.
        let store = self.store_lines(world);
        let charges = self.charge_lines(world);
        let mut new = merge_in_time(merge_in_time(store, notes), charges);
        for e in &mut new {
            self.seq += 1;
            e.seq = self.seq;
        }
        if new.len() > FEED_CAP {
            new.drain(..new.len() - FEED_CAP);
        }
        self.lines = append_events(&self.lines, new);
        self.lines.clone()
    }

    fn store_lines(&mut self, world: &World) -> Vec<EventRow> {
        let store = world.store();
        if store.next_event_seq() < self.store_cursor {
            // A new lock_ms or retention rebuilt the store, which restarts its event log.
            self.store_cursor = 0;
        }
        let skip = (store.next_event_seq() - self.store_cursor).saturating_sub(FEED_CAP as u64);
        let mut out = Vec::new();
        for e in store.events_since(self.store_cursor + skip) {
            let key = e.key().unwrap_or("").to_string();
            let (kind, detail) = match e.kind() {
                StoreEvent::Claimed { token } => (
                    EventKind::Claimed,
                    format!("claimed, lease #{token}: the work runs"),
                ),
                StoreEvent::Replayed { status } => {
                    (EventKind::Replayed, format!("replayed the saved {status}"))
                }
                StoreEvent::Rejected { status, reason } => match reason {
                    Rejection::InFlight { retry_after_ms } => (
                        EventKind::Conflict,
                        format!("409 in flight: retry after {retry_after_ms} ms"),
                    ),
                    Rejection::Mismatch => (
                        EventKind::Mismatch,
                        "422: same key, different request".to_string(),
                    ),
                    Rejection::Invalid(err) => (EventKind::BadRequest, format!("{status}: {err}")),
                    Rejection::KeyExpired => (
                        EventKind::KeyExpired,
                        "412: no record left and first sent before retention: not run again"
                            .to_string(),
                    ),
                },
                StoreEvent::TakenOver {
                    old_token,
                    new_token,
                } => (
                    EventKind::TakenOver,
                    format!("stale lease #{old_token} taken over by #{new_token}"),
                ),
                StoreEvent::Fenced { token } => (
                    EventKind::Fenced,
                    format!("write by lost lease #{token} refused"),
                ),
                StoreEvent::Saved { token, status } => {
                    (EventKind::Saved, format!("lease #{token} saved {status}"))
                }
                StoreEvent::Released { token } => {
                    (EventKind::Released, format!("lease #{token} released"))
                }
                StoreEvent::Pruned => (EventKind::Pruned, "pruned after retention".to_string()),
                // Written by the server around the store (a classic bug's own write).
                StoreEvent::Note { text } => (EventKind::Server, text.clone()),
            };
            let label = if key.is_empty() {
                String::new()
            } else {
                format!("{} ", short(&key))
            };
            out.push(EventRow {
                seq: 0,
                at: e.at(),
                kind,
                key,
                detail: format!("{label}{detail}"),
            });
        }
        self.store_cursor = store.next_event_seq();
        out
    }

    fn charge_lines(&mut self, world: &World) -> Vec<EventRow> {
        let charges = world.payco().charges();
        let first = self
            .charge_cursor
            .max(charges.len().saturating_sub(FEED_CAP));
        let lines = charges[first.min(charges.len())..]
            .iter()
            .map(|ch| EventRow {
                seq: 0,
                at: ch.at,
                kind: EventKind::Charged,
                key: String::new(),
                detail: format!(
                    "PayCo {} for order {} of {}: {}",
                    ch.id,
                    ch.order,
                    ch.checkout,
                    euros(u64::from(ch.amount))
                ),
            })
            .collect();
        self.charge_cursor = charges.len();
        lines
    }
}

/// `a` and `b`, each already in time order, as one list in time order; on a tie `a`'s line
/// comes first. The store's lines, the page's notes and PayCo's charges are each made in time
/// order, so merging them keeps one moment's lines in the order they were made, as a stable sort
/// would, without a sort's code in the bundle (kilobytes per element type).
fn merge_in_time(a: Vec<EventRow>, b: Vec<EventRow>) -> Vec<EventRow> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut a, mut b) = (a.into_iter().peekable(), b.into_iter().peekable());
    loop {
        let from_a = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) => x.at <= y.at,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => return out,
        };
        out.extend(if from_a { a.next() } else { b.next() });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(made: &str, ats: &[u64]) -> Vec<EventRow> {
        ats.iter()
            .enumerate()
            .map(|(i, &at)| EventRow {
                seq: 0,
                at,
                kind: EventKind::Client,
                key: String::new(),
                detail: format!("{made}{i}"),
            })
            .collect()
    }

    #[test]
    fn one_moment_keeps_the_order_its_lines_were_made_in() {
        let store = lines("s", &[1, 1, 3, 5, 5, 9]);
        let notes = lines("n", &[0, 1, 5, 5]);
        let charges = lines("c", &[1, 5, 10]);
        let all = merge_in_time(merge_in_time(store, notes), charges);
        let got: Vec<&str> = all.iter().map(|e| e.detail.as_str()).collect();
        assert_eq!(
            got,
            ["n0", "s0", "s1", "n1", "c0", "s2", "s3", "s4", "n2", "n3", "c1", "s5", "c2"]
        );
        assert!(merge_in_time(Vec::new(), Vec::new()).is_empty());
    }

    #[test]
    fn a_new_feed_starts_with_what_the_world_already_did() {
        // A rebuilt run (a link, ← or →): its feed is the world's lines so far, not empty.
        let mut config = idem_sim::SimConfig::default();
        config.workload.orders = 0;
        let mut w = World::new(config);
        w.drop_next_response();
        w.start_checkout(idem_sim::Strategy::SameKey).unwrap();
        w.finish();
        let lines = Feed::default().update(&w, Vec::new());
        let kinds: Vec<EventKind> = lines.iter().map(|l| l.kind).collect();
        for k in [EventKind::Claimed, EventKind::Charged, EventKind::Replayed] {
            assert!(kinds.contains(&k), "{k:?} in {kinds:?}");
        }
    }
}
