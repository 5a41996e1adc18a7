//! The `orders` table: the checkout's recovery point and its business record.

use serde::Serialize;

use crate::{
    db::{Db, RouteInsert, RouteUpdate, Tx},
    sql::now_ms,
    with_pool, with_tx,
};

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

impl Order {
    /// The order [`insert`] created, as it stands: `pending`, no charge yet.
    pub fn pending(id: i64, key: &str, request: &CheckoutRequest, created_at: i64) -> Order {
        Order {
            id,
            key: key.to_owned(),
            cart: request.cart.clone(),
            amount: request.amount,
            status: "pending".to_owned(),
            charge: None,
            created_at,
        }
    }
}

/// The order `pending`, as the checkout's first row: created with the claim
/// ([`Db::begin_with`]), its id the claim's recovery point.
pub fn insert<'a>(
    scope: &'a str,
    key: &'a str,
    request: &'a CheckoutRequest,
    created_at: i64,
) -> RouteInsert<'a> {
    RouteInsert::new("orders")
        .value("scope", scope)
        .value("idem_key", key)
        .value("cart", &request.cart)
        .value("amount", request.amount)
        .value("card", &request.card)
        .value("status", "pending")
        .value("created_at", created_at)
}

/// Create the order `pending` inside an open transaction, returning the whole row (a route
/// without idem: the benchmark's unkeyed comparison; the checkout uses [`insert`]).
pub async fn create(
    tx: &mut Tx,
    scope: &str,
    key: &str,
    request: &CheckoutRequest,
) -> Result<Order, sqlx::Error> {
    let insert = concat!(
        "INSERT INTO orders (scope, idem_key, cart, amount, card, status, created_at) ",
        "VALUES ($1, $2, $3, $4, $5, 'pending', $6) RETURNING ",
        columns!()
    );
    let created_at = i64::try_from(now_ms()).unwrap_or(i64::MAX);
    Ok(with_tx!(tx, |conn| {
        let row = sqlx::query(insert)
            .bind(scope)
            .bind(key)
            .bind(&request.cart)
            .bind(request.amount)
            .bind(&request.card)
            .bind(created_at)
            .fetch_one(conn)
            .await?;
        order_from_row!(row)
    }))
}

/// The request that created order `id` of `scope` (its cart, amount and card), read in a
/// claim's transaction: the order a recovery point names, resumed by a retry (which checks it
/// is there) or by the completer (which charges PayCo for it when no client is there to send
/// it again). `None` when there is no such order.
pub async fn request_of(
    tx: &mut Tx,
    scope: &str,
    id: i64,
) -> Result<Option<CheckoutRequest>, sqlx::Error> {
    let sql = "SELECT cart, amount, card FROM orders WHERE scope = $1 AND id = $2";
    Ok(with_tx!(tx, |conn| {
        match sqlx::query(sql)
            .bind(scope)
            .bind(id)
            .fetch_optional(conn)
            .await?
        {
            Some(row) => {
                use sqlx::Row;
                Some(CheckoutRequest {
                    cart: row.try_get("cart")?,
                    amount: row.try_get("amount")?,
                    card: row.try_get("card")?,
                })
            }
            None => None,
        }
    }))
}

/// PayCo's answer on the order, as the business update the fenced commit carries
/// ([`Db::finish_with`]: one statement with it on PostgreSQL).
pub fn settlement<'a>(id: i64, status: &'a str, charge: Option<&'a str>) -> RouteUpdate<'a> {
    RouteUpdate::new("orders")
        .set("status", status)
        .set("charge_id", charge)
        .filter("id", id)
}

/// Record PayCo's answer on the order inside an open transaction (a route that has more
/// writes to make in it; the checkout uses [`settlement`]).
pub async fn settle(
    tx: &mut Tx,
    id: i64,
    status: &str,
    charge: Option<&str>,
) -> Result<(), sqlx::Error> {
    let sql = "UPDATE orders SET status = $1, charge_id = $2 WHERE id = $3";
    with_tx!(tx, |conn| {
        sqlx::query(sql)
            .bind(status)
            .bind(charge)
            .bind(id)
            .execute(conn)
            .await
            .map(|_| ())
    })
}

/// The scope's orders, newest first (at most `limit`).
pub async fn list(db: &Db, scope: &str, limit: i64) -> Result<Vec<Order>, sqlx::Error> {
    let sql = concat!(
        "SELECT ",
        columns!(),
        " FROM orders WHERE scope = $1 ORDER BY id DESC LIMIT $2"
    );
    Ok(with_pool!(db, |pool| {
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
    }))
}

/// One order of the scope.
pub async fn get(db: &Db, scope: &str, id: i64) -> Result<Option<Order>, sqlx::Error> {
    let sql = concat!(
        "SELECT ",
        columns!(),
        " FROM orders WHERE scope = $1 AND id = $2"
    );
    Ok(with_pool!(db, |pool| {
        match sqlx::query(sql)
            .bind(scope)
            .bind(id)
            .fetch_optional(pool)
            .await?
        {
            Some(row) => Some(order_from_row!(row)),
            None => None,
        }
    }))
}
