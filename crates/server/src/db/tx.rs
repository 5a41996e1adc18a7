//! Transactions handed to a route's handler, on either backend.

/// An open transaction on the claim table's database. A route's own writes go into it and
/// commit (or roll back) with the claim or the saved response; write them once, for both
/// backends, with [`with_tx!`](crate::with_tx) (both read `$1`-style parameters).
#[derive(Debug)]
pub enum Tx {
    /// SQLite (`BEGIN IMMEDIATE`: the write lock is taken at the start, so the
    /// transaction never fails half-way for want of it).
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
    /// PostgreSQL (`READ COMMITTED`; fenced writes re-check the token on the row they lock).
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>),
}

/// Run the same code over the connection of a [`Tx`], whichever backend it is on. The
/// body sees `$conn` as `&mut SqliteConnection` or `&mut PgConnection`, both sqlx
/// executors:
///
/// ```no_run
/// # async fn demo(tx: &mut idem_server::db::Tx) -> Result<(), sqlx::Error> {
/// let order_id: i64 = idem_server::with_tx!(tx, |conn| {
///     sqlx::query_scalar("INSERT INTO orders (cart, amount) VALUES ($1, $2) RETURNING id")
///         .bind("c-1")
///         .bind(4200_i64)
///         .fetch_one(conn)
///         .await
/// })?;
/// # let _ = order_id;
/// # Ok(()) }
/// ```
#[macro_export]
macro_rules! with_tx {
    ($tx:expr, |$conn:ident| $body:expr) => {
        match $tx {
            $crate::db::Tx::Sqlite(tx) => {
                let $conn: &mut ::sqlx::SqliteConnection = &mut **tx;
                $body
            }
            $crate::db::Tx::Postgres(tx) => {
                let $conn: &mut ::sqlx::PgConnection = &mut **tx;
                $body
            }
        }
    };
}

impl Tx {
    /// Commit.
    pub(crate) async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Self::Sqlite(tx) => tx.commit().await,
            Self::Postgres(tx) => tx.commit().await,
        }
    }

    /// Roll back (dropping a transaction rolls it back too; this waits for it).
    pub(crate) async fn rollback(self) -> Result<(), sqlx::Error> {
        match self {
            Self::Sqlite(tx) => tx.rollback().await,
            Self::Postgres(tx) => tx.rollback().await,
        }
    }
}
