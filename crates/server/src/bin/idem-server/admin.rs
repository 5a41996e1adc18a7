//! The binary's operations flags (drain deadline, pruner) and the `admin` commands.

use std::time::Duration;

use clap::{Args, Subcommand};
use idem_server::{
    db::{Db, DbOptions},
    ops::OpsConfig,
    retention::{pruner::PrunerConfig, tenant::delete_tenant},
};

/// Shutdown and retention settings of `serve`.
#[derive(Args)]
pub struct OpsArgs {
    /// After SIGTERM, how long in-flight requests get to commit, in ms.
    #[arg(long, default_value_t = OpsConfig::DEFAULT_DRAIN.as_millis() as u64)]
    drain_ms: u64,
    /// Time between pruner runs, in ms.
    #[arg(long, default_value_t = PrunerConfig::DEFAULT_INTERVAL.as_millis() as u64)]
    prune_interval_ms: u64,
    /// Rows per prune (and tenant-delete) statement.
    #[arg(long, default_value_t = PrunerConfig::DEFAULT_BATCH)]
    prune_batch: u32,
    /// How long a key's row (its saved response included) is kept after its last write, in
    /// ms, for routes that declare no retention of their own.
    #[arg(long, default_value_t = idem_store::StoreConfig::DEFAULT_RETENTION_MS)]
    retention_ms: u64,
    /// The expired-key guard: a request under a key with no row, whose
    /// Repeatability-First-Sent is older than its route's retention plus this many ms (the
    /// tolerance for client clocks running behind), is refused with 412 instead of run.
    #[arg(long, default_value_t = idem_store::first_sent::DEFAULT_TOLERANCE_MS)]
    first_sent_tolerance_ms: u64,
    /// Turn the expired-key guard off: a request under an expired key runs again.
    #[arg(long)]
    no_expired_key_guard: bool,
}

impl OpsArgs {
    /// The settings.
    pub fn config(&self) -> OpsConfig {
        OpsConfig {
            drain: Duration::from_millis(self.drain_ms),
            pruner: PrunerConfig {
                interval: Duration::from_millis(self.prune_interval_ms.max(1)),
                batch: self.prune_batch.max(1),
            },
            retention_ms: self.retention_ms,
            first_sent_tolerance_ms: (!self.no_expired_key_guard)
                .then_some(self.first_sent_tolerance_ms),
            ..OpsConfig::default()
        }
    }
}

/// `idem-server admin …`.
#[derive(Subcommand)]
pub enum AdminCommand {
    /// Delete every claim, saved response, recovery point and processed message id of one
    /// tenant (scope), in batches; prints the counts as JSON.
    DeleteTenant {
        /// `sqlite:FILE` or `postgres://…` (else `DATABASE_URL`).
        #[arg(long, env = "DATABASE_URL")]
        database: String,
        /// The tenant's scope, as the server's scope extractor names it (e.g. tenant-a).
        #[arg(long)]
        tenant: String,
        /// Rows per delete statement.
        #[arg(long, default_value_t = PrunerConfig::DEFAULT_BATCH)]
        batch: u32,
    },
}

impl AdminCommand {
    /// Run it; the error as a line for stderr.
    pub async fn run(self) -> Result<(), String> {
        match self {
            Self::DeleteTenant {
                database,
                tenant,
                batch,
            } => {
                if idem_store::validate_scope(&tenant).is_err() {
                    return Err(format!("{tenant:?} is not a valid tenant scope"));
                }
                let db = Db::open(&database, DbOptions::default())
                    .await
                    .map_err(|e| e.to_string())?;
                let deleted = delete_tenant(&db, &tenant, batch)
                    .await
                    .map_err(|e| e.to_string())?;
                db.close().await;
                println!(
                    "{}",
                    serde_json::json!({ "tenant": tenant, "deleted": deleted })
                );
                Ok(())
            }
        }
    }
}
