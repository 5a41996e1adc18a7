//! The `receipts` table: the effect of an `order.paid` message ([`insert`], inside
//! `process_once`'s transaction) and the tenant's view of it ([`list`]).

use serde::{Deserialize, Serialize};

use crate::{
    checkout::outbox::wire::OrderPaid,
    db::{Db, Tx},
    with_pool, with_tx,
};

/// One receipt, as `GET /api/receipts` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Receipt {
    /// The receipt's id.
    pub id: i64,
    /// The message that caused it.
    pub message: String,
    /// The order paid.
    pub order: i64,
    /// Amount, in cents.
    pub amount: i64,
    /// PayCo's charge id.
    pub charge: String,
    /// When it was sent, ms since the epoch.
    pub created_at: i64,
}

/// Send the receipt for `paid` (record it) in `tx`, the transaction that records
/// `message_id` as processed.
pub async fn insert(
    tx: &mut Tx,
    scope: &str,
    message_id: &str,
    paid: &OrderPaid,
    now: i64,
) -> Result<(), sqlx::Error> {
    let sql = "INSERT INTO receipts (scope, message_id, order_id, amount, charge_id, created_at) \
               VALUES ($1, $2, $3, $4, $5, $6)";
    with_tx!(tx, |conn| {
        sqlx::query(sql)
            .bind(scope)
            .bind(message_id)
            .bind(paid.order)
            .bind(paid.amount)
            .bind(&paid.charge)
            .bind(now)
            .execute(conn)
            .await
            .map(|_| ())
    })
}

/// The scope's receipts, oldest first (at most `limit`).
pub async fn list(db: &Db, scope: &str, limit: i64) -> Result<Vec<Receipt>, sqlx::Error> {
    let sql = "SELECT id, message_id, order_id, amount, charge_id, created_at FROM receipts \
               WHERE scope = $1 ORDER BY id LIMIT $2";
    Ok(with_pool!(db, |pool| {
        use sqlx::Row;
        let rows = sqlx::query(sql)
            .bind(scope)
            .bind(limit)
            .fetch_all(pool)
            .await?;
        let mut receipts = Vec::with_capacity(rows.len());
        for row in &rows {
            receipts.push(Receipt {
                id: row.try_get("id")?,
                message: row.try_get("message_id")?,
                order: row.try_get("order_id")?,
                amount: row.try_get("amount")?,
                charge: row.try_get("charge_id")?,
                created_at: row.try_get("created_at")?,
            });
        }
        receipts
    }))
}
