//! Test code shared by every kind of claim table: the rule tests ([`rules`]) and the model
//! test ([`model`]) are written once over [`Claims`], the operations the rules need as the
//! in-memory `Store` spells them. This crate runs them over `Store<MemoryTable>`; the
//! server's tests include this folder by path and run them over its SQLite and PostgreSQL
//! tables, so the three tables are held to the same code.

#![allow(dead_code)] // each test binary uses a part

#[cfg(not(target_arch = "wasm32"))]
pub mod model;
pub mod rules;

use idem_store::{
    Begin, Event, EventKind, Fenced, Lease, RecordId, RouteConfig, RowView, SavedResponse, Store,
    Table,
};

/// A claim table as the rule tests drive it: the `Store`'s own calls, with `now` from the
/// caller. An implementation over a database commits each claim's transaction at once
/// (no recovery point: the server's storage tests cover those) and panics on a database
/// error, which fails the test.
pub trait Claims {
    /// [`Store::begin`].
    fn begin(
        &mut self,
        now: u64,
        scope: &str,
        key: Option<&str>,
        body: &[u8],
        route: &RouteConfig,
    ) -> Begin;
    /// [`Store::begin_first_sent`] for a keyed request with a JSON `body` that says when it
    /// was first sent (the expired-key guard's input).
    fn begin_first_sent(
        &mut self,
        now: u64,
        scope: &str,
        key: &str,
        first_sent: u64,
        body: &[u8],
        route: &RouteConfig,
    ) -> Begin;
    /// The one-step write: save `response` under the lease (with no business change).
    fn commit_response(
        &mut self,
        now: u64,
        id: &RecordId,
        lease: &Lease,
        response: SavedResponse,
    ) -> Result<(), Fenced>;
    /// [`Store::save`].
    fn save(
        &mut self,
        now: u64,
        id: &RecordId,
        lease: &Lease,
        response: SavedResponse,
    ) -> Result<(), Fenced>;
    /// [`Store::fail`].
    fn fail(
        &mut self,
        now: u64,
        id: &RecordId,
        lease: &Lease,
        response: SavedResponse,
    ) -> Result<(), Fenced>;
    /// [`Store::release`].
    fn release(&mut self, now: u64, id: &RecordId, lease: &Lease) -> Result<(), Fenced>;
    /// [`Store::renew`].
    fn renew(&mut self, now: u64, id: &RecordId, lease: &Lease) -> Result<Lease, Fenced>;
    /// [`Store::prune`].
    fn prune(&mut self, now: u64) -> usize;
    /// The rows of `scopes` at `now`, in (scope, key) order.
    fn rows_of(&mut self, now: u64, scopes: &[&str]) -> Vec<RowView>;
    /// One row at `now`.
    fn row_of(&mut self, now: u64, scope: &str, key: &str) -> Option<RowView>;
    /// Rows in the table, expired ones included.
    fn row_count(&mut self) -> usize;
    /// Every event logged so far, oldest first.
    fn logged(&mut self) -> Vec<Event>;

    /// The kinds of [`logged`](Self::logged).
    fn kinds(&mut self) -> Vec<EventKind> {
        self.logged().iter().map(|e| e.kind().clone()).collect()
    }
}

/// Where a row stands, as the tests compare it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// In flight under this lease.
    InFlight {
        /// The lease.
        lease: Lease,
    },
    /// Released by this lease: bound to its fingerprint, free for the same request.
    Released {
        /// The lease that released it.
        lease: Lease,
    },
    /// Done.
    Done,
}

impl<T: Table> Claims for Store<T> {
    fn begin(
        &mut self,
        now: u64,
        scope: &str,
        key: Option<&str>,
        body: &[u8],
        route: &RouteConfig,
    ) -> Begin {
        Store::begin(self, now, scope, key, body, route)
    }

    fn begin_first_sent(
        &mut self,
        now: u64,
        scope: &str,
        key: &str,
        first_sent: u64,
        body: &[u8],
        route: &RouteConfig,
    ) -> Begin {
        let fp = idem_store::fingerprint(&route.operation, body).expect("a JSON body");
        Store::begin_first_sent(self, now, scope, Some(key), Some(first_sent), fp, route)
    }

    fn commit_response(
        &mut self,
        now: u64,
        id: &RecordId,
        lease: &Lease,
        response: SavedResponse,
    ) -> Result<(), Fenced> {
        Store::commit(self, now, id, lease, || ((), response))
    }

    fn save(
        &mut self,
        now: u64,
        id: &RecordId,
        lease: &Lease,
        response: SavedResponse,
    ) -> Result<(), Fenced> {
        Store::save(self, now, id, lease, response)
    }

    fn fail(
        &mut self,
        now: u64,
        id: &RecordId,
        lease: &Lease,
        response: SavedResponse,
    ) -> Result<(), Fenced> {
        Store::fail(self, now, id, lease, response)
    }

    fn release(&mut self, now: u64, id: &RecordId, lease: &Lease) -> Result<(), Fenced> {
        Store::release(self, now, id, lease)
    }

    fn renew(&mut self, now: u64, id: &RecordId, lease: &Lease) -> Result<Lease, Fenced> {
        Store::renew(self, now, id, lease)
    }

    fn prune(&mut self, now: u64) -> usize {
        Store::prune(self, now)
    }

    fn rows_of(&mut self, now: u64, scopes: &[&str]) -> Vec<RowView> {
        Store::rows(self, now)
            .into_iter()
            .filter(|r| scopes.contains(&r.scope.as_str()))
            .collect()
    }

    fn row_of(&mut self, now: u64, scope: &str, key: &str) -> Option<RowView> {
        Store::rows(self, now)
            .into_iter()
            .find(|r| r.scope == scope && r.key == key)
    }

    fn row_count(&mut self) -> usize {
        self.table().len()
    }

    fn logged(&mut self) -> Vec<Event> {
        Store::events(self).cloned().collect()
    }
}
