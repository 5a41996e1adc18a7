//! Running one query text on either backend: the example's business tables (orders, PayCo's
//! ledger) are written inside the transactions `db` hands out, which are SQLite or PostgreSQL.
//! The query texts use `$1, $2, …` placeholders, which both accept.

/// Evaluate `$body` with `$conn` bound to the connection inside the transaction `$tx`
/// (`&mut db::Tx`), whichever backend it is. `$body` is type-checked once per backend and must
/// have the same type in both.
#[macro_export]
#[doc(hidden)]
macro_rules! on_tx {
    ($tx:expr, |$conn:ident| $body:expr) => {
        match $tx {
            $crate::db::Tx::Sqlite(t) => {
                let $conn = &mut **t;
                $body
            }
            $crate::db::Tx::Postgres(t) => {
                let $conn = &mut **t;
                $body
            }
        }
    };
}

/// Like [`on_tx!`] for a pool (`&db::Pool`), for read-only queries outside any transaction.
#[macro_export]
#[doc(hidden)]
macro_rules! on_pool {
    ($pool:expr, |$conn:ident| $body:expr) => {
        match $pool {
            $crate::db::Pool::Sqlite(p) => {
                let $conn = p;
                $body
            }
            $crate::db::Pool::Postgres(p) => {
                let $conn = p;
                $body
            }
        }
    };
}

/// Milliseconds since the Unix epoch, for `created_at` columns (display only: no rule
/// depends on them).
pub fn unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}
