//! Lease renewal: the fenced heartbeat of work that may run longer than `lock_ms`, so an
//! honest worker is never taken over, and a worker whose lease was taken over learns it
//! before its next write.

use std::{future::Future, time::Duration, time::Instant};

use idem_store::rules;

use super::{error::to_i64, sql, Claim, Db, DbError};
use crate::sql::now_ms;

impl Db {
    /// Renew `claim`'s lease at `now` if it still holds the row: one fenced statement
    /// (`UPDATE … SET locked_at = now WHERE token = $mine`), so the lease is live for another
    /// `lock_ms` and no retry can take it over meanwhile. The token stays; `claim` carries the
    /// renewed lease ([`idem_store::Lease::renewed`]). `Err(DbError::Fenced)` if the claim was
    /// lost (taken over, released, saved, pruned): nothing was written, and the worker must
    /// stop before its next write. Cut at its await, the statement ran whole or not at all.
    pub async fn renew(&self, now: u64, claim: &mut Claim) -> Result<(), DbError> {
        let now = claim.table_now(self.inner.options.clock, now);
        let expires_at = rules::expires_at(now, claim.retention_ms);
        let (scope, key) = (claim.id.scope(), claim.id.key().as_str());
        let token = to_i64("token", claim.lease.token)?;
        let (locked_at, expires_at) = (to_i64("now", now)?, to_i64("expires_at", expires_at)?);
        let _turn = self.writer_turn().await;
        let changed = on_writer!(self, |pool| {
            sqlx::query(sql::RENEW)
                .bind(scope)
                .bind(key)
                .bind(token)
                .bind(locked_at)
                .bind(expires_at)
                .execute(pool)
                .await?
                .rows_affected()
        });
        if changed == 0 {
            let token = claim.lease.token;
            self.log_id(now, &claim.id, idem_store::EventKind::Fenced { token });
            return Err(DbError::Fenced);
        }
        claim.lease = claim.lease.renewed(now);
        // Under `Clock::Database` the table's clock is now `locked_at` plus the time since.
        claim.read_at = Instant::now();
        Ok(())
    }

    /// Run `work` while holding `claim`: its lease is renewed every third of `lock_ms`
    /// ([`Db::renew`]), so work of any length is never taken over while this worker lives.
    /// If a renewal is fenced (the process stalled past its lease, say, and a retry took the
    /// claim over), `work` is dropped where it stands, before its next write, and the answer
    /// is `Err(DbError::Fenced)`; a database error stops it the same way. Work that finishes
    /// returns its output; end the claim afterwards with the renewed `claim`, as usual.
    pub async fn hold<F: Future>(&self, claim: &mut Claim, work: F) -> Result<F::Output, DbError> {
        let every = Duration::from_millis((self.config().lock_ms / 3).max(1));
        let mut work = std::pin::pin!(work);
        loop {
            tokio::select! {
                output = &mut work => return Ok(output),
                () = tokio::time::sleep(every) => self.renew(now_ms(), claim).await?,
            }
        }
    }
}
