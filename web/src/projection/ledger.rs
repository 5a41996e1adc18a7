//! PayCo's ledger by order: double charges first, then newest first.

use std::collections::BTreeMap;
use std::rc::Rc;

use idem_sim::World;

use crate::model::view::{ledger_order, merge_ledger, LedgerRow};

/// The ledger rows, rebuilt only when PayCo moved money.
pub struct Ledger {
    built: usize,
    rows: Rc<Vec<Rc<LedgerRow>>>,
}

impl Default for Ledger {
    fn default() -> Self {
        Ledger {
            built: usize::MAX,
            rows: Rc::default(),
        }
    }
}

impl Ledger {
    /// The rows now: the same `Rc` (and row `Rc`s) for what did not change.
    pub fn rows(&mut self, world: &World) -> Rc<Vec<Rc<LedgerRow>>> {
        let charges = world.payco().charges();
        if charges.len() == self.built {
            return self.rows.clone();
        }
        let mut by: BTreeMap<u32, LedgerRow> = BTreeMap::new();
        for ch in charges {
            let row = by.entry(ch.checkout.0).or_insert_with(|| LedgerRow {
                order: ch.checkout.to_string(),
                amount: u64::from(ch.amount),
                charges: 0,
                last_at: 0,
            });
            row.charges += 1;
            row.last_at = ch.at;
        }
        // Checkouts in id order, oldest first.
        let rows = ledger_order(by.into_values().collect());
        self.rows = merge_ledger(&self.rows, rows);
        self.built = charges.len();
        self.rows.clone()
    }
}
