//! Transactions handed to a route's handler, on either backend.

use std::ops::{Deref, DerefMut};

use sqlx::{pool::PoolConnection, Executor, PgConnection, Postgres};

/// An open transaction on the claim table's database. A route's own writes go into it and
/// commit (or roll back) with the claim or the saved response; write them once, for both
/// backends, with [`with_tx!`](crate::with_tx) (both read `$1`-style parameters).
#[derive(Debug)]
pub enum Tx {
    /// SQLite (`BEGIN IMMEDIATE`: the write lock is taken at the start, so the
    /// transaction never fails half-way for want of it).
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
    /// PostgreSQL (`READ COMMITTED`; fenced writes re-check the token on the row they lock).
    Postgres(PgTx),
}

/// A PostgreSQL transaction on a pooled connection the caller already holds.
///
/// sqlx opens a transaction that owns its connection only on a connection it acquires
/// itself (`Pool::begin`); its public API has none for a connection already in hand. A
/// request reads its row first and then claims in a transaction: on a second connection that
/// is one more acquisition and one more round trip (sqlx pings each connection as it goes
/// back to the pool). So this sends `BEGIN`, `COMMIT` and `ROLLBACK` itself on the
/// connection it owns, and rolls back a transaction dropped while open before its connection
/// is used again.
///
/// The rollback is armed *before* the first await: a handler's future is dropped wherever
/// it stands when its client goes away, `BEGIN`'s own await included, and a connection that
/// went back to the pool with its `BEGIN` sent and no `ROLLBACK` after it would run every
/// later statement of other requests inside that invisible transaction. (sqlx 0.9.0's own
/// `begin` raises its transaction depth only after that await, so its guard has the same
/// hole.) The pool cleans any connection that still comes back inside a transaction
/// (`pool::clean_on_release`), so one missed guard cannot poison
/// other requests; this guard makes that net the exception, counted and logged.
#[derive(Debug)]
pub struct PgTx {
    /// `Some` from before `BEGIN` is sent until the transaction ends
    /// ([`commit`](Tx::commit), [`rollback`](Tx::rollback) or drop).
    conn: Option<PoolConnection<Postgres>>,
}

impl PgTx {
    /// `BEGIN` on `conn`.
    pub async fn begin(conn: PoolConnection<Postgres>) -> Result<Self, sqlx::Error> {
        // Armed first: dropped during the await below, or failing, `Drop` rolls back.
        let mut tx = Self { conn: Some(conn) };
        let conn: &mut PgConnection = &mut tx;
        conn.execute("BEGIN").await?;
        Ok(tx)
    }

    /// `COMMIT`, or `ROLLBACK`; the connection goes back to the pool. Should the statement
    /// fail, or the future be dropped before it ends, the transaction is dropped open and
    /// rolled back ([`Drop`]).
    async fn end(mut self, statement: &'static str) -> Result<(), sqlx::Error> {
        if let Some(conn) = self.conn.as_mut() {
            conn.execute(statement).await?;
        }
        // Ended: the connection goes back to the pool as it is.
        drop(self.conn.take());
        Ok(())
    }
}

impl Deref for PgTx {
    type Target = PgConnection;

    fn deref(&self) -> &PgConnection {
        // `conn` is taken only by `end` and `drop`, which consume the transaction: no
        // borrow of an ended one exists.
        self.conn
            .as_ref()
            .expect("an open transaction holds its connection")
    }
}

impl DerefMut for PgTx {
    fn deref_mut(&mut self) -> &mut PgConnection {
        // As in `deref`.
        self.conn
            .as_mut()
            .expect("an open transaction holds its connection")
    }
}

impl Drop for PgTx {
    fn drop(&mut self) {
        let Some(mut conn) = self.conn.take() else {
            return;
        };
        // Dropped open (an error, a panic, a request whose client went away): roll back
        // before the connection serves anyone else. A connection that cannot is closed
        // (the server then rolls back itself), and so is one dropped outside a runtime.
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    if conn.execute("ROLLBACK").await.is_err() {
                        conn.close_on_drop();
                    }
                });
            }
            Err(_) => drop(conn.detach()),
        }
    }
}

/// Run the same code over the connection of a [`Tx`], whichever backend it is on. The
/// body sees `$conn` as `&mut SqliteConnection` or `&mut PgConnection`, both sqlx
/// executors:
///
/// ```no_run
/// # async fn demo(tx: &mut idem_axum::db::Tx) -> Result<(), sqlx::Error> {
/// let order_id: i64 = idem_axum::with_tx!(tx, |conn| {
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
    /// A write transaction on `pool` (a connection of its own).
    pub async fn begin_postgres(pool: &sqlx::PgPool) -> Result<Self, sqlx::Error> {
        Ok(Self::Postgres(PgTx::begin(pool.acquire().await?).await?))
    }

    /// A write transaction on `pool`, `BEGIN IMMEDIATE` (the write lock from the start).
    pub async fn begin_sqlite(pool: &sqlx::SqlitePool) -> Result<Self, sqlx::Error> {
        Ok(Self::Sqlite(pool.begin_with("BEGIN IMMEDIATE").await?))
    }

    /// The SQLite connection of this transaction (`None` on PostgreSQL): for an application
    /// that runs on SQLite only, a real sqlx connection without [`with_tx!`](crate::with_tx).
    pub fn sqlite(&mut self) -> Option<&mut sqlx::SqliteConnection> {
        match self {
            Self::Sqlite(tx) => Some(&mut **tx),
            Self::Postgres(_) => None,
        }
    }

    /// The PostgreSQL connection of this transaction (`None` on SQLite), as
    /// [`sqlite`](Self::sqlite).
    pub fn postgres(&mut self) -> Option<&mut PgConnection> {
        match self {
            Self::Postgres(tx) => Some(&mut **tx),
            Self::Sqlite(_) => None,
        }
    }

    /// Commit.
    pub async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Self::Sqlite(tx) => tx.commit().await,
            Self::Postgres(tx) => tx.end("COMMIT").await,
        }
    }

    /// Roll back (dropping a transaction rolls it back too; this waits for it).
    pub async fn rollback(self) -> Result<(), sqlx::Error> {
        match self {
            Self::Sqlite(tx) => tx.rollback().await,
            Self::Postgres(tx) => tx.end("ROLLBACK").await,
        }
    }
}
