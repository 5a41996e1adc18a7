//! PayCo, the downstream payment provider. It records every charge and, when the caller sends
//! the downstream idempotency key `charge:<orderId>`, answers a key it has seen with the answer
//! it saved under it, a decline included (as Stripe saves errors): the decision to decline is
//! PayCo's, taken after its key lookup, so a late call under a key can never turn a charge into
//! a decline or a decline into a charge.
//!
//! It does not compare parameters under a key (a real provider would refuse a key reused for
//! another amount); the handler only ever sends one order's amount under that order's key.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::ids::{CheckoutId, OrderId};

/// A PayCo charge id.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ChargeId(pub u64);

impl fmt::Display for ChargeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ch_{}", self.0)
    }
}

/// The downstream key the handler sends: `charge:<orderId>`. Typed, so the hot path formats
/// nothing; [`fmt::Display`] gives the wire form.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ChargeKey(pub OrderId);

impl fmt::Display for ChargeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // idem-checkout's key for the order: the one idem-server sends PayCo.
        let order = i64::try_from((self.0).0).unwrap_or(i64::MAX);
        f.write_str(&idem_checkout::charge_key(order))
    }
}

/// One money movement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Charge {
    /// PayCo's id.
    pub id: ChargeId,
    /// The server's order this charge pays for.
    pub order: OrderId,
    /// The customer's checkout (cart) the order came from: the simulator's ground truth.
    pub checkout: CheckoutId,
    /// Amount in cents.
    pub amount: u32,
    /// The downstream key sent, if any.
    pub key: Option<ChargeKey>,
    /// Virtual time of the charge.
    pub at: u64,
}

/// What PayCo decided for a call: the answer it saves under the call's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChargeAnswer {
    /// Money moved (now, or earlier under the same key).
    Charged(ChargeId),
    /// The card was declined; no money moved. Final for the key.
    Declined,
}

/// PayCo's answer to one charge call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChargeReply {
    /// The answer (new, or the one saved earlier under the same key).
    pub answer: ChargeAnswer,
    /// True when the key had been seen: PayCo decided nothing new and no money moved.
    pub deduped: bool,
}

/// One call to PayCo.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChargeCall {
    /// The server's order.
    pub order: OrderId,
    /// The checkout it came from (ground truth for the checker).
    pub checkout: CheckoutId,
    /// Amount in cents.
    pub amount: u32,
    /// The downstream key, if the handler sends one.
    pub key: Option<ChargeKey>,
    /// Virtual time.
    pub at: u64,
}

/// PayCo's ledger.
#[derive(Clone, Debug, Default)]
pub struct PayCo {
    charges: Vec<Charge>,
    by_key: BTreeMap<ChargeKey, ChargeAnswer>,
    by_checkout: BTreeMap<CheckoutId, u32>,
    deduped: u64,
    declined: u64,
    double_charged: u64,
}

impl PayCo {
    /// Answer one call. A key seen before gets the answer saved under it, and `declines` is not
    /// asked. Otherwise PayCo decides: `declines()` true declines the card (saved under the key),
    /// false charges `amount` (saved under the key).
    pub fn charge(&mut self, call: ChargeCall, declines: impl FnOnce() -> bool) -> ChargeReply {
        let ChargeCall {
            order,
            checkout,
            amount,
            key,
            at,
        } = call;
        if let Some(k) = key {
            if let Some(&answer) = self.by_key.get(&k) {
                self.deduped += 1;
                return ChargeReply {
                    answer,
                    deduped: true,
                };
            }
        }
        if declines() {
            self.declined += 1;
            if let Some(k) = key {
                self.by_key.insert(k, ChargeAnswer::Declined);
            }
            return ChargeReply {
                answer: ChargeAnswer::Declined,
                deduped: false,
            };
        }
        let id = ChargeId(self.charges.len() as u64 + 1);
        if let Some(k) = key {
            self.by_key.insert(k, ChargeAnswer::Charged(id));
        }
        let n = self.by_checkout.entry(checkout).or_insert(0);
        *n += 1;
        if *n == 2 {
            self.double_charged += 1;
        }
        self.charges.push(Charge {
            id,
            order,
            checkout,
            amount,
            key,
            at,
        });
        ChargeReply {
            answer: ChargeAnswer::Charged(id),
            deduped: false,
        }
    }

    /// The charge with this id, if PayCo made it.
    pub fn charge_by_id(&self, id: ChargeId) -> Option<&Charge> {
        let i = usize::try_from(id.0).ok()?.checked_sub(1)?;
        self.charges.get(i)
    }

    /// Every charge, in the order it happened.
    pub fn charges(&self) -> &[Charge] {
        &self.charges
    }

    /// The charges of one checkout.
    pub fn charges_for(&self, checkout: CheckoutId) -> impl Iterator<Item = &Charge> {
        self.charges.iter().filter(move |c| c.checkout == checkout)
    }

    /// How many times `checkout` was charged.
    pub fn charge_count(&self, checkout: CheckoutId) -> u32 {
        self.by_checkout.get(&checkout).copied().unwrap_or(0)
    }

    /// Checkouts charged more than once, with their charge counts.
    pub fn double_charged(&self) -> impl Iterator<Item = (CheckoutId, u32)> + '_ {
        self.by_checkout
            .iter()
            .filter(|(_, n)| **n > 1)
            .map(|(c, n)| (*c, *n))
    }

    /// Number of checkouts charged more than once.
    pub fn double_charged_count(&self) -> u64 {
        self.double_charged
    }

    /// Calls answered from the key table (no money moved).
    pub fn deduped(&self) -> u64 {
        self.deduped
    }

    /// Cards PayCo declined (each decision once; answers replayed under a key not counted).
    pub fn declined(&self) -> u64 {
        self.declined
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(order: u64, key: bool, at: u64) -> ChargeCall {
        let o = OrderId(order);
        ChargeCall {
            order: o,
            checkout: CheckoutId(0),
            amount: 500,
            key: key.then_some(ChargeKey(o)),
            at,
        }
    }

    #[test]
    fn dedupes_on_key_and_charges_without_one() {
        let mut p = PayCo::default();
        let c = CheckoutId(0);
        let a = p.charge(call(1, true, 1), || false);
        let b = p.charge(call(1, true, 2), || {
            panic!("a seen key is not decided again")
        });
        assert_eq!(a.answer, b.answer);
        assert!(b.deduped && !a.deduped);
        assert_eq!(p.charges().len(), 1);
        assert_eq!(p.double_charged_count(), 0);
        let d = p.charge(call(1, false, 3), || false);
        assert_ne!(d.answer, a.answer);
        assert_eq!(p.charge_count(c), 2);
        assert_eq!(p.double_charged().collect::<Vec<_>>(), vec![(c, 2)]);
        assert_eq!(ChargeKey(OrderId(1)).to_string(), "charge:1");
        let ChargeAnswer::Charged(id) = a.answer else {
            panic!("{a:?}")
        };
        assert_eq!(p.charge_by_id(id).map(|ch| ch.at), Some(1));
        assert_eq!(p.charge_by_id(ChargeId(0)), None);
    }

    #[test]
    fn a_decline_is_saved_under_its_key() {
        let mut p = PayCo::default();
        let first = p.charge(call(7, true, 1), || true);
        assert_eq!(first.answer, ChargeAnswer::Declined);
        // A late call under the same key (a zombie worker) gets the decline, and no money moves,
        // even though PayCo would have accepted the card now.
        let late = p.charge(call(7, true, 9), || false);
        assert_eq!(late.answer, ChargeAnswer::Declined);
        assert!(late.deduped);
        assert_eq!(p.charges().len(), 0);
        assert_eq!((p.declined(), p.deduped()), (1, 1));
        // Without a key every call is a new decision.
        let unkeyed = p.charge(call(7, false, 10), || false);
        assert!(matches!(unkeyed.answer, ChargeAnswer::Charged(_)));
    }
}
