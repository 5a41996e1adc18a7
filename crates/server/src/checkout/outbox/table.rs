//! The `outbox` table: the message a paid order's fenced commit writes ([`paid`]), the
//! relay's read of unsent messages in id order ([`unsent`]), its mark ([`mark_sent`]) and the
//! pruning of rows sent long enough ago ([`prune_sent`]).

use crate::{db::Db, db::RouteInsert, with_pool};

use super::wire::{OrderPaid, ORDER_PAID};

/// An `order.paid` message, ready to be written with the order's settlement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// The tenant.
    pub scope: String,
    /// `order-<id>-paid`: one per order, whoever commits it.
    pub message_id: String,
    /// The payload as JSON text.
    pub payload: String,
    /// When the commit was made, ms since the epoch.
    pub created_at: i64,
}

/// The message for order `order` of `scope`, paid `amount` cents with PayCo's `charge`.
pub fn paid(scope: &str, order: i64, amount: i64, charge: &str, created_at: i64) -> Message {
    let payload = OrderPaid {
        order,
        amount,
        charge: charge.to_owned(),
    };
    Message {
        scope: scope.to_owned(),
        message_id: format!("order-{order}-paid"),
        // Three plain fields: serialising cannot fail.
        payload: serde_json::to_string(&payload).unwrap_or_default(),
        created_at,
    }
}

impl Message {
    /// The row, as a write the fenced commit carries (`Db::finish_with`).
    pub fn insert(&self) -> RouteInsert<'_> {
        RouteInsert::new("outbox")
            .value("scope", &self.scope)
            .value("message_id", &self.message_id)
            .value("kind", ORDER_PAID)
            .value("payload", &self.payload)
            .value("created_at", self.created_at)
    }
}

/// A message not yet acknowledged, as the relay reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsent {
    /// The row's id: the relay's order.
    pub id: i64,
    /// The tenant.
    pub scope: String,
    /// The message id.
    pub message_id: String,
    /// Its kind.
    pub kind: String,
    /// Its payload, JSON text.
    pub payload: String,
}

/// At most `batch` unsent messages with an id above `after`, oldest (lowest id) first.
pub async fn unsent(db: &Db, after: i64, batch: u32) -> Result<Vec<Unsent>, sqlx::Error> {
    let sql = "SELECT id, scope, message_id, kind, payload FROM outbox \
               WHERE sent_at IS NULL AND id > $1 ORDER BY id LIMIT $2";
    Ok(with_pool!(db, |pool| {
        use sqlx::Row;
        let rows = sqlx::query(sql)
            .bind(after)
            .bind(i64::from(batch))
            .fetch_all(pool)
            .await?;
        let mut unsent = Vec::with_capacity(rows.len());
        for row in &rows {
            unsent.push(Unsent {
                id: row.try_get("id")?,
                scope: row.try_get("scope")?,
                message_id: row.try_get("message_id")?,
                kind: row.try_get("kind")?,
                payload: row.try_get("payload")?,
            });
        }
        unsent
    }))
}

/// Mark message `id` sent at `now` (acknowledged by the consumer).
pub async fn mark_sent(db: &Db, id: i64, now: i64) -> Result<(), sqlx::Error> {
    let sql = "UPDATE outbox SET sent_at = $1 WHERE id = $2 AND sent_at IS NULL";
    with_pool!(db, |pool| {
        sqlx::query(sql).bind(now).bind(id).execute(pool).await?;
    });
    Ok(())
}

/// Delete up to `limit` messages sent before `before` (ms since the epoch), oldest first; how
/// many went. A sent row is history only: the consumer's own table of handled ids, not this
/// row, is what makes a resend harmless, and an unsent row is never deleted.
pub async fn prune_sent(db: &Db, before: i64, limit: u32) -> Result<u64, sqlx::Error> {
    // A subquery, not `DELETE … LIMIT`: PostgreSQL has no LIMIT on DELETE.
    let sql = "DELETE FROM outbox WHERE id IN (SELECT id FROM outbox \
               WHERE sent_at IS NOT NULL AND sent_at < $1 ORDER BY sent_at LIMIT $2)";
    Ok(with_pool!(db, |pool| {
        sqlx::query(sql)
            .bind(before)
            .bind(i64::from(limit))
            .execute(pool)
            .await?
            .rows_affected()
    }))
}

/// How many messages are not acknowledged yet (for tests and operators).
pub async fn count_unsent(db: &Db) -> Result<i64, sqlx::Error> {
    count(db, "SELECT COUNT(*) FROM outbox WHERE sent_at IS NULL").await
}

/// How many rows the outbox holds, sent or not (for tests and operators).
pub async fn count_all(db: &Db) -> Result<i64, sqlx::Error> {
    count(db, "SELECT COUNT(*) FROM outbox").await
}

async fn count(db: &Db, sql: &'static str) -> Result<i64, sqlx::Error> {
    Ok(with_pool!(db, |pool| {
        sqlx::query_scalar::<_, i64>(sql).fetch_one(pool).await?
    }))
}
