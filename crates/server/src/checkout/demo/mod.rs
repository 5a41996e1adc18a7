//! Demo mode (`idem-server serve --demo-faults`): what the demo page's real-server mode needs
//! from the checkout, and nothing a production server should ever run.
//!
//! - **A fresh tenant per page session** ([`tenants`]): the bearer token `demo-<uuid>` is its
//!   own scope, so a session sees only its own claims, orders, events and ledger rows.
//! - **Faults on request, per tenant**: a session arms `drop-response`, `hold-response`,
//!   `slow-worker`, `crash-after-charge` or `unavailable` (one-shot, counted or probabilistic)
//!   with `PUT /api/demo/faults`; each is a checkpoint and a verdict of the checkout's one
//!   fault mechanism ([`super::checkpoint`], the table in [`super::checkpoint::faults`]), only
//!   that tenant's checkouts are touched, and the process never crashes (a "crash" ends one
//!   worker).
//! - **What PayCo charged for this session** ([`routes`]: `GET /api/demo/ledger`): PayCo's
//!   own ledger, read from PayCo and cut to this tenant's orders, plus `payco:` and `fault:`
//!   notes in the tenant's event stream (`GET /api/events`) whenever PayCo answered for one
//!   of its orders or a fault fired.
//! - `?access_token=demo-<uuid>` on GET requests, for `EventSource`, which cannot send an
//!   `Authorization` header (demo tokens only: a real tenant's token never goes in a URL).
//!
//! Refused on a listen address that is not loopback, like failpoints (the checkpoints refuse
//! it). The endpoints, bodies and events are documented in the crate README's "Demo mode".

pub mod routes;
pub mod tenants;

use std::sync::Arc;

use super::checkpoint::faults::FaultTable;
use crate::{checkout::payco_client::PaycoClient, db::Db, request::ScopeExtractor};

pub use tenants::DemoTenants;

/// The demo mode of one checkout server (cheap to clone).
#[derive(Clone)]
pub struct Demo(Arc<Inner>);

/// What demo mode shares.
pub struct Inner {
    /// Every tenant's armed faults (the checkout's checkpoints fire them).
    pub faults: Arc<FaultTable>,
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
    /// Demo mode's state.
    pub fn new(inner: Inner) -> Self {
        Self(Arc::new(inner))
    }
}
