//! PayCo's `ledger` table.

use crate::{
    db::{Db, Tx},
    sql::now_ms,
    with_pool, with_tx,
};

use super::wire::{ChargeRequest, LedgerEntry};

/// The ledger row of a decided charge; run in the fenced transaction that saves the key's
/// answer, so the row and the answer commit together. Returns the row id.
pub async fn record(
    tx: &mut Tx,
    merchant: &str,
    key: &str,
    charge: &ChargeRequest,
    outcome: &str,
) -> Result<i64, sqlx::Error> {
    let sql =
        "INSERT INTO ledger (merchant, idem_key, order_id, amount, card, outcome, created_at) \
               VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id";
    let created_at = i64::try_from(now_ms()).unwrap_or(i64::MAX);
    let id = with_tx!(tx, |conn| {
        let row = sqlx::query(sql)
            .bind(merchant)
            .bind(key)
            .bind(charge.order)
            .bind(charge.amount)
            .bind(&charge.card)
            .bind(outcome)
            .bind(created_at)
            .fetch_one(conn)
            .await?;
        sqlx::Row::try_get::<i64, _>(&row, "id")?
    });
    Ok(id)
}

/// The merchant's ledger rows of orders `from_order` and later, oldest first (the first 10,000).
pub async fn list(
    db: &Db,
    merchant: &str,
    from_order: i64,
) -> Result<Vec<LedgerEntry>, sqlx::Error> {
    let sql = "SELECT id, merchant, idem_key, order_id, amount, outcome FROM ledger \
               WHERE merchant = $1 AND order_id >= $2 ORDER BY id LIMIT 10000";
    let rows = with_pool!(db, |pool| {
        use sqlx::Row;
        let rows = sqlx::query(sql)
            .bind(merchant)
            .bind(from_order)
            .fetch_all(pool)
            .await?;
        let mut entries = Vec::with_capacity(rows.len());
        for row in &rows {
            entries.push(LedgerEntry {
                id: row.try_get("id")?,
                merchant: row.try_get("merchant")?,
                key: row.try_get("idem_key")?,
                order: row.try_get("order_id")?,
                amount: row.try_get("amount")?,
                outcome: row.try_get("outcome")?,
            });
        }
        entries
    });
    Ok(rows)
}
