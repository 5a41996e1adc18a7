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

/// The feed, and where in the store's log and PayCo's ledger it stopped.
#[derive(Default)]
pub struct Feed {
    store_cursor: u64,
    charge_cursor: usize,
    seq: u64,
    lines: Rc<Vec<Rc<EventRow>>>,
}

impl Feed {
    /// A feed that starts now: what happened before (a replayed run) is in the tables already.
    pub fn after(world: &World) -> Feed {
        Feed {
            store_cursor: world.store().next_event_seq(),
            charge_cursor: world.payco().charges().len(),
            ..Feed::default()
        }
    }

    /// The feed with what happened since the last call and the page's `notes`.
    pub fn update(&mut self, world: &World, notes: Vec<EventRow>) -> Rc<Vec<Rc<EventRow>>> {
        let mut new = self.store_lines(world);
        new.extend(notes);
        new.extend(self.charge_lines(world));
        // One feed, in time order; sequence numbers give every line a stable identity.
        in_time_order(&mut new);
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

/// Sorts `lines` by time, the lines of one moment in the order they were made: the index breaks
/// ties, so the unstable sort (whose code the bundle has anyway; a stable sort would add its
/// own) keeps them in order. Overwrites `seq`.
fn in_time_order(lines: &mut [EventRow]) {
    for (i, e) in lines.iter_mut().enumerate() {
        e.seq = i as u64;
    }
    lines.sort_unstable_by_key(|e| (e.at, e.seq));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_one_moment_keep_the_order_they_were_made_in() {
        // Store lines, then notes, then charges, many at the same milliseconds.
        let mut lines: Vec<EventRow> = (0..200u64)
            .map(|i| EventRow {
                seq: 0,
                at: (i * 7) % 5,
                kind: EventKind::Client,
                key: String::new(),
                detail: i.to_string(),
            })
            .collect();
        in_time_order(&mut lines);
        for pair in lines.windows(2) {
            let made = |e: &EventRow| e.detail.parse::<u64>().unwrap();
            assert!(
                pair[0].at < pair[1].at
                    || (pair[0].at == pair[1].at && made(&pair[0]) < made(&pair[1])),
                "{} then {}",
                pair[0].detail,
                pair[1].detail
            );
        }
    }
}
