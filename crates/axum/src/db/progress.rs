//! [`Db::save_recovery`]: a worker records how far it got, fenced, without ending its claim.

use idem_store::{rules, EventKind};

use crate::with_tx;

use super::{error::to_i64, sql, Claim, Db, DbError, Tx};

impl Db {
    /// Write (or replace) `claim`'s recovery point, in a transaction of its own, while the
    /// claim is still this worker's: the row is held (`sql::HOLD`) and the point written in
    /// the same transaction, or, the lease lost (taken over, released), nothing is written and
    /// the answer is [`DbError::Fenced`]. The point is bound to the claim's request (scope,
    /// key, fingerprint): the next worker of that same request, after a takeover or a release,
    /// reads it in [`ClaimTx::recovery`](super::ClaimTx::recovery); it outlives a release and
    /// is pruned with retention. For a route whose work calls another system between two
    /// transactions: save the point (say, the downstream key) before the call.
    pub async fn save_recovery(
        &self,
        now: u64,
        claim: &Claim,
        point: &[u8],
    ) -> Result<(), DbError> {
        let now = claim.table_now(self.inner.options.clock, now);
        let expires_at = to_i64("expires_at", rules::expires_at(now, claim.retention_ms))?;
        let (scope, key) = (claim.id.scope(), claim.id.key().as_str());
        let token = to_i64("token", claim.lease.token)?;
        let (mut tx, _turn) = self.write_tx().await?;
        let held = with_tx!(&mut tx, |conn| {
            sqlx::query(sql::HOLD)
                .bind(scope)
                .bind(key)
                .bind(token)
                .execute(conn)
                .await
                .map(|done| done.rows_affected())
        })?;
        if held == 0 {
            tx.rollback().await?;
            self.log_id(
                now,
                &claim.id,
                EventKind::Fenced {
                    token: claim.lease.token,
                },
            );
            return Err(DbError::Fenced);
        }
        write_recovery(&mut tx, claim, point, expires_at).await?;
        tx.commit().await?;
        Ok(())
    }
}

/// Write (or replace) `claim`'s recovery point in `tx` (`sql::RECOVERY_WRITE`): the one place
/// it is written, by [`Db::save_recovery`] and [`ClaimTx::set_recovery`](super::ClaimTx).
pub(super) async fn write_recovery(
    tx: &mut Tx,
    claim: &Claim,
    point: &[u8],
    expires_at: i64,
) -> Result<(), DbError> {
    let (scope, key) = (claim.id.scope(), claim.id.key().as_str());
    let fingerprint = claim.fingerprint.0.to_vec();
    with_tx!(tx, |conn| {
        sqlx::query(sql::RECOVERY_WRITE)
            .bind(scope)
            .bind(key)
            .bind(&fingerprint)
            .bind(point)
            .bind(expires_at)
            .execute(conn)
            .await
            .map(|_| ())
    })?;
    Ok(())
}
