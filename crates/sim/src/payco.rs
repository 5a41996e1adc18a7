//! PayCo, the downstream payment provider. It records every charge and dedupes on the
//! downstream idempotency key `charge:<orderId>` when the caller sends one.

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
        write!(f, "charge:{}", self.0)
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

/// PayCo's answer to one charge call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChargeReply {
    /// The charge that pays for the call (new, or the earlier one under the same key).
    pub id: ChargeId,
    /// True when the key had been seen: no money moved.
    pub deduped: bool,
}

/// PayCo's ledger.
#[derive(Clone, Debug, Default)]
pub struct PayCo {
    charges: Vec<Charge>,
    by_key: BTreeMap<ChargeKey, ChargeId>,
    by_checkout: BTreeMap<CheckoutId, u32>,
    deduped: u64,
    double_charged: u64,
}

impl PayCo {
    /// Charge `amount` for `order`. With a key already seen, return that charge and move no money.
    pub fn charge(
        &mut self,
        order: OrderId,
        checkout: CheckoutId,
        amount: u32,
        key: Option<ChargeKey>,
        at: u64,
    ) -> ChargeReply {
        if let Some(k) = key {
            if let Some(&id) = self.by_key.get(&k) {
                self.deduped += 1;
                return ChargeReply { id, deduped: true };
            }
        }
        let id = ChargeId(self.charges.len() as u64 + 1);
        if let Some(k) = key {
            self.by_key.insert(k, id);
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
        ChargeReply { id, deduped: false }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dedupes_on_key_and_charges_without_one() {
        let mut p = PayCo::default();
        let o = OrderId(1);
        let c = CheckoutId(0);
        let a = p.charge(o, c, 500, Some(ChargeKey(o)), 1);
        let b = p.charge(o, c, 500, Some(ChargeKey(o)), 2);
        assert_eq!(a.id, b.id);
        assert!(b.deduped);
        assert_eq!(p.charges().len(), 1);
        assert_eq!(p.double_charged_count(), 0);
        let d = p.charge(o, c, 500, None, 3);
        assert_ne!(d.id, a.id);
        assert_eq!(p.charge_count(c), 2);
        assert_eq!(p.double_charged().collect::<Vec<_>>(), vec![(c, 2)]);
        assert_eq!(ChargeKey(o).to_string(), "charge:ord_1");
    }
}
