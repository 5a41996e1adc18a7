//! Deleting one tenant's rows: every claim (in flight or done, with its saved response),
//! every recovery point and every processed message id of one scope, in batches.
//!
//! A claim in flight is deleted too: its worker's fenced commit then finds the lease gone,
//! rolls its writes back and answers 409; the tenant is being removed, so nothing of it is
//! kept. Business tables (the example checkout's `orders`) belong to the application and
//! are not touched here.

use crate::{db::Db, db::DbError, with_pool};

/// How many rows of each table went.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct TenantDeleted {
    /// Claims and saved responses.
    pub claims: u64,
    /// Recovery points.
    pub recovery_points: u64,
    /// Processed message ids (0 when the consumer table does not exist).
    pub message_ids: u64,
}

/// (table, key columns) of every table keyed by scope.
const TABLES: [(&str, &str); 3] = [
    ("idem_claims", "scope, key"),
    ("idem_recovery", "scope, key, fingerprint"),
    ("idem_messages", "scope, message_id"),
];

/// Delete every row of `scope`, at most `batch` per statement. The consumer's table is
/// created if missing (an empty table deletes nothing), so the command works on any
/// database idem opened.
pub async fn delete_tenant(db: &Db, scope: &str, batch: u32) -> Result<TenantDeleted, DbError> {
    db.migrate(&crate::consumer::MIGRATIONS).await?;
    let batch = i64::from(batch.max(1));
    let mut counts = [0u64; 3];
    for ((table, columns), count) in TABLES.iter().zip(counts.iter_mut()) {
        let statement = format!(
            "DELETE FROM {table} WHERE ({columns}) IN \
             (SELECT {columns} FROM {table} WHERE scope = $1 LIMIT $2)"
        );
        loop {
            let gone = with_pool!(db, |pool| {
                sqlx::query(sqlx::AssertSqlSafe(statement.as_str()))
                    .bind(scope)
                    .bind(batch)
                    .execute(pool)
                    .await?
                    .rows_affected()
            });
            *count += gone;
            if gone < batch as u64 {
                break;
            }
        }
    }
    let [claims, recovery_points, message_ids] = counts;
    tracing::info!(
        scope,
        claims,
        recovery_points,
        message_ids,
        "tenant deleted"
    );
    Ok(TenantDeleted {
        claims,
        recovery_points,
        message_ids,
    })
}
