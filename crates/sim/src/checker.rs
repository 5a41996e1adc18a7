//! The checker: invariants over what clients saw, what PayCo recorded and what the store holds.
//!
//! - no checkout (order) charged twice;
//! - every answer for a key identical to the first answer for that key, and each answer for the
//!   parameters that were sent (a replay for other parameters is a wrong answer);
//! - no record stuck in flight once faults stop and pending operations were reconciled;
//! - every checkout ends paid, rejected or reported unknown (never silently pending).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::ids::CheckoutId;
use crate::receipt::Receipt;

/// One broken invariant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Violation {
    /// PayCo charged one checkout more than once.
    DoubleCharge {
        /// The checkout.
        checkout: CheckoutId,
        /// How many charges.
        charges: u32,
    },
    /// A later answer under a key differs from the first one.
    ReplayDiffers {
        /// The checkout that saw it.
        checkout: CheckoutId,
        /// The key.
        key: Uuid,
        /// The first answer.
        first: Receipt,
        /// The differing one.
        later: Receipt,
    },
    /// An answer for other parameters than those sent.
    WrongAnswer {
        /// The checkout that saw it.
        checkout: CheckoutId,
        /// The amount sent.
        sent: u32,
        /// The amount the answer is for.
        answered: u32,
    },
    /// A record still in flight after faults stopped and every operation was reconciled.
    StuckInFlight {
        /// The key.
        key: String,
    },
    /// The saved answer a future replay would return differs from the first answer clients saw.
    SavedAnswerDiffers {
        /// The key.
        key: String,
    },
    /// A checkout that never ended and was never reported unknown.
    Unreported {
        /// The checkout.
        checkout: CheckoutId,
    },
}

impl Violation {
    /// A short name for tables and summaries.
    pub fn name(&self) -> &'static str {
        match self {
            Violation::DoubleCharge { .. } => "double-charge",
            Violation::ReplayDiffers { .. } => "replay-differs",
            Violation::WrongAnswer { .. } => "wrong-answer",
            Violation::StuckInFlight { .. } => "stuck-in-flight",
            Violation::SavedAnswerDiffers { .. } => "saved-answer-differs",
            Violation::Unreported { .. } => "unreported",
        }
    }
}

/// The checker's result for one world.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The world's seed.
    pub seed: u64,
    /// Broken invariants (empty: the run is clean).
    pub violations: Vec<Violation>,
    /// Checkouts reported unknown by their page (each one is reported here, never hidden).
    pub unknown: Vec<CheckoutId>,
    /// Those still unknown after the reconciliation pass.
    pub unresolved: Vec<CheckoutId>,
    /// The command that reproduces this run.
    pub reproduce: String,
}

impl Verdict {
    /// True when no invariant broke.
    pub fn is_clean(&self) -> bool {
        self.violations.is_empty()
    }
}

/// Online state: first answers per key, and answer-level violations as they happen.
#[derive(Clone, Debug, Default)]
pub(crate) struct Checker {
    first_by_key: BTreeMap<Uuid, Receipt>,
    pub violations: Vec<Violation>,
    /// Cap on stored violations of one kind per run (a broken run can produce thousands).
    cap: usize,
}

impl Checker {
    pub fn new() -> Self {
        Self {
            cap: 50,
            ..Self::default()
        }
    }

    fn push(&mut self, v: Violation) {
        if self.violations.len() < self.cap {
            self.violations.push(v);
        }
    }

    /// A 2xx reached a client: `sent` is the amount that request carried.
    pub fn observe_ok(
        &mut self,
        checkout: CheckoutId,
        key: Option<Uuid>,
        sent: u32,
        receipt: Receipt,
    ) {
        if receipt.amount != sent {
            self.push(Violation::WrongAnswer {
                checkout,
                sent,
                answered: receipt.amount,
            });
        }
        let Some(key) = key else { return };
        match self.first_by_key.get(&key) {
            None => {
                self.first_by_key.insert(key, receipt);
            }
            Some(first) if *first != receipt => {
                let first = *first;
                self.push(Violation::ReplayDiffers {
                    checkout,
                    key,
                    first,
                    later: receipt,
                });
            }
            Some(_) => {}
        }
    }

    /// The first answer clients saw under `key`.
    pub fn first_answer(&self, key: &Uuid) -> Option<&Receipt> {
        self.first_by_key.get(key)
    }

    /// End-of-run checks are added by the world (it owns PayCo and the store).
    pub fn add(&mut self, v: Violation) {
        self.push(v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::OrderId;
    use crate::payco::ChargeId;

    fn r(at: u64, amount: u32) -> Receipt {
        Receipt {
            order: OrderId(1),
            charge: ChargeId(1),
            amount,
            served_at: at,
        }
    }

    #[test]
    fn flags_differing_replays_and_wrong_answers() {
        let mut c = Checker::new();
        let k = Uuid::from_u128(1);
        c.observe_ok(CheckoutId(0), Some(k), 10, r(5, 10));
        c.observe_ok(CheckoutId(0), Some(k), 10, r(5, 10));
        assert!(c.violations.is_empty());
        c.observe_ok(CheckoutId(0), Some(k), 10, r(6, 10));
        assert_eq!(c.violations[0].name(), "replay-differs");
        c.observe_ok(CheckoutId(0), Some(k), 11, r(5, 10));
        assert_eq!(c.violations[1].name(), "wrong-answer");
        // Unkeyed answers are only checked against what was sent.
        c.observe_ok(CheckoutId(1), None, 7, r(9, 7));
        assert_eq!(c.violations.len(), 2);
    }
}
