//! The Pay button's localStorage record, as idem-client wrote it: read from the real storage
//! item, decoded by idem-client's own codec; once the operation finished and its record went,
//! the last one read, marked with the outcome.

use std::rc::Rc;

use idem_client::journal::decode;
use idem_client::RecordState;
use idem_sim::{op_name, CheckoutId, CheckoutOutcome, World};

use crate::journal::PageJournal;
use crate::model::view::StorageRecord;

/// The record panel's state.
#[derive(Default)]
pub struct Storage {
    /// The checkout whose record is shown.
    of: Option<CheckoutId>,
    /// The last record read for it (shown after the record is cleared).
    last: Option<StorageRecord>,
    shown: Option<Rc<StorageRecord>>,
}

impl Storage {
    /// The record of checkout `current` now; the same `Rc` while it does not change.
    pub fn record(
        &mut self,
        world: &World,
        journal: &PageJournal,
        current: Option<CheckoutId>,
    ) -> Option<Rc<StorageRecord>> {
        if self.of != current {
            // Pay started another checkout: the old record is not its.
            self.of = current;
            self.last = None;
        }
        let now = current.and_then(|c| self.read(world, journal, c));
        self.shown = match (self.shown.take(), now) {
            (Some(old), Some(new)) if *old == new => Some(old),
            (_, new) => new.map(Rc::new),
        };
        self.shown.clone()
    }

    fn read(
        &mut self,
        world: &World,
        journal: &PageJournal,
        c: CheckoutId,
    ) -> Option<StorageRecord> {
        let name = op_name(c);
        let raw = journal.raw(&name);
        match raw.as_deref().map(|t| decode(&name, t)) {
            Some(Ok(r)) => {
                let state = match r.state {
                    RecordState::Pending => "pending".to_string(),
                    RecordState::Unknown { .. } => {
                        "unknown outcome: reconcile, never a new key".to_string()
                    }
                };
                let rec = StorageRecord {
                    storage_key: journal.storage_key(&name),
                    key: r.key.to_string(),
                    payload: r.body,
                    attempts: r.attempts,
                    state,
                    raw: raw.unwrap_or_default(),
                };
                self.last = Some(rec.clone());
                Some(rec)
            }
            Some(Err(e)) => Some(StorageRecord {
                storage_key: journal.storage_key(&name),
                key: String::new(),
                payload: String::new(),
                attempts: 0,
                state: format!("unreadable: {e}"),
                raw: raw.unwrap_or_default(),
            }),
            None => {
                let outcome = match world.checkout(c).map(|r| r.outcome) {
                    Some(CheckoutOutcome::Paid { replayed: true, .. }) => "paid (replayed answer)",
                    Some(CheckoutOutcome::Paid { .. }) => "paid",
                    Some(CheckoutOutcome::Rejected { .. }) => "rejected",
                    Some(CheckoutOutcome::Unknown) => "unknown",
                    Some(CheckoutOutcome::Pending) | None => return None,
                };
                let mut last = self.last.clone()?;
                last.state = format!("removed: the operation finished ({outcome})");
                Some(last)
            }
        }
    }
}
