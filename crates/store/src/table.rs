//! The narrow storage trait and the in-memory table.

use std::{borrow::Cow, collections::HashMap};

use crate::{key::IdPair, rules, IdRef, Lease, Record, RecordId, SavedResponse, Status};

/// The storage operations the store's rules need, narrow enough for a SQL table:
///
/// | method | SQL |
/// |---|---|
/// | [`get`](Table::get) | `SELECT … WHERE scope = $1 AND key = $2` |
/// | [`insert_if_absent`](Table::insert_if_absent) | `INSERT … ON CONFLICT DO NOTHING` |
/// | [`compare_and_set`](Table::compare_and_set) | `UPDATE … SET …, expires_at = <rules::expires_at($now, retention_ms)> WHERE … AND status = 'in_flight' AND locked_at = $3 AND token = $4` |
/// | [`release_if_held`](Table::release_if_held) | `UPDATE … SET status = 'released' WHERE … AND status = 'in_flight' AND locked_at = $3 AND token = $4` |
/// | [`reclaim_if_released`](Table::reclaim_if_released) | `UPDATE … SET status = 'in_flight', locked_at = $5, token = $6, expires_at = … WHERE … AND status = 'released' AND locked_at = $3 AND token = $4` |
/// | [`delete_if_expired`](Table::delete_if_expired), [`delete_expired`](Table::delete_expired) | `DELETE … WHERE expires_at <= $now AND (status <> 'in_flight' OR locked_at + $lock_ms <= $now) [RETURNING scope, key]` |
/// | [`next_token`](Table::next_token) | `SELECT nextval('lease_token')` |
///
/// Each method is atomic on its own; the conditional ones return whether a row changed
/// ("zero rows changed" is how a fenced write learns it lost its lease). The store never
/// calls [`put`](Table::put) or [`remove`](Table::remove): they are unconditional, for
/// tooling and for the simulator's reproductions of classic bugs.
///
/// # Example
///
/// A zombie worker's fenced write changes nothing once its claim has been taken over, and a
/// released claim is claimed again only under the lease that released it:
///
/// ```
/// use idem_store::{ErrorPolicy, Fingerprint, IdempotencyKey, Lease, MemoryTable, Record, RecordId, Status, Table};
///
/// let mut table = MemoryTable::new();
/// let owned = RecordId::new("tenant-a", IdempotencyKey::parse("k-1").unwrap());
/// let id = owned.as_ref();
/// let first = Lease { locked_at: 0, token: table.next_token() };
/// let record = Record {
///     fingerprint: Fingerprint([0; 32]),
///     on_error: ErrorPolicy::ReleaseClaim,
///     status: Status::InFlight { lease: first },
///     created_at: 0,
///     expires_at: 1_000,
///     retention_ms: 1_000,
/// };
/// assert!(table.insert_if_absent(&owned, record.clone()));
/// assert!(!table.insert_if_absent(&owned, record), "one claim per (scope, key)");
///
/// let second = Lease { locked_at: 0, token: table.next_token() };
/// assert!(table.compare_and_set(id, &first, Status::InFlight { lease: second }, 0));
/// assert!(!table.release_if_held(id, &first), "the zombie cannot release");
/// assert!(table.release_if_held(id, &second));
/// assert!(!table.release_if_held(id, &second), "a release is final for its lease");
///
/// let third = Lease { locked_at: 5, token: table.next_token() };
/// assert!(!table.reclaim_if_released(id, &first, third, 5));
/// assert!(table.reclaim_if_released(id, &second, third, 5));
/// assert!(table.get(id).unwrap().is_held_by(&third));
/// ```
pub trait Table {
    /// The row for `id`, expired or not (expiry is the store's rule).
    fn get(&self, id: IdRef<'_>) -> Option<Cow<'_, Record>>;

    /// [`get`](Table::get), with the row's own [`RecordId`] where the table keeps one, so
    /// the store can log the decision and hand out the id without copying the key. The
    /// default returns no id; the store then makes its own.
    fn get_with_id(&self, id: IdRef<'_>) -> Option<(Option<&RecordId>, Cow<'_, Record>)> {
        self.get(id).map(|r| (None, r))
    }

    /// Insert `record` if no row has this id; whether it was inserted. Takes the owned
    /// id because the row keeps it ([`RecordId`] clones are cheap).
    fn insert_if_absent(&mut self, id: &RecordId, record: Record) -> bool;

    /// Set the row's `status` if it is in flight under exactly `expected`, and restart its
    /// retention at `now` ([`rules::expires_at`] with the row's own
    /// [`Record::retention_ms`]); whether it changed.
    fn compare_and_set(
        &mut self,
        id: IdRef<'_>,
        expected: &Lease,
        status: Status,
        now: u64,
    ) -> bool;

    /// Mark the row [`Status::Released`] if it is in flight under exactly `expected`,
    /// keeping everything else (fingerprint, `created_at`, `expires_at`); whether it changed.
    fn release_if_held(&mut self, id: IdRef<'_>, expected: &Lease) -> bool;

    /// Put the row back in flight under `lease` if it is released by exactly `released`, and
    /// restart its retention at `now` (as [`compare_and_set`](Table::compare_and_set));
    /// whether it changed. Nothing else of the row changes: the key stays bound to the
    /// fingerprint it was first claimed with.
    fn reclaim_if_released(
        &mut self,
        id: IdRef<'_>,
        released: &Lease,
        lease: Lease,
        now: u64,
    ) -> bool;

    /// Delete the row if it is expired at `now` ([`Record::is_expired`]); whether it was.
    fn delete_if_expired(&mut self, id: IdRef<'_>, now: u64, lock_ms: u64) -> bool;

    /// Delete every row expired at `now` and return their ids in (scope, key) order.
    /// Live in-flight claims are never deleted.
    fn delete_expired(&mut self, now: u64, lock_ms: u64) -> Vec<RecordId>;

    /// The next fencing token: strictly greater than every token handed out before.
    fn next_token(&mut self) -> u64;

    /// Unconditionally write `record` (insert or replace); the row it replaced.
    fn put(&mut self, id: IdRef<'_>, record: Record) -> Option<Record>;

    /// Unconditionally delete the row; the row it deleted.
    fn remove(&mut self, id: IdRef<'_>) -> Option<Record>;

    /// Number of rows, expired ones included.
    fn len(&self) -> usize;

    /// Whether the table has no rows.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Visit every row in (scope, key) order.
    fn for_each(&self, visit: &mut dyn FnMut(IdRef<'_>, &Record));

    /// The one-step write: if the row is in flight under exactly `expected`, run `work`
    /// (the business change) and store its response as `Done`, retention restarting at
    /// `now` (as [`compare_and_set`](Table::compare_and_set)), as one atomic step;
    /// otherwise do not run `work` and return `None`.
    ///
    /// The default checks, runs and writes under `&mut self`, which is atomic for a table
    /// owned by its store. A table whose rows can change behind `&mut self` (a shared
    /// database) must override it with a transaction (`SELECT … FOR UPDATE`, the work, the
    /// `UPDATE`, `COMMIT`), so that no crash falls between the business change and the
    /// saved response.
    fn commit_if_held<R>(
        &mut self,
        id: IdRef<'_>,
        expected: &Lease,
        now: u64,
        work: impl FnOnce() -> (R, SavedResponse),
    ) -> Option<R>
    where
        Self: Sized,
    {
        if !self.get(id).is_some_and(|r| r.is_held_by(expected)) {
            return None;
        }
        let (out, response) = work();
        let written = self.compare_and_set(id, expected, Status::Done { response }, now);
        // `&mut self` kept every other writer out since the check above.
        debug_assert!(written, "row changed under &mut self");
        Some(out)
    }
}

/// The in-memory table.
///
/// Rows live in a `HashMap` for speed (a `BTreeMap` of string keys cost about 5× a raw
/// map per operation in `benches/cycle.rs`: every comparison chases a pointer), and
/// everything that iterates ([`for_each`](Table::for_each),
/// [`delete_expired`](Table::delete_expired)) sorts by (scope, key) first, so what
/// callers observe is deterministic whatever the hasher's seed.
#[derive(Debug, Clone, Default)]
pub struct MemoryTable {
    rows: HashMap<RecordId, Record>,
    last_token: u64,
}

impl MemoryTable {
    /// An empty table; the first token is 1.
    pub fn new() -> Self {
        Self::default()
    }

    fn get_mut(&mut self, id: IdRef<'_>) -> Option<&mut Record> {
        self.rows.get_mut(&id as &dyn IdPair)
    }

    fn remove_where(
        &mut self,
        id: IdRef<'_>,
        cond: impl FnOnce(&Record) -> bool,
    ) -> Option<Record> {
        if !cond(self.rows.get(&id as &dyn IdPair)?) {
            return None;
        }
        self.rows.remove(&id as &dyn IdPair)
    }
}

impl Table for MemoryTable {
    fn get(&self, id: IdRef<'_>) -> Option<Cow<'_, Record>> {
        self.rows.get(&id as &dyn IdPair).map(Cow::Borrowed)
    }

    fn get_with_id(&self, id: IdRef<'_>) -> Option<(Option<&RecordId>, Cow<'_, Record>)> {
        self.rows
            .get_key_value(&id as &dyn IdPair)
            .map(|(k, r)| (Some(k), Cow::Borrowed(r)))
    }

    fn insert_if_absent(&mut self, id: &RecordId, record: Record) -> bool {
        match self.rows.entry(id.clone()) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(record);
                true
            }
        }
    }

    fn compare_and_set(
        &mut self,
        id: IdRef<'_>,
        expected: &Lease,
        status: Status,
        now: u64,
    ) -> bool {
        match self.get_mut(id) {
            Some(r) if r.is_held_by(expected) => {
                r.status = status;
                r.expires_at = rules::expires_at(now, r.retention_ms);
                true
            }
            _ => false,
        }
    }

    fn release_if_held(&mut self, id: IdRef<'_>, expected: &Lease) -> bool {
        match self.get_mut(id) {
            Some(r) if r.is_held_by(expected) => {
                r.status = Status::Released { lease: *expected };
                true
            }
            _ => false,
        }
    }

    fn reclaim_if_released(
        &mut self,
        id: IdRef<'_>,
        released: &Lease,
        lease: Lease,
        now: u64,
    ) -> bool {
        match self.get_mut(id) {
            Some(r) if r.is_released_by(released) => {
                r.status = Status::InFlight { lease };
                r.expires_at = rules::expires_at(now, r.retention_ms);
                true
            }
            _ => false,
        }
    }

    fn delete_if_expired(&mut self, id: IdRef<'_>, now: u64, lock_ms: u64) -> bool {
        self.remove_where(id, |r| r.is_expired(now, lock_ms))
            .is_some()
    }

    fn delete_expired(&mut self, now: u64, lock_ms: u64) -> Vec<RecordId> {
        let mut gone = Vec::new();
        self.rows.retain(|id, r| {
            let expired = r.is_expired(now, lock_ms);
            if expired {
                gone.push(id.clone());
            }
            !expired
        });
        gone.sort_unstable();
        gone
    }

    fn next_token(&mut self) -> u64 {
        self.last_token += 1;
        self.last_token
    }

    fn put(&mut self, id: IdRef<'_>, record: Record) -> Option<Record> {
        if let Some(row) = self.get_mut(id) {
            return Some(std::mem::replace(row, record));
        }
        self.rows.insert(id.to_owned_unchecked(), record)
    }

    fn remove(&mut self, id: IdRef<'_>) -> Option<Record> {
        self.rows.remove(&id as &dyn IdPair)
    }

    fn len(&self) -> usize {
        self.rows.len()
    }

    fn for_each(&self, visit: &mut dyn FnMut(IdRef<'_>, &Record)) {
        let mut rows: Vec<_> = self.rows.iter().collect();
        rows.sort_unstable_by(|a, b| a.0.cmp(b.0));
        for (id, r) in rows {
            visit(id.as_ref(), r);
        }
    }

    fn commit_if_held<R>(
        &mut self,
        id: IdRef<'_>,
        expected: &Lease,
        now: u64,
        work: impl FnOnce() -> (R, SavedResponse),
    ) -> Option<R> {
        let r = self.get_mut(id).filter(|r| r.is_held_by(expected))?;
        let (out, response) = work();
        r.status = Status::Done { response };
        r.expires_at = rules::expires_at(now, r.retention_ms);
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;
    use crate::Fingerprint;

    const ID: IdRef<'static> = IdRef {
        scope: "s",
        key: "k",
    };

    fn owned(scope: &str, key: &str) -> RecordId {
        IdRef { scope, key }.to_owned().unwrap()
    }

    fn in_flight(table: &mut MemoryTable, locked_at: u64, expires_at: u64) -> (Record, Lease) {
        let lease = Lease {
            locked_at,
            token: table.next_token(),
        };
        let record = Record {
            fingerprint: Fingerprint([7; 32]),
            on_error: crate::ErrorPolicy::SaveResponse,
            status: Status::InFlight { lease },
            created_at: locked_at,
            expires_at,
            retention_ms: 1_000,
        };
        (record, lease)
    }

    fn done_response() -> SavedResponse {
        SavedResponse::json(200, b"{}".to_vec())
    }

    fn done() -> Status {
        Status::Done {
            response: done_response(),
        }
    }

    #[test]
    fn tokens_are_strictly_increasing() {
        let mut t = MemoryTable::new();
        let tokens: Vec<u64> = (0..5).map(|_| t.next_token()).collect();
        assert_eq!(tokens, vec![1, 2, 3, 4, 5]);
    }

    #[test]
    fn insert_if_absent_inserts_once() {
        let mut t = MemoryTable::new();
        let (r, _) = in_flight(&mut t, 0, 100);
        assert!(t.insert_if_absent(&owned("s", "k"), r.clone()));
        let (other, _) = in_flight(&mut t, 1, 100);
        assert!(!t.insert_if_absent(&owned("s", "k"), other));
        assert_eq!(t.get(ID).as_deref(), Some(&r));
        assert_eq!(t.len(), 1);
    }

    #[test]
    fn compare_and_set_needs_the_exact_lease() {
        let mut t = MemoryTable::new();
        let (r, lease) = in_flight(&mut t, 0, 100);
        t.insert_if_absent(&owned("s", "k"), r);
        let same_ms = Lease {
            locked_at: 0,
            token: lease.token + 1,
        };
        assert!(!t.compare_and_set(ID, &same_ms, done(), 5));
        let other_ms = Lease {
            locked_at: 1,
            token: lease.token,
        };
        assert!(!t.compare_and_set(ID, &other_ms, done(), 5));
        assert!(t.compare_and_set(ID, &lease, done(), 5));
        // Retention restarts at the write, for the row's own span.
        assert_eq!(t.get(ID).unwrap().expires_at, 1_005);
        // Done rows hold no lease.
        assert!(!t.compare_and_set(ID, &lease, done(), 6));
        let missing = IdRef {
            scope: "s",
            key: "x",
        };
        assert!(!t.compare_and_set(missing, &lease, done(), 6));
    }

    #[test]
    fn release_if_held_needs_the_exact_lease_and_keeps_the_row() {
        let mut t = MemoryTable::new();
        let (r, lease) = in_flight(&mut t, 0, 100);
        t.insert_if_absent(&owned("s", "k"), r.clone());
        let stranger = Lease {
            locked_at: 0,
            token: 99,
        };
        assert!(!t.release_if_held(ID, &stranger));
        assert_eq!(t.get(ID).as_deref(), Some(&r));
        assert!(t.release_if_held(ID, &lease));
        let released = Record {
            status: Status::Released { lease },
            ..r
        };
        assert_eq!(
            t.get(ID).as_deref(),
            Some(&released),
            "only the status changed"
        );
        // A release is final for its lease: no second release, no save.
        assert!(!t.release_if_held(ID, &lease));
        assert!(!t.compare_and_set(ID, &lease, done(), 1));
        assert!(t
            .commit_if_held(ID, &lease, 1, || ((), done_response()))
            .is_none());
        assert_eq!(t.get(ID).as_deref(), Some(&released));
    }

    #[test]
    fn reclaim_if_released_needs_the_released_lease() {
        let mut t = MemoryTable::new();
        let (r, lease) = in_flight(&mut t, 0, 100);
        t.insert_if_absent(&owned("s", "k"), r);
        let next = Lease {
            locked_at: 40,
            token: t.next_token(),
        };
        assert!(
            !t.reclaim_if_released(ID, &lease, next, 40),
            "still in flight"
        );
        assert!(t.release_if_held(ID, &lease));
        let stranger = Lease {
            locked_at: 0,
            token: 99,
        };
        assert!(!t.reclaim_if_released(ID, &stranger, next, 40));
        assert!(t.reclaim_if_released(ID, &lease, next, 40));
        let row = t.get(ID).unwrap();
        assert!(row.is_held_by(&next));
        // Retention restarts at the claim, for the row's own span; created_at stays.
        assert_eq!((row.created_at, row.expires_at), (0, 1_040));
        drop(row);
        assert!(!t.reclaim_if_released(ID, &lease, next, 41), "one winner");
    }

    #[test]
    fn delete_expired_spares_live_claims_and_unexpired_rows() {
        let mut t = MemoryTable::new();
        let lock_ms = 10;
        // Live claim past retention: kept.
        let (live, _) = in_flight(&mut t, 95, 50);
        t.insert_if_absent(&owned("a", "live"), live);
        // Stale claim past retention: deleted.
        let (stale, _) = in_flight(&mut t, 0, 50);
        t.insert_if_absent(&owned("a", "stale"), stale);
        // Done past retention: deleted.
        let (mut old, _) = in_flight(&mut t, 0, 100);
        old.status = done();
        t.insert_if_absent(&owned("b", "old"), old.clone());
        // Done inside retention: kept.
        old.expires_at = 101;
        t.insert_if_absent(&owned("b", "new"), old);

        let gone: Vec<String> = t
            .delete_expired(100, lock_ms)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(gone, vec!["a/stale", "b/old"]);
        assert_eq!(t.len(), 2);
        let mut left = Vec::new();
        t.for_each(&mut |id, _| left.push(format!("{}/{}", id.scope, id.key)));
        assert_eq!(left, vec!["a/live", "b/new"]);
        assert!(!t.delete_if_expired(
            IdRef {
                scope: "a",
                key: "live"
            },
            100,
            lock_ms
        ));
        assert!(t.delete_if_expired(
            IdRef {
                scope: "a",
                key: "live"
            },
            105,
            lock_ms
        ));
    }

    #[test]
    fn commit_if_held_runs_work_only_under_the_lease() {
        let mut t = MemoryTable::new();
        let (r, lease) = in_flight(&mut t, 0, 100);
        t.insert_if_absent(&owned("s", "k"), r);
        let stranger = Lease {
            locked_at: 0,
            token: 99,
        };
        let mut runs = 0;
        let out = t.commit_if_held(ID, &stranger, 7, || {
            runs += 1;
            (1, SavedResponse::json(200, vec![]))
        });
        assert_eq!((out, runs), (None, 0));
        let out = t.commit_if_held(ID, &lease, 7, || {
            runs += 1;
            (2, SavedResponse::json(200, vec![]))
        });
        assert_eq!((out, runs), (Some(2), 1));
        let row = t.get(ID).unwrap();
        assert!(matches!(row.status, Status::Done { .. }));
        assert_eq!(row.expires_at, 1_007);
    }

    /// The default `commit_if_held`, through a table that only forwards the primitives.
    #[test]
    fn default_commit_if_held_matches_the_memory_table() {
        struct Plain(MemoryTable);
        impl Table for Plain {
            fn get(&self, id: IdRef<'_>) -> Option<Cow<'_, Record>> {
                self.0.get(id)
            }
            fn insert_if_absent(&mut self, id: &RecordId, record: Record) -> bool {
                self.0.insert_if_absent(id, record)
            }
            fn compare_and_set(&mut self, id: IdRef<'_>, e: &Lease, s: Status, x: u64) -> bool {
                self.0.compare_and_set(id, e, s, x)
            }
            fn release_if_held(&mut self, id: IdRef<'_>, e: &Lease) -> bool {
                self.0.release_if_held(id, e)
            }
            fn reclaim_if_released(&mut self, id: IdRef<'_>, r: &Lease, l: Lease, x: u64) -> bool {
                self.0.reclaim_if_released(id, r, l, x)
            }
            fn delete_if_expired(&mut self, id: IdRef<'_>, now: u64, lock_ms: u64) -> bool {
                self.0.delete_if_expired(id, now, lock_ms)
            }
            fn delete_expired(&mut self, now: u64, lock_ms: u64) -> Vec<RecordId> {
                self.0.delete_expired(now, lock_ms)
            }
            fn next_token(&mut self) -> u64 {
                self.0.next_token()
            }
            fn put(&mut self, id: IdRef<'_>, record: Record) -> Option<Record> {
                self.0.put(id, record)
            }
            fn remove(&mut self, id: IdRef<'_>) -> Option<Record> {
                self.0.remove(id)
            }
            fn len(&self) -> usize {
                self.0.len()
            }
            fn for_each(&self, visit: &mut dyn FnMut(IdRef<'_>, &Record)) {
                self.0.for_each(visit)
            }
        }
        let mut t = Plain(MemoryTable::new());
        let (r, lease) = in_flight(&mut t.0, 0, 100);
        t.insert_if_absent(&owned("s", "k"), r);
        let stranger = Lease {
            locked_at: 0,
            token: 99,
        };
        let mut runs = 0;
        let out = t.commit_if_held(ID, &stranger, 7, || {
            runs += 1;
            ((), SavedResponse::json(200, vec![]))
        });
        assert_eq!((out, runs), (None, 0));
        let out = t.commit_if_held(ID, &lease, 7, || {
            runs += 1;
            ((), SavedResponse::json(200, vec![]))
        });
        assert_eq!((out, runs), (Some(()), 1));
        let row = t.get(ID).unwrap();
        assert!(matches!(row.status, Status::Done { .. }));
        assert_eq!(row.expires_at, 1_007);
    }

    #[test]
    fn put_and_remove_are_unconditional_and_keep_len() {
        let mut t = MemoryTable::new();
        let (r, _) = in_flight(&mut t, 0, 100);
        assert_eq!(t.put(ID, r.clone()), None);
        assert_eq!(t.put(ID, r.clone()), Some(r.clone()));
        assert_eq!(t.len(), 1);
        assert_eq!(t.remove(ID), Some(r));
        assert_eq!(t.remove(ID), None);
        assert!(t.is_empty());
    }
}
