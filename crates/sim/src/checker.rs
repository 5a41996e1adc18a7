//! The checker: invariants over what clients saw, what PayCo recorded and what the store holds.
//!
//! - no checkout (order) charged twice;
//! - every answer for a key identical to the first answer for that key, and each answer for the
//!   parameters that were sent (a replay for other parameters is a wrong answer);
//! - no record stuck in flight once faults stop and pending operations were reconciled;
//! - the client's final answer agrees with PayCo: a checkout answered 2xx was charged exactly
//!   once, by the charge its receipt names; one answered with a rejection (402, 422, another
//!   4xx) was never charged for its cart; an unknown outcome is reported as unknown (checked
//!   when the answer is given, again whenever PayCo moves money for that checkout, and at the
//!   end);
//! - every checkout ends paid, rejected or reported unknown (never silently pending);
//! - a saved answer says what PayCo did: a 5xx (the outcome is unknown) is never saved for
//!   replay, or every retry would replay "unknown" while PayCo knows;
//! - a 422 ("key reused with different payload") means that payload never ran under that key:
//!   the answer tells the client nothing happened, so the work it refuses must not have started
//!   for that key and payload (checked when the 422 reaches the page, and at the end against
//!   every run of the whole history);
//! - one receipt per paid order, none for an unpaid one: the outbox's consumer sends a receipt
//!   once per `order.paid` however often the relay delivers it (checked at each receipt, and
//!   at the end, once the relay drained, for a paid order with none).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::history::CheckoutOutcome;
use crate::ids::{CheckoutId, OrderId};
use crate::payco::PayCo;
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
    /// The client's final answer disagrees with PayCo's ledger: paid but not charged exactly
    /// once (or by another charge than its receipt names), or rejected but charged.
    AnswerDisagrees {
        /// The checkout.
        checkout: CheckoutId,
        /// What its page was told.
        outcome: CheckoutOutcome,
        /// How many times PayCo charged it.
        charges: u32,
    },
    /// An answer saying the outcome is unknown (a 5xx) was saved for replay: every retry gets
    /// it, and the checkout can never learn what PayCo did.
    SavedUnknownOutcome {
        /// The checkout whose work saved it.
        checkout: CheckoutId,
        /// The key.
        key: Uuid,
        /// The saved status.
        status: u16,
    },
    /// A checkout that never ended and was never reported unknown.
    Unreported {
        /// The checkout.
        checkout: CheckoutId,
    },
    /// A 422 ("never ran: the key belongs to another payload") answered to a payload whose
    /// work ran under that key: the client is told its request did nothing, and it may have
    /// moved money.
    MismatchButRan {
        /// The checkout that was told 422.
        checkout: CheckoutId,
        /// The key.
        key: Uuid,
        /// The payload's amount (with the checkout, the payload).
        amount: u32,
    },
    /// An order's receipts are not one per paid order: a second receipt (a redelivered
    /// `order.paid` applied again), none for a paid order once the relay drained, or one for
    /// an order never paid.
    ReceiptCount {
        /// The order.
        order: OrderId,
        /// Receipts the consumer sent for it.
        receipts: u32,
        /// Whether its save settled it paid.
        paid: bool,
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
            Violation::AnswerDisagrees { .. } => "answer-disagrees",
            Violation::SavedUnknownOutcome { .. } => "saved-unknown-outcome",
            Violation::Unreported { .. } => "unreported",
            Violation::MismatchButRan { .. } => "mismatch-but-ran",
            Violation::ReceiptCount { .. } => "receipt-count",
        }
    }

    /// The live property this violation breaks (a name of [`crate::Properties::NAMES`]);
    /// `None` for "unreported", which only the end-of-run verdict checks.
    pub fn property(&self) -> Option<&'static str> {
        match self {
            Violation::DoubleCharge { .. } => Some("one-charge"),
            Violation::ReplayDiffers { .. }
            | Violation::WrongAnswer { .. }
            | Violation::SavedAnswerDiffers { .. } => Some("replays-identical"),
            Violation::StuckInFlight { .. } => Some("none-stuck"),
            Violation::AnswerDisagrees { .. } | Violation::SavedUnknownOutcome { .. } => {
                Some("agrees-with-payco")
            }
            Violation::MismatchButRan { .. } => Some("mismatch-never-ran"),
            Violation::ReceiptCount { .. } => Some("one-receipt"),
            Violation::Unreported { .. } => None,
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

/// Online state: first answers per key, the payloads that ran under each key and the 422s
/// clients got, and answer-level violations as they happen.
#[derive(Clone, Debug, Default)]
pub(crate) struct Checker {
    first_by_key: BTreeMap<Uuid, Receipt>,
    /// Checkouts already reported as disagreeing with PayCo (reported once each).
    disagreed: BTreeSet<CheckoutId>,
    /// The payloads whose work started, per checkout (a key belongs to one checkout, so its
    /// runs are that checkout's): (key, amount). Vectors, not maps: a checkout runs one or two
    /// payloads, and a map of a new key type costs the demo's `.wasm` kilobytes.
    ran: Vec<Vec<(Uuid, u32)>>,
    /// The 422s pages got for payloads that had not run (yet): checked again at the end,
    /// against runs that came later too.
    refused: Vec<(CheckoutId, Uuid, u32)>,
    /// Payloads already reported as refused after running (reported once each).
    misrefused: Vec<(Uuid, u32)>,
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

    /// A work saved an answer of `status` for `key`'s replays.
    pub fn observe_saved(&mut self, checkout: CheckoutId, key: Uuid, status: u16) {
        if status >= 500 {
            self.push(Violation::SavedUnknownOutcome {
                checkout,
                key,
                status,
            });
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

    /// Does the final answer `outcome` to `checkout` (whose cart is `amount`) agree with
    /// PayCo? Pending and unknown outcomes always do: unknown is the honest answer when the
    /// page cannot tell.
    pub fn check_answer(
        &mut self,
        checkout: CheckoutId,
        amount: u32,
        outcome: CheckoutOutcome,
        payco: &PayCo,
    ) {
        // Most calls come while the checkout still waits: nothing to look up.
        if matches!(outcome, CheckoutOutcome::Pending | CheckoutOutcome::Unknown)
            || self.disagreed.contains(&checkout)
        {
            return;
        }
        let charges = payco.charge_count(checkout);
        let agrees = match outcome {
            CheckoutOutcome::Paid { receipt, .. } => {
                charges == 1
                    && payco
                        .charge_by_id(receipt.charge)
                        .is_some_and(|c| c.checkout == checkout)
            }
            // A charge for another cart under a reused key is not this request's (that
            // request is the one the 422 refused).
            CheckoutOutcome::Rejected { .. } => {
                charges == 0 || !payco.charges_for(checkout).any(|c| c.amount == amount)
            }
            CheckoutOutcome::Pending | CheckoutOutcome::Unknown => true,
        };
        if !agrees {
            self.disagreed.insert(checkout);
            self.push(Violation::AnswerDisagrees {
                checkout,
                outcome,
                charges,
            });
        }
    }

    /// The first answer clients saw under `key`.
    pub fn first_answer(&self, key: &Uuid) -> Option<&Receipt> {
        self.first_by_key.get(key)
    }

    /// The work started for `checkout`'s payload `amount` under `key` (a claim, a takeover, or
    /// a claim again after a release).
    pub fn observe_run(&mut self, checkout: CheckoutId, key: Uuid, amount: u32) {
        let i = checkout.0 as usize;
        if self.ran.len() <= i {
            self.ran.resize_with(i + 1, Vec::new);
        }
        let payloads = &mut self.ran[i];
        if !payloads.contains(&(key, amount)) {
            payloads.push((key, amount));
        }
    }

    /// A 422 reached `checkout`'s page for its payload `amount` under `key`: that payload must
    /// never have run under that key.
    pub fn observe_mismatch(&mut self, checkout: CheckoutId, key: Uuid, amount: u32) {
        if self.ran(checkout, key, amount) {
            self.mismatch_but_ran(checkout, key, amount);
        } else {
            self.refused.push((checkout, key, amount));
        }
    }

    /// The end-of-run pass over every 422: a payload refused under a key must not have run
    /// under it at any time of the run, before the 422 or after (a key is bound to one payload
    /// for its retention, longer than a run).
    pub fn check_mismatches(&mut self) {
        let refused = std::mem::take(&mut self.refused);
        for &(checkout, key, amount) in &refused {
            if self.ran(checkout, key, amount) {
                self.mismatch_but_ran(checkout, key, amount);
            }
        }
        self.refused = refused;
    }

    fn ran(&self, checkout: CheckoutId, key: Uuid, amount: u32) -> bool {
        let runs = self.ran.get(checkout.0 as usize);
        runs.is_some_and(|p| p.contains(&(key, amount)))
    }

    fn mismatch_but_ran(&mut self, checkout: CheckoutId, key: Uuid, amount: u32) {
        if !self.misrefused.contains(&(key, amount)) {
            self.misrefused.push((key, amount));
            self.push(Violation::MismatchButRan {
                checkout,
                key,
                amount,
            });
        }
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

    #[test]
    fn a_422_to_a_payload_that_ran_under_the_key_is_flagged_once() {
        let mut c = Checker::new();
        let k = Uuid::from_u128(1);
        c.observe_run(CheckoutId(0), k, 10);
        // Another payload under the key: a true 422.
        c.observe_mismatch(CheckoutId(0), k, 11);
        // Another key: a run under one key says nothing about another.
        c.observe_mismatch(CheckoutId(0), Uuid::from_u128(2), 10);
        c.check_mismatches();
        assert!(c.violations.is_empty(), "{:?}", c.violations);
        // The payload that ran, refused: broken when the 422 arrives, reported once.
        c.observe_mismatch(CheckoutId(0), k, 10);
        c.observe_mismatch(CheckoutId(0), k, 10);
        c.check_mismatches();
        assert_eq!(
            c.violations,
            [Violation::MismatchButRan {
                checkout: CheckoutId(0),
                key: k,
                amount: 10
            }]
        );
        assert_eq!(c.violations[0].property(), Some("mismatch-never-ran"));
        // Refused first, run later under the same key: the end-of-run pass sees it.
        c.observe_run(CheckoutId(0), k, 11);
        c.check_mismatches();
        assert_eq!(c.violations.len(), 2);
        assert_eq!(c.violations[1].name(), "mismatch-but-ran");
    }

    #[test]
    fn answers_are_checked_against_payco() {
        use crate::payco::{ChargeAnswer, ChargeCall, ChargeKey};
        let mut payco = PayCo::default();
        let call = |checkout: u32, amount: u32, order: u64| ChargeCall {
            order: OrderId(order),
            checkout: CheckoutId(checkout),
            amount,
            key: Some(ChargeKey(OrderId(order))),
            at: 1,
        };
        let ChargeAnswer::Charged(id) = payco.charge(call(0, 10, 1), || false).answer else {
            panic!("charged")
        };
        let paid = |charge| CheckoutOutcome::Paid {
            receipt: Receipt {
                order: OrderId(1),
                charge,
                amount: 10,
                served_at: 5,
            },
            replayed: false,
        };
        let mut c = Checker::new();
        c.check_answer(CheckoutId(0), 10, paid(id), &payco);
        c.check_answer(CheckoutId(0), 10, CheckoutOutcome::Unknown, &payco);
        c.check_answer(CheckoutId(1), 10, CheckoutOutcome::Unknown, &payco);
        c.check_answer(
            CheckoutId(1),
            10,
            CheckoutOutcome::Rejected { status: 402 },
            &payco,
        );
        assert!(c.violations.is_empty(), "{:?}", c.violations);
        // Paid but never charged; rejected but charged; paid by another checkout's charge.
        c.check_answer(CheckoutId(1), 10, paid(id), &payco);
        c.check_answer(
            CheckoutId(0),
            10,
            CheckoutOutcome::Rejected { status: 402 },
            &payco,
        );
        payco.charge(call(2, 10, 2), || false);
        c.check_answer(CheckoutId(2), 10, paid(id), &payco);
        let names: Vec<_> = c.violations.iter().map(|v| v.property()).collect();
        assert_eq!(names, [Some("agrees-with-payco"); 3]);
        // Reported once per checkout; a charge for another cart does not contradict a 422.
        c.check_answer(CheckoutId(1), 10, paid(id), &payco);
        payco.charge(call(3, 11, 3), || false);
        c.check_answer(
            CheckoutId(3),
            10,
            CheckoutOutcome::Rejected { status: 422 },
            &payco,
        );
        assert_eq!(c.violations.len(), 3);
        // Charged twice: a paid answer no longer agrees.
        payco.charge(call(4, 10, 4), || false);
        let ChargeAnswer::Charged(id4) = payco.charge(call(4, 10, 5), || false).answer else {
            panic!("charged")
        };
        c.check_answer(CheckoutId(4), 10, paid(id4), &payco);
        assert_eq!(c.violations.len(), 4);
    }
}
