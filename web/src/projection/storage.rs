//! The localStorage record of the checkout the cart shows (Pay's, or a scenario's), as
//! idem-client wrote it: read from the real storage item, decoded by idem-client's own codec.
//! While the operation is open: its key, payload and attempts; once it settled, the settled
//! entry the SDK keeps (key and status, no payload: what the sequence diagram's "journal keeps"
//! mark says). (An item goes only when the SDK prunes an expired entry, as it starts another
//! operation: by then the cart shows that one.)

use std::rc::Rc;

use idem_client::journal::decode_entry;
use idem_client::{Entry, RecordState};
use idem_sim::{op_name, CheckoutId};

use crate::journal::PageJournal;
use crate::model::view::StorageRecord;

/// The record panel's state.
#[derive(Default)]
pub struct Storage {
    shown: Option<Rc<StorageRecord>>,
}

impl Storage {
    /// The record of checkout `shown` (the cart's) now; the same `Rc` while it does not change.
    pub fn record(
        &mut self,
        journal: &PageJournal,
        shown: Option<CheckoutId>,
    ) -> Option<Rc<StorageRecord>> {
        let now = shown.and_then(|c| read(journal, c));
        self.shown = match (self.shown.take(), now) {
            (Some(old), Some(new)) if *old == new => Some(old),
            (_, new) => new.map(Rc::new),
        };
        self.shown.clone()
    }
}

/// Checkout `c`'s entry in the page's journal, if there is one.
fn read(journal: &PageJournal, c: CheckoutId) -> Option<StorageRecord> {
    let name = op_name(c);
    let raw = journal.raw(&name);
    match raw.as_deref().map(|t| decode_entry(&name, t)) {
        Some(Ok(Entry::Open(r))) => {
            let state = match r.state {
                RecordState::Pending => "pending".to_string(),
                RecordState::Unknown { .. } => {
                    "unknown outcome: reconcile, never a new key".to_string()
                }
            };
            Some(StorageRecord {
                storage_key: journal.storage_key(&name),
                key: r.key.to_string(),
                payload: r.body,
                attempts: r.attempts,
                state,
                raw: raw.unwrap_or_default(),
            })
        }
        Some(Ok(Entry::Settled(s))) => Some(StorageRecord {
            storage_key: journal.storage_key(&name),
            key: s.key.to_string(),
            payload: "none: a settled entry keeps no payload".to_string(),
            attempts: s.attempts,
            state: [
                "settled: ",
                &s.status.to_string(),
                ", the key kept for a re-send",
            ]
            .concat(),
            raw: raw.unwrap_or_default(),
        }),
        Some(Err(e)) => Some(StorageRecord {
            storage_key: journal.storage_key(&name),
            key: String::new(),
            payload: String::new(),
            attempts: 0,
            state: format!("unreadable: {e}"),
            raw: raw.unwrap_or_default(),
        }),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use idem_sim::{SimConfig, Strategy, Workload, World};

    use super::*;

    /// A quiet world whose checkouts started with `host_journal` use `journal`, as the page's.
    fn world_with(journal: &PageJournal) -> World {
        let mut w = World::new(SimConfig {
            workload: Workload {
                orders: 0,
                ..Workload::default()
            },
            ..SimConfig::default()
        });
        w.attach_journal(Box::new(journal.clone()));
        w
    }

    #[test]
    fn the_record_while_open_then_the_settled_entry_the_journal_keeps() {
        let journal = PageJournal::new();
        let mut w = world_with(&journal);
        let c = w
            .start_checkout_with(Strategy::SameKey, Some(2590), true)
            .unwrap();
        let open = Storage::default()
            .record(&journal, Some(c))
            .expect("written first");
        assert_eq!(open.state, "pending");
        assert!(open.payload.contains("\"amount\":2590"), "{}", open.payload);
        let key = open.key.clone();
        w.finish();
        // Never read while it was open (a scenario that ran to its pause in one tick): the
        // panel reads the settled entry itself.
        let settled = Storage::default()
            .record(&journal, Some(c))
            .expect("kept once settled");
        assert_eq!(settled.key, key);
        assert!(
            settled.state.starts_with("settled: 201"),
            "{}",
            settled.state
        );
        assert!(!settled.payload.contains("2590"), "no payload kept");
        assert_eq!(settled.storage_key, "idem:checkout:co_1");
    }

    #[test]
    fn nothing_for_a_page_without_a_key() {
        let journal = PageJournal::new();
        let mut w = world_with(&journal);
        let c = w
            .start_checkout_with(Strategy::NoKey, Some(2590), true)
            .unwrap();
        assert_eq!(Storage::default().record(&journal, Some(c)), None);
    }
}
