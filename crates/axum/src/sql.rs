//! Read-only queries of the example's business tables on either backend (writes go through
//! `db`'s transactions and [`with_tx!`](crate::with_tx)), and the caller's clock.

/// Evaluate `$body` with `$pool` bound to the [`Db`](crate::db::Db)'s pool, whichever backend
/// it is (`&SqlitePool` or `&PgPool`); `$body` must have the same type for both. The query
/// texts use `$1, $2, …` placeholders, which both accept.
#[macro_export]
#[doc(hidden)]
macro_rules! with_pool {
    ($db:expr, |$pool:ident| $body:expr) => {
        match ($db.sqlite_pool(), $db.postgres_pool()) {
            (Some($pool), _) => $body,
            (None, Some($pool)) => $body,
            (None, None) => unreachable!("a Db has exactly one pool"),
        }
    };
}

/// Milliseconds since the Unix epoch: the `now` handed to `db` (which ignores it when it
/// measures leases on the database's clock), and `created_at` columns.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}
