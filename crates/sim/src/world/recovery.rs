//! The checkout handler's recovery points: the order each key's operation created, with the
//! fingerprint of its payload, written in the claim's first step (as the server half writes the
//! order row in the claim's transaction). A later worker for the same key and payload resumes
//! that order, so PayCo sees the same `charge:<orderId>` whether the claim was taken over *or*
//! released in between: releasing a claim on error is only safe because the downstream key
//! outlives the release.
//!
//! A different payload that claims a released key never resumes the old order, and does not
//! run either: the key still names an operation that may have moved money (a PayCo call that
//! timed out), so the handler answers it 422 as the store would have while the record lived.
//! A recovery point lives as long as its key's record may: `retention_ms` from its last claim.
//! After that the key may be claimed afresh and its order is forgotten too (the short-retention
//! bug stays a bug).

use std::collections::BTreeMap;

use idem_store::Fingerprint;
use uuid::Uuid;

use crate::ids::OrderId;

/// One key's recovery point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Point {
    /// The payload the key's operation was claimed with.
    pub fingerprint: Fingerprint,
    /// The order it created.
    pub order: OrderId,
    expires_at: u64,
}

/// The recovery points of one server, by key (the world has one scope).
#[derive(Debug, Default)]
pub(super) struct RecoveryPoints {
    points: BTreeMap<Uuid, Point>,
}

impl RecoveryPoints {
    /// The live recovery point of `key` at `now`.
    pub fn find(&self, key: Uuid, now: u64) -> Option<Point> {
        self.points
            .get(&key)
            .filter(|p| now < p.expires_at)
            .copied()
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
    fn a_point_is_found_for_its_key_until_it_expires() {
        let mut r = RecoveryPoints::default();
        let (k, fp) = (Uuid::from_u128(1), Fingerprint([1; 32]));
        r.record(k, fp, OrderId(7), 100);
        let p = r.find(k, 99).unwrap();
        assert_eq!((p.order, p.fingerprint), (OrderId(7), fp));
        assert_eq!(r.find(k, 100), None, "expired with its key's retention");
        assert_eq!(r.find(Uuid::from_u128(2), 0), None, "another key");
        r.record(k, fp, OrderId(7), 200);
        assert!(r.find(k, 150).is_some(), "a later claim refreshes it");
    }
}
