//! The `orders` table: the checkout's recovery point and its business record.

use serde::Serialize;

use crate::{db::Tx, on_pool, on_tx, sql::unix_ms};

use super::params::CheckoutRequest;

/// One order, as `GET /api/orders` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Order {
    /// Order id; PayCo's key for it is `charge:<id>`.
    pub id: i64,
    /// The idempotency key of the checkout that created it.
    pub key: String,
    /// The cart.
    pub cart: String,
    /// Amount in cents.
    pub amount: i64,
    /// `pending` (PayCo not answered yet), `paid` or `declined`.
    pub status: String,
    /// PayCo's charge id, once paid.
    pub charge: Option<String>,
    /// When it was created, ms since the epoch.
    pub created_at: i64,
}

/// The columns [`order_from_row!`] reads, as a literal for `concat!` (sqlx takes only
/// literal SQL, as a guard against injection).
macro_rules! columns {
    () => {
        "id, idem_key, cart, amount, status, charge_id, created_at"
    };
}

macro_rules! order_from_row {
    ($row:expr) => {{
        use sqlx::Row;
        let row = $row;
        Order {
            id: row.try_get("id")?,
            key: row.try_get("idem_key")?,
            cart: row.try_get("cart")?,
            amount: row.try_get("amount")?,
            status: row.try_get("status")?,
            charge: row.try_get("charge_id")?,
            created_at: row.try_get("created_at")?,
        }
    }};
}

/// The order of this checkout, (scope, key, fingerprint), creating it `pending` if this is
/// the first claim. Run in the claim's transaction, so the claim and the order commit
/// together; found again after a takeover or a released claim of the same request, never
/// for another payload under the same key (another fingerprint).
pub async fn find_or_create(
    tx: &mut Tx,
    scope: &str,
    key: &str,
    fingerprint: &str,
    request: &CheckoutRequest,
) -> Result<Order, sqlx::Error> {
    let find = concat!(
        "SELECT ",
        columns!(),
        " FROM orders WHERE scope = $1 AND idem_key = $2 AND fingerprint = $3"
    );
    let found = on_tx!(tx, |conn| {
        match sqlx::query(find)
            .bind(scope)
            .bind(key)
            .bind(fingerprint)
            .fetch_optional(conn)
            .await?
        {
            Some(row) => Some(order_from_row!(row)),
            None => None,
        }
    });
    if let Some(order) = found {
        return Ok(order);
    }
    let insert = concat!(
        "INSERT INTO orders (scope, idem_key, fingerprint, cart, amount, card, status, created_at) ",
        "VALUES ($1, $2, $3, $4, $5, $6, 'pending', $7) RETURNING ",
        columns!()
    );
    let order = on_tx!(tx, |conn| {
        let row = sqlx::query(insert)
            .bind(scope)
            .bind(key)
            .bind(fingerprint)
            .bind(&request.cart)
            .bind(request.amount)
            .bind(&request.card)
            .bind(unix_ms())
            .fetch_one(conn)
            .await?;
        order_from_row!(row)
    });
    Ok(order)
}

/// Record PayCo's answer on the order, in the fenced transaction that saves the response.
pub async fn settle(
    tx: &mut Tx,
    id: i64,
    status: &str,
    charge: Option<&str>,
) -> Result<(), sqlx::Error> {
    let sql = "UPDATE orders SET status = $1, charge_id = $2 WHERE id = $3";
    on_tx!(tx, |conn| {
        sqlx::query(sql)
            .bind(status)
            .bind(charge)
            .bind(id)
            .execute(conn)
            .await?;
    });
    Ok(())
}

/// The scope's orders, newest first (at most `limit`).
pub async fn list(db: &crate::db::Db, scope: &str, limit: i64) -> Result<Vec<Order>, sqlx::Error> {
    let sql = concat!(
        "SELECT ",
        columns!(),
        " FROM orders WHERE scope = $1 ORDER BY id DESC LIMIT $2"
    );
    let orders = on_pool!(db.pool(), |pool| {
        let rows = sqlx::query(sql)
            .bind(scope)
            .bind(limit)
            .fetch_all(pool)
            .await?;
        let mut orders = Vec::with_capacity(rows.len());
        for row in &rows {
            orders.push(order_from_row!(row));
        }
        orders
    });
    Ok(orders)
}

/// One order of the scope.
pub async fn get(db: &crate::db::Db, scope: &str, id: i64) -> Result<Option<Order>, sqlx::Error> {
    let sql = concat!(
        "SELECT ",
        columns!(),
        " FROM orders WHERE scope = $1 AND id = $2"
    );
    let order = on_pool!(db.pool(), |pool| {
        match sqlx::query(sql)
            .bind(scope)
            .bind(id)
            .fetch_optional(pool)
            .await?
        {
            Some(row) => Some(order_from_row!(row)),
            None => None,
        }
    });
    Ok(order)
}
