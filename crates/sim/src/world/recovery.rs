//! The checkout handler's recovery points: the order each key's operation created, with the
//! fingerprint of its payload, written in the claim's first step (as the server half writes the
//! order row in the claim's transaction). A later worker for the same key and payload resumes
//! that order, so PayCo sees the same `charge:<orderId>` whether
//! the claim was taken over *or* released in between: releasing a claim on error is only safe
//! because the downstream key outlives the release.
//!
//! Who may run under a key is the store's rule, not this file's: a released key stays bound to
//! its first payload (`idem_store::rules`), so another payload is answered 422 before any work
//! starts. A point is found only for its own payload, so no other request ever resumes it,
//! even one that claims the key afresh once the record is gone (and whose own point then
//! replaces it: one point per key, as only one payload at a time may hold the key).
//!
//! A recovery point lives as long as its key's record may: `retention_ms` from its last claim.
//! After that the key may be claimed afresh and its order is forgotten too (the short-retention
//! bug stays a bug).

use std::collections::BTreeMap;

use idem_store::Fingerprint;
use uuid::Uuid;

use crate::ids::OrderId;

/// One key's recovery point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Point {
    /// The payload the key's operation was claimed with.
    fingerprint: Fingerprint,
    /// The order it created.
    order: OrderId,
    expires_at: u64,
}

/// The recovery points of one server, by key (the world has one scope).
#[derive(Debug, Default)]
pub(super) struct RecoveryPoints {
    points: BTreeMap<Uuid, Point>,
}

impl RecoveryPoints {
    /// The order of `key` and payload `fingerprint`, if its point is live at `now`.
    pub fn find(&self, key: Uuid, fingerprint: Fingerprint, now: u64) -> Option<OrderId> {
        self.points
            .get(&key)
            .filter(|p| p.fingerprint == fingerprint && now < p.expires_at)
            .map(|p| p.order)
    }

    /// Write (or refresh) the recovery point: `order` for this key and payload until
    /// `expires_at`.
    pub fn record(&mut self, key: Uuid, fingerprint: Fingerprint, order: OrderId, expires_at: u64) {
        let point = Point {
            fingerprint,
            order,
            expires_at,
        };
        self.points.insert(key, point);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_point_is_found_for_its_key_and_payload_until_it_expires() {
        let mut r = RecoveryPoints::default();
        let (k, fp) = (Uuid::from_u128(1), Fingerprint([1; 32]));
        r.record(k, fp, OrderId(7), 100);
        assert_eq!(r.find(k, fp, 99), Some(OrderId(7)));
        assert_eq!(r.find(k, fp, 100), None, "expired with its key's retention");
        assert_eq!(r.find(Uuid::from_u128(2), fp, 0), None, "another key");
        assert_eq!(
            r.find(k, Fingerprint([2; 32]), 0),
            None,
            "another payload never resumes it"
        );
        r.record(k, fp, OrderId(7), 200);
        assert!(r.find(k, fp, 150).is_some(), "a later claim refreshes it");
    }
}
