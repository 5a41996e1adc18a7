//! The PostgreSQL pool's net under every transaction guard: a connection that comes back to
//! the pool inside a transaction is rolled back (or closed) before anyone else gets it.
//!
//! A handler's future can be dropped at any await (its client went away), and a pooled
//! connection dropped with a `BEGIN` sent and no `ROLLBACK` after it would go back to the
//! pool still inside that transaction: every later statement of other requests on it
//! (claims, orders, fenced commits) would run inside it, invisible to everyone else, and be
//! lost at its next `ROLLBACK` or crash. [`PgTx`](super::PgTx) rolls back whatever stops it;
//! this is the second line, so one missed guard cannot poison other requests.
//!
//! sqlx 0.9 cannot tell: its `is_in_transaction` counts only the transactions sqlx opened
//! itself, and the session's status (PostgreSQL's `ReadyForQuery`) is private to the driver.
//! So the pool asks the session, one round trip on every release, off the request's path
//! (sqlx's own ping on release is another): `transaction_timestamp()` is the start of the
//! transaction, `statement_timestamp()` the receipt of this statement's message. Outside a
//! transaction block the probe is a transaction of its own and the two are equal; inside one
//! opened by an earlier message, the transaction is older than the probe (by at least a
//! round trip: the driver reads every reply still pending before it sends the probe). Only a
//! connection found inside a transaction pays a second round trip, the `ROLLBACK`; no
//! statement is sent that would write a warning into PostgreSQL's log on a clean one (an
//! unconditional `ROLLBACK` would, on every release).

use futures_util::FutureExt;
use prometheus_client::metrics::counter::Counter;
use sqlx::{postgres::PgPoolOptions, Executor, PgConnection, Row};

/// The probe: whether the session is inside a transaction block an earlier message opened.
/// Sent as a simple query (one message), so outside a transaction both clocks read the same
/// instant.
const IN_TRANSACTION: &str = "SELECT transaction_timestamp() < statement_timestamp()";

/// SQLSTATE 25P02: a failed transaction refuses every statement until it ends.
const IN_FAILED_TRANSACTION: &str = "25P02";

/// `options` with the release net: every connection coming back is probed and, if it is
/// inside a transaction, rolled back and counted in `cleaned` (and logged); one whose
/// session cannot be probed or rolled back is closed instead of going back to the pool.
pub(crate) fn clean_on_release(options: PgPoolOptions, cleaned: Counter) -> PgPoolOptions {
    options.after_release(move |conn, _| {
        let cleaned = cleaned.clone();
        async move { Ok(release(conn, &cleaned).await == Verdict::Keep) }.boxed()
    })
}

/// What becomes of a returned connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Clean (or cleaned): back to the pool.
    Keep,
    /// Close it; the server rolls back whatever it had open.
    Close,
}

async fn release(conn: &mut PgConnection, cleaned: &Counter) -> Verdict {
    let state = match sqlx::raw_sql(IN_TRANSACTION).fetch_one(&mut *conn).await {
        Ok(row) => match row.try_get::<bool, _>(0) {
            Ok(false) => return Verdict::Keep,
            Ok(true) => "inside a transaction",
            Err(error) => {
                tracing::warn!(%error, "unreadable answer to the release probe; closing the connection");
                return Verdict::Close;
            }
        },
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some(IN_FAILED_TRANSACTION) => {
            "inside a failed transaction"
        }
        Err(error) => {
            tracing::warn!(%error, "a returned connection could not be probed; closing it");
            return Verdict::Close;
        }
    };
    cleaned.inc();
    tracing::warn!(
        state,
        "a connection came back to the pool {state} (a cancelled request whose guard did not \
         roll back); rolling it back"
    );
    match conn.execute("ROLLBACK").await {
        Ok(_) => Verdict::Keep,
        Err(error) => {
            tracing::warn!(%error, "the rollback on release failed; closing the connection");
            Verdict::Close
        }
    }
}
