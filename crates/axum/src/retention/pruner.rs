//! The background pruner: every [`PrunerConfig::interval`] it deletes the claim table's
//! rows past retention ([`Db::prune`], which never removes a live claim and deletes in
//! batches of [`DbOptions::prune_batch`](crate::db::DbOptions::prune_batch) rows), and, when
//! the service has a [`Consumer`], its message ids past retention.
//!
//! Each batch is its own statement, so no prune holds the table (or SQLite's write lock) for
//! long; requests interleave between batches. Every pruned claim is an
//! [`EventKind::Pruned`](idem_store::EventKind::Pruned) event (counted by the metrics).

use std::time::Duration;

use tokio::sync::watch;

use crate::{consumer::Consumer, db::Db, sql::now_ms};

/// How often and how much the pruner deletes.
///
/// ## Default values
/// - `interval`: 60 s between runs (a row past retention lingers at most that long; it
///   already counts as absent to the rules).
/// - `batch`: 1,000 rows per delete statement (as brandur's reaper).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrunerConfig {
    /// Time between runs.
    pub interval: Duration,
    /// Rows per delete statement.
    pub batch: u32,
}

impl PrunerConfig {
    /// The default batch size.
    pub const DEFAULT_BATCH: u32 = 1_000;
    /// The default interval.
    pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);
}

impl Default for PrunerConfig {
    fn default() -> Self {
        Self {
            interval: Self::DEFAULT_INTERVAL,
            batch: Self::DEFAULT_BATCH,
        }
    }
}

/// One run: prune the claims (and the consumer's ids) past retention now; how many claims
/// and ids went.
pub async fn prune_once(
    db: &Db,
    consumer: Option<&Consumer>,
    batch: u32,
) -> Result<(usize, u64), crate::db::DbError> {
    let now = now_ms();
    let claims = db.prune(now).await?;
    let ids = match consumer {
        Some(c) => c.prune(now, batch).await?,
        None => 0,
    };
    Ok((claims, ids))
}

/// Run the pruner until `stop` turns true (or its sender is dropped). A failed run (the
/// database down) is logged and retried at the next interval.
pub fn spawn(
    db: Db,
    consumer: Option<Consumer>,
    config: PrunerConfig,
    stop: watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    crate::periodic::every(config.interval, stop, move || {
        let (db, consumer) = (db.clone(), consumer.clone());
        async move {
            match prune_once(&db, consumer.as_ref(), config.batch).await {
                Ok((0, 0)) => {}
                Ok((claims, ids)) => tracing::info!(claims, message_ids = ids, "pruned"),
                Err(e) => tracing::warn!(error = %e, "prune failed; retrying next interval"),
            }
        }
    })
}
