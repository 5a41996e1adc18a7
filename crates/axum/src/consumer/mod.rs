//! At-least-once consumers made effectively-once: [`Consumer::process_once`] records a
//! delivered message's id in the same transaction as its effect, so a redelivery (the
//! broker's retry, a second consumer, a consumer killed before it acknowledged) finds the
//! id and runs nothing.
//!
//! ```no_run
//! use idem_axum::{consumer::{Consumer, ConsumerConfig, Processed}, db::Db, with_tx};
//! # async fn demo(db: &Db, now: u64) -> Result<(), Box<dyn std::error::Error>> {
//! let consumer = Consumer::open(db, ConsumerConfig::default()).await?;
//! let outcome = consumer
//!     .process_once(now, "tenant-a", "msg-42", |tx| Box::pin(async move {
//!         with_tx!(tx, |conn| {
//!             sqlx::query("UPDATE stock SET n = n - 1 WHERE sku = $1")
//!                 .bind("sku-1")
//!                 .execute(conn)
//!                 .await
//!                 .map(|_| ())
//!         })?;
//!         Ok::<_, sqlx::Error>(())
//!     }))
//!     .await?;
//! // Acknowledge the message to the broker in both cases.
//! if let Processed::Duplicate = outcome { /* delivered before: nothing ran */ }
//! # Ok(()) }
//! ```
//!
//! What it does not do: talk to a broker (acknowledging is the caller's, after this
//! returns), or make an effect outside the transaction (an HTTP call) happen once: such an
//! effect needs its own idempotency key (the message id is a good one).
//!
//! Retention: an id is remembered for [`ConsumerConfig::retention_ms`] and pruned after
//! ([`Consumer::prune`], run by the server's pruner); a redelivery later than that runs the
//! effect again, so it must exceed the broker's redelivery window.

use futures_util::future::BoxFuture;
use tracing::Instrument;

use crate::{
    db::{Db, DbError, Tx},
    with_tx,
};

/// The `idem_messages` table's versioned schema.
pub const MIGRATIONS: crate::db::AppMigrations = crate::db::AppMigrations {
    name: "idem_consumer",
    sqlite: &[(1, "messages", include_str!("schema/sqlite.sql"))],
    postgres: &[(1, "messages", include_str!("schema/postgres.sql"))],
};

/// Longest scope or message id, in bytes (the claim table's key limit).
pub const MAX_ID_BYTES: usize = 255;

/// How a [`Consumer`] remembers ids.
///
/// ## Default values
/// - `retention_ms`: 7 days (brokers redeliver for days: SQS keeps a message 4 days by
///   default, up to 14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConsumerConfig {
    /// How long a processed id is remembered.
    pub retention_ms: u64,
}

impl Default for ConsumerConfig {
    fn default() -> Self {
        Self {
            retention_ms: 7 * 24 * 60 * 60 * 1000,
        }
    }
}

/// What [`Consumer::process_once`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Processed<T> {
    /// First delivery: the effect ran and committed with the id.
    Applied(T),
    /// Processed before: nothing ran. Acknowledge it.
    Duplicate,
}

/// Why a message was not processed. Nothing was recorded: a redelivery tries again.
#[derive(Debug, thiserror::Error)]
pub enum ConsumeError<E> {
    /// The effect failed; its writes were rolled back.
    #[error("effect failed: {0}")]
    Effect(E),
    /// The scope or message id is empty or longer than [`MAX_ID_BYTES`].
    #[error("invalid {0}: empty or over 255 bytes")]
    InvalidId(&'static str),
    /// The database failed (unavailable: retry later).
    #[error(transparent)]
    Db(#[from] DbError),
}

/// The processed-message table on a [`Db`].
#[derive(Debug, Clone)]
pub struct Consumer {
    db: Db,
    config: ConsumerConfig,
}

impl Consumer {
    /// Bring `idem_messages` up to date on `db` and use it.
    pub async fn open(db: &Db, config: ConsumerConfig) -> Result<Consumer, DbError> {
        db.migrate(&MIGRATIONS).await?;
        Ok(Consumer {
            db: db.clone(),
            config,
        })
    }

    /// Run `effect` for message `message_id` of `scope` unless it was processed before, in
    /// one transaction with the record that it was. Two deliveries racing on two consumers:
    /// the second waits for the first's transaction (PostgreSQL: the primary key's lock;
    /// SQLite: the write lock), then finds the id and returns [`Processed::Duplicate`].
    /// A consumer killed before the commit leaves nothing; after it, only the id and the
    /// effect, together.
    pub async fn process_once<T, E, F>(
        &self,
        now: u64,
        scope: &str,
        message_id: &str,
        effect: F,
    ) -> Result<Processed<T>, ConsumeError<E>>
    where
        F: for<'t> FnOnce(&'t mut Tx) -> BoxFuture<'t, Result<T, E>>,
    {
        for (what, id) in [("scope", scope), ("message id", message_id)] {
            if id.is_empty() || id.len() > MAX_ID_BYTES {
                return Err(ConsumeError::InvalidId(what));
            }
        }
        // ERROR level so the span exists at any verbosity (see ops::trace).
        let span = tracing::error_span!("message", scope, message_id);
        self.run_once(now, scope, message_id, effect)
            .instrument(span)
            .await
    }

    async fn run_once<T, E, F>(
        &self,
        now: u64,
        scope: &str,
        message_id: &str,
        effect: F,
    ) -> Result<Processed<T>, ConsumeError<E>>
    where
        F: for<'t> FnOnce(&'t mut Tx) -> BoxFuture<'t, Result<T, E>>,
    {
        let now_i = to_i64("now", now)?;
        let expires = to_i64("expires_at", now.saturating_add(self.config.retention_ms))?;
        let mut tx = self.begin().await?;
        let first = with_tx!(&mut tx, |conn| {
            sqlx::query_scalar::<_, i32>(
                "INSERT INTO idem_messages (scope, message_id, processed_at, expires_at) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (scope, message_id) DO NOTHING RETURNING 1",
            )
            .bind(scope)
            .bind(message_id)
            .bind(now_i)
            .bind(expires)
            .fetch_optional(conn)
            .await
        })
        .map_err(DbError::from)?;
        if first.is_none() {
            tx.rollback().await.map_err(DbError::from)?;
            tracing::debug!("duplicate delivery: nothing ran");
            return Ok(Processed::Duplicate);
        }
        match effect(&mut tx).await {
            Ok(value) => {
                tx.commit().await.map_err(DbError::from)?;
                Ok(Processed::Applied(value))
            }
            Err(e) => {
                tx.rollback().await.map_err(DbError::from)?;
                tracing::warn!("effect failed: rolled back, a redelivery retries");
                Err(ConsumeError::Effect(e))
            }
        }
    }

    /// Delete ids past retention at `now`, at most `batch` per statement; how many went.
    pub async fn prune(&self, now: u64, batch: u32) -> Result<u64, DbError> {
        let now_i = to_i64("now", now)?;
        let batch = i64::from(batch.max(1));
        let mut total = 0;
        loop {
            let gone = crate::with_pool!(self.db, |pool| {
                sqlx::query(
                    "DELETE FROM idem_messages WHERE (scope, message_id) IN \
                     (SELECT scope, message_id FROM idem_messages WHERE expires_at <= $1 LIMIT $2)",
                )
                .bind(now_i)
                .bind(batch)
                .execute(pool)
                .await?
                .rows_affected()
            });
            total += gone;
            if gone < batch as u64 {
                return Ok(total);
            }
        }
    }

    /// A write transaction (SQLite: `BEGIN IMMEDIATE`, so two consumers never deadlock
    /// upgrading a read lock).
    async fn begin(&self) -> Result<Tx, DbError> {
        Ok(match (self.db.sqlite_pool(), self.db.postgres_pool()) {
            (Some(p), _) => Tx::begin_sqlite(p).await?,
            (None, Some(p)) => Tx::begin_postgres(p).await?,
            (None, None) => unreachable!("a Db has exactly one pool"),
        })
    }
}

fn to_i64(what: &'static str, value: u64) -> Result<i64, DbError> {
    i64::try_from(value).map_err(|_| DbError::OutOfRange { what, value })
}
