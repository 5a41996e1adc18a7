//! Real mode's state projected into the one [`View`] the panels render, as `projection/` does
//! for the simulated world: unchanged rows keep their `Rc`, so their components skip
//! re-rendering. Times count from the session's start.

use std::rc::Rc;

use idem_client::journal::{decode_entry, Entry};
use idem_client::RecordState;

use super::{key_text, wire, State};
use crate::model::real::{CheckoutState, RealInfo};
use crate::model::view::{
    append_events, merge_claims, merge_ledger, EventRow, LedgerRow, ShownClaim, Stats,
    StorageRecord, View,
};

/// What the last view showed, kept so the next one reuses unchanged rows.
#[derive(Default)]
pub struct Projected {
    claims: Rc<Vec<Rc<ShownClaim>>>,
    ledger: Rc<Vec<Rc<LedgerRow>>>,
    feed: Rc<Vec<Rc<EventRow>>>,
    storage: Option<Rc<StorageRecord>>,
}

impl State {
    /// The panels' view now.
    pub(super) fn view(&mut self) -> View {
        let now = wire::now_ms().saturating_sub(self.t0);
        let lines = self.tables.take_lines();
        let shown = &mut self.shown;
        shown.feed = append_events(&shown.feed, lines);
        shown.claims = merge_claims(&shown.claims, self.tables.rows(), now);
        shown.ledger = merge_ledger(&shown.ledger, self.ledger.clone());
        let record = self
            .checkouts
            .last()
            .and_then(|c| storage_record(&wire::prefix(&self.tenant), &c.name));
        shown.storage = match (shown.storage.take(), record) {
            (Some(old), Some(new)) if *old == new => Some(old),
            (_, new) => new.map(Rc::new),
        };
        let count = |s: &str| {
            self.checkouts
                .iter()
                .filter(|c| c.state.value() == s)
                .count() as u32
        };
        let current = self.checkouts.last();
        let stats = Stats {
            checkouts: self.checkouts.len() as u32,
            pending: count("pending"),
            attempts: self.attempts_restored + self.exchanges.len() as u32,
            conflicts: self.tables.conflicts,
            mismatches: self.tables.mismatches,
            takeovers: self.tables.takeovers,
            fenced: self.tables.fenced,
            unknown: count("unknown"),
            charges: self.ledger.iter().map(|r| r.charges).sum(),
            double_charged: self.ledger.iter().filter(|r| r.charges > 1).count() as u32,
            receipts: None,
        };
        View {
            now,
            claims: shown.claims.clone(),
            ledger: shown.ledger.clone(),
            events: shown.feed.clone(),
            storage: shown.storage.clone(),
            stats,
            // The cart line names the simulated world's checkouts; real mode's own line is
            // `real-outcome`.
            cart: None,
            paying: current.is_some_and(|c| c.state == CheckoutState::Pending),
            real: Some(Rc::new(RealInfo {
                server: self.server.clone(),
                tenant: self.tenant.clone(),
                t0: self.t0,
                link: self.link.clone(),
                lock_ms: self.lock_ms,
                notice: self.notice.clone(),
                checkout: current.cloned(),
                decline_next: self.decline_next,
                exchanges: self.exchanges.clone(),
                events: self.events.clone(),
            })),
            ..View::default()
        }
    }
}

/// Checkout `name`'s localStorage record under `prefix`, as idem-client wrote it: open (key,
/// payload, attempts) or settled (key and status, kept for the retry window).
fn storage_record(prefix: &str, name: &str) -> Option<StorageRecord> {
    let item = [prefix, name].concat();
    let raw = wire::stored(&item)?;
    let (key, payload, attempts, state) = match decode_entry(name, &raw) {
        Ok(Entry::Open(r)) => {
            let state = match r.state {
                RecordState::Pending => "pending".to_owned(),
                RecordState::Unknown { .. } => {
                    "unknown outcome: reconcile, never a new key".to_owned()
                }
            };
            (key_text(r.key), r.body, r.attempts, state)
        }
        Ok(Entry::Settled(s)) => (
            key_text(s.key),
            String::new(),
            s.attempts,
            [
                "settled ",
                &s.status.to_string(),
                ": the key is kept for the retry window",
            ]
            .concat(),
        ),
        Err(e) => (
            String::new(),
            String::new(),
            0,
            ["unreadable: ", &e.message()].concat(),
        ),
    };
    Some(StorageRecord {
        storage_key: item,
        key,
        payload,
        attempts,
        state,
        raw,
    })
}
