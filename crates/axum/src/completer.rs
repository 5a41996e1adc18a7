//! The completer: finishes work whose worker died and whose client never came back.
//!
//! A checkout whose worker died after PayCo charged, and whose client closed the tab, stays in
//! flight with a stale claim until retention prunes it: the customer was charged, the order
//! says unpaid, and nobody is told. Every [`CompleterConfig::interval`] the completer lists the
//! claims abandoned for [`CompleterConfig::abandoned_after`] that have a recovery point
//! ([`Db::abandoned`]), takes each over with the same compare-and-set a retry uses
//! ([`Db::take_over`]: several servers sharing PostgreSQL, one winner per claim), and hands it
//! to the route's resume function, which finishes the work from the recovery point (the
//! checkout: PayCo asked again under `charge:<order>`, which answers what it did) and ends the
//! claim, fenced like any worker. A client that comes back later gets the replay.
//!
//! A route registers its resume function when it builds the completer:
//!
//! ```no_run
//! # async fn f(db: idem_axum::db::Db) {
//! use idem_axum::completer::{Completer, CompleterConfig, Resumed};
//! use idem_store::{ErrorPolicy, RouteConfig};
//!
//! let route = RouteConfig::required("POST /v1/charges", ErrorPolicy::ReleaseClaim);
//! let completer = Completer::new(db, route, CompleterConfig::default(), |claim_tx| async move {
//!     // Read `claim_tx.recovery()`, commit the claim, redo the work from there under the
//!     // same downstream keys, and end the claim (`Db::finish…`), as the route itself does.
//!     let claim = claim_tx.commit().await?;
//!     # let _ = claim;
//!     Ok(Resumed::Finished)
//! });
//! // `ops::Service { completer: Some(completer), .. }` runs it beside the service.
//! # }
//! ```
//!
//! Claims without a recovery point are not touched: nothing says how far their work got.
//!
//! One completer per claim table: rows do not record which route claimed them (only their
//! fingerprint, which binds the route without naming it), so a completer is handed every
//! abandoned claim of its table that has a recovery point. A table shared by several routes
//! needs recovery points that say which route's work they are (a typed point with the route
//! in it), and one resume function that dispatches on it; `route` only gives the decision its
//! error policy and retention for a row that has none of its own.

use std::{future::Future, pin::Pin, sync::Arc, time::Duration};

use prometheus_client::metrics::{counter::Counter, histogram::Histogram};
use tokio::sync::watch;

use crate::{
    db::{ClaimTx, Db, DbError},
    sql::now_ms,
};
use idem_store::RouteConfig;

/// How often, how old and how many.
///
/// ## Default values
/// - `interval`: 5 s between passes.
/// - `abandoned_after`: 60 s since the claim's lease was taken (at least the lease: a live
///   lease is never taken over; a minute lets a client's own retries come first).
/// - `batch`: 100 claims per pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompleterConfig {
    /// Time between passes.
    pub interval: Duration,
    /// Age of a claim's lease at which the claim counts as abandoned.
    pub abandoned_after: Duration,
    /// Claims per pass.
    pub batch: u32,
}

impl Default for CompleterConfig {
    fn default() -> Self {
        Self {
            interval: Duration::from_secs(5),
            abandoned_after: Duration::from_secs(60),
            batch: 100,
        }
    }
}

/// How a resume function left a taken-over claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resumed {
    /// The work is finished and the claim ended (saved, or released by the route's policy).
    Finished,
    /// Not finished (another system could not tell its outcome, say): the claim is left in
    /// flight under the completer's lease, to go stale and be tried again at a later pass or
    /// by the client's retry.
    Left,
}

/// A route's resume function: finish the work of a taken-over claim and end the claim.
type ResumeFn = Arc<
    dyn Fn(ClaimTx) -> Pin<Box<dyn Future<Output = Result<Resumed, DbError>> + Send>> + Send + Sync,
>;

/// What the completer did, for `/metrics` (`idem_completer_*`).
#[derive(Debug, Clone)]
pub struct CompleterStats {
    /// Claims taken over and finished by their resume function.
    pub completed: Counter,
    /// Claims taken over whose work could not be finished (left in flight, or a database
    /// error): the claim goes stale again and is tried at a later pass, or by a retry.
    pub failed: Counter,
    /// How old a claim's lease was when its work was completed, in seconds.
    pub age_seconds: Histogram,
}

impl Default for CompleterStats {
    fn default() -> Self {
        let buckets = [
            1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 900.0, 3_600.0, 86_400.0,
        ];
        Self {
            completed: Counter::default(),
            failed: Counter::default(),
            age_seconds: Histogram::new(buckets),
        }
    }
}

/// One pass's result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pass {
    /// Claims completed.
    pub completed: u32,
    /// Claims whose work could not be finished.
    pub failed: u32,
}

/// The completer of one claim table's abandoned claims.
#[derive(Clone)]
pub struct Completer {
    db: Db,
    route: RouteConfig,
    config: CompleterConfig,
    resume: ResumeFn,
    stats: CompleterStats,
}

impl Completer {
    /// A completer of the abandoned claims in `db` (see the module's note on tables shared by
    /// several routes), finishing each with `resume`.
    pub fn new<F, Fut>(db: Db, route: RouteConfig, config: CompleterConfig, resume: F) -> Self
    where
        F: Fn(ClaimTx) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Resumed, DbError>> + Send + 'static,
    {
        let resume: ResumeFn = Arc::new(move |claim| Box::pin(resume(claim)));
        Self {
            db,
            route,
            config,
            resume,
            stats: CompleterStats::default(),
        }
    }

    /// Its counters (registered by [`crate::ops`] when it serves the completer).
    pub fn stats(&self) -> &CompleterStats {
        &self.stats
    }

    /// One pass at `now`: take over and finish up to a batch of abandoned claims.
    pub async fn run_once(&self, now: u64) -> Result<Pass, DbError> {
        let after = u64::try_from(self.config.abandoned_after.as_millis()).unwrap_or(u64::MAX);
        let mut pass = Pass::default();
        for abandoned in self.db.abandoned(now, after, self.config.batch).await? {
            let Some(claim) = self.db.take_over(now, &abandoned, &self.route).await? else {
                continue;
            };
            let age_ms = now.saturating_sub(abandoned.locked_at);
            match (self.resume)(claim).await {
                Ok(Resumed::Finished) => {
                    pass.completed += 1;
                    self.stats.completed.inc();
                    self.stats.age_seconds.observe(age_ms as f64 / 1_000.0);
                    tracing::info!(scope = %abandoned.id.scope(), key = %abandoned.id.key(), age_ms, "completed abandoned work");
                }
                Ok(Resumed::Left) => {
                    pass.failed += 1;
                    self.stats.failed.inc();
                    tracing::warn!(scope = %abandoned.id.scope(), key = %abandoned.id.key(), "abandoned work not finished; left for a later pass");
                }
                Err(e) => {
                    pass.failed += 1;
                    self.stats.failed.inc();
                    tracing::warn!(scope = %abandoned.id.scope(), key = %abandoned.id.key(), error = %e, "completing abandoned work failed");
                }
            }
        }
        Ok(pass)
    }

    /// Run a pass every interval until `stop` turns true (or its sender is dropped). A failed
    /// pass (the database down) is logged and tried again at the next interval.
    pub fn spawn(self, stop: watch::Receiver<bool>) -> tokio::task::JoinHandle<()> {
        let interval = self.config.interval;
        crate::periodic::every(interval, stop, move || {
            let completer = self.clone();
            async move {
                if let Err(e) = completer.run_once(now_ms()).await {
                    tracing::warn!(error = %e, "completer pass failed; retrying next interval");
                }
            }
        })
    }
}
