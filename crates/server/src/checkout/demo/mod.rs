//! Demo mode (`idem-server serve --demo-faults`): what the demo page's real-server mode needs
//! from the checkout, and nothing a production server should ever run.
//!
//! - **A fresh tenant per page session** ([`tenants`]): the bearer token `demo-<uuid>` is its
//!   own scope, so a session sees only its own claims, orders, events and ledger rows.
//! - **Faults on request, per tenant** ([`faults`], [`inject`]): a session arms
//!   `drop-response`, `hold-response`, `slow-worker`, `crash-after-charge` or `unavailable`
//!   (one-shot, counted or probabilistic) with `PUT /api/demo/faults`; only that tenant's
//!   checkouts are touched, and the process never crashes (a "crash" ends one worker).
//! - **What PayCo charged for this session** ([`routes`]: `GET /api/demo/ledger`): PayCo's
//!   own ledger, read from PayCo and cut to this tenant's orders, plus `payco:` and `fault:`
//!   notes in the tenant's event stream (`GET /api/events`) whenever PayCo answered for one
//!   of its orders or a fault fired.
//! - `?access_token=demo-<uuid>` on GET requests, for `EventSource`, which cannot send an
//!   `Authorization` header (demo tokens only: a real tenant's token never goes in a URL).
//!
//! Refused on a listen address that is not loopback, like failpoints. The endpoints, bodies
//! and events are documented in the crate README's "Demo mode".

pub mod faults;
pub mod inject;
pub mod routes;
pub mod tenants;

use std::{net::SocketAddr, sync::Arc};

use idem_store::EventKind;

use crate::{checkout::payco_client::PaycoClient, db::Db, request::ScopeExtractor, sql::now_ms};
use faults::{FaultTable, Fired};

pub use inject::{AfterCharge, Checkpoints};
pub use tenants::DemoTenants;

/// Why demo mode could not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DemoError {
    /// Asked for on an address other machines can reach.
    #[error("demo faults are only allowed on a loopback listen address, not {0}")]
    NotLoopback(SocketAddr),
}

/// The demo mode of one checkout server (cheap to clone).
#[derive(Clone)]
pub struct Demo(Arc<Inner>);

/// What demo mode shares.
pub struct Inner {
    /// Every tenant's armed faults.
    pub faults: FaultTable,
    /// The checkout's tenants, demo sessions included.
    pub tenants: Arc<dyn ScopeExtractor>,
    /// The checkout's database (orders; the event log the notes go to).
    pub db: Db,
    /// PayCo, for its ledger.
    pub payco: PaycoClient,
    /// The claims' lease, shown to the page.
    pub lock_ms: u64,
}

impl std::ops::Deref for Demo {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl Demo {
    /// Demo mode for a server listening on `listen`, which must be loopback.
    pub fn new(listen: SocketAddr, inner: Inner) -> Result<Self, DemoError> {
        if !listen.ip().is_loopback() {
            return Err(DemoError::NotLoopback(listen));
        }
        Ok(Self(Arc::new(inner)))
    }

    /// A note in `scope`'s event stream (a `note` event of the store's log, so it is ordered
    /// with the claim events, resumable and scoped like them).
    pub fn note(&self, scope: &str, key: Option<&str>, text: &str) {
        let kind = EventKind::Note {
            text: text.to_owned(),
        };
        self.db.log(now_ms(), scope, key, kind);
    }

    /// The `fault:` note of a fault that fired.
    pub fn note_fault(&self, scope: &str, key: Option<&str>, fired: Fired, what: &str) {
        self.note(
            scope,
            key,
            &format!("fault: {}: {what}", fired.fault.name()),
        );
    }
}
