//! A route's one business update, handed to [`Db::commit_with`](super::Db::commit_with) so
//! the fenced commit and the update go to the database together: on PostgreSQL in one
//! statement, gated on the fence (`… AND EXISTS (SELECT 1 FROM idem)`), which this type adds
//! itself so a route cannot forget it.

/// A value bound to a `$n` of a [`RouteUpdate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param<'a> {
    /// A `BIGINT` / `INTEGER`.
    Int(i64),
    /// A `TEXT`.
    Text(&'a str),
    /// A `TEXT` that may be `NULL`.
    OptionalText(Option<&'a str>),
    /// A `BYTEA` / `BLOB`.
    Bytes(&'a [u8]),
}

/// `UPDATE <table> SET <set> WHERE <filter>`, with `$1`, `$2`, … in `set` and `filter`
/// bound to `params` in order. The parts are `'static` text (sqlx's guard against
/// injection: values only ever travel as parameters).
///
/// ```
/// use idem_axum::db::{Param, RouteUpdate};
///
/// let paid = RouteUpdate {
///     table: "orders",
///     set: "status = $1, charge_id = $2",
///     filter: "id = $3",
///     params: vec![Param::Text("paid"), Param::OptionalText(Some("ch_1")), Param::Int(7)],
/// };
/// # let _ = paid;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteUpdate<'a> {
    /// The table.
    pub table: &'static str,
    /// The `SET` list.
    pub set: &'static str,
    /// The `WHERE` condition.
    pub filter: &'static str,
    /// `$1`, `$2`, … in order.
    pub params: Vec<Param<'a>>,
}

impl RouteUpdate<'_> {
    /// The update as is (SQLite, inside the fenced transaction).
    pub(crate) fn plain_sql(&self) -> String {
        format!(
            "UPDATE {} SET {} WHERE {}",
            self.table, self.set, self.filter
        )
    }

    /// The update with its `WHERE` in parentheses, ready for `AND <fence>` (PostgreSQL).
    pub(crate) fn gated_sql(&self) -> String {
        format!(
            "UPDATE {} SET {} WHERE ({})",
            self.table, self.set, self.filter
        )
    }
}

/// A route's first row, created with its claim by [`Db::begin_with`](super::Db::begin_with)
/// (or in an open claim's transaction by [`ClaimTx::create`](super::ClaimTx::create)):
/// `INSERT INTO <table> (<columns>) VALUES (<values>) RETURNING <id>`, with `$1`, `$2`, … in
/// `values` bound to `params` in order. `id` names an integer column (a `BIGSERIAL`, an
/// `INTEGER PRIMARY KEY`): the value it returns is the claim's recovery point, so every later
/// worker of the same request resumes this row.
///
/// ```
/// use idem_axum::db::{Param, RouteInsert};
///
/// let order = RouteInsert {
///     table: "orders",
///     columns: "scope, cart, amount, status",
///     values: "$1, $2, $3, 'pending'",
///     id: "id",
///     params: vec![Param::Text("tenant-a"), Param::Text("cart-1"), Param::Int(4200)],
/// };
/// # let _ = order;
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteInsert<'a> {
    /// The table.
    pub table: &'static str,
    /// The column list.
    pub columns: &'static str,
    /// The values, one per column.
    pub values: &'static str,
    /// The integer column returned as the recovery point.
    pub id: &'static str,
    /// `$1`, `$2`, … in order.
    pub params: Vec<Param<'a>>,
}

impl RouteInsert<'_> {
    /// The recovery point of the row `id`: its decimal digits. The one-statement claim on
    /// PostgreSQL writes the same bytes in SQL, `convert_to(CAST(id AS TEXT), 'UTF8')`
    /// ([`super::sql::claim_creating`]).
    pub fn point(id: i64) -> Vec<u8> {
        id.to_string().into_bytes()
    }

    /// The row a recovery point names, if it is one [`point`](Self::point) wrote.
    pub fn id_of(point: &[u8]) -> Option<i64> {
        std::str::from_utf8(point).ok()?.parse().ok()
    }

    /// The insert as is, returning the id.
    pub(crate) fn plain_sql(&self) -> String {
        format!(
            "INSERT INTO {} ({}) VALUES ({}) RETURNING {}",
            self.table, self.columns, self.values, self.id
        )
    }
}

/// Bind every [`Param`] of `$params`, in order, onto `$query` (either backend's).
macro_rules! bind_params {
    ($query:expr, $params:expr) => {{
        let mut query = $query;
        for param in $params {
            query = match *param {
                $crate::db::Param::Int(v) => query.bind(v),
                $crate::db::Param::Text(v) => query.bind(v),
                $crate::db::Param::OptionalText(v) => query.bind(v),
                $crate::db::Param::Bytes(v) => query.bind(v),
            };
        }
        query
    }};
}

pub(crate) use bind_params;
