//! The fenced writes that end a claim: commit a response (with the route's business
//! writes, in one transaction), release, or fail by the route's declared policy.

use idem_store::{
    rules::{self, Finish},
    EventKind, SavedResponse,
};

use crate::with_tx;

use super::{error::to_i64, row, sql, Claim, Clock, CommitTx, Db, DbError, Tx};

impl Db {
    /// Open the fenced transaction that ends `claim` with a response: do the business
    /// writes in [`CommitTx::tx`], then [`CommitTx::commit`].
    pub async fn commit_tx(&self, claim: &Claim) -> Result<CommitTx, DbError> {
        Ok(CommitTx {
            claim: claim.clone(),
            tx: self.write_tx().await?,
            db: self.clone(),
        })
    }

    /// Save `response` for `claim`, with no business writes: the two-step save, for work
    /// that could not share the transaction (safe only when that work is idempotent
    /// downstream). `Err(DbError::Fenced)` if the claim was lost.
    pub async fn save(
        &self,
        now: u64,
        claim: &Claim,
        response: SavedResponse,
    ) -> Result<(), DbError> {
        self.commit_tx(claim).await?.commit(now, response).await
    }

    /// The work failed: follow the route's declared policy ([`Claim::on_error`]): release
    /// the claim (a retry runs the work again, resuming the recovery point) or save
    /// `response` for replay. Fenced either way. With business writes of its own, a route
    /// uses [`CommitTx::fail`] instead.
    pub async fn fail(
        &self,
        now: u64,
        claim: &Claim,
        response: SavedResponse,
    ) -> Result<(), DbError> {
        self.commit_tx(claim).await?.fail(now, response).await
    }

    /// Delete the claim if it is still ours (`DELETE … WHERE token = $mine`, one
    /// statement), so a retry runs the work again; its recovery point stays. A zombie's
    /// release changes nothing and returns `Err(DbError::Fenced)`.
    pub async fn release(&self, now: u64, claim: &Claim) -> Result<(), DbError> {
        let (scope, key) = (claim.id.scope(), claim.id.key().as_str());
        let token = to_i64("token", claim.lease.token)?;
        let gone = on_pool!(self, |pool| {
            sqlx::query(sql::RELEASE)
                .bind(scope)
                .bind(key)
                .bind(token)
                .execute(pool)
                .await?
                .rows_affected()
        });
        if gone == 0 {
            self.log_id(
                now,
                &claim.id,
                EventKind::Fenced {
                    token: claim.lease.token,
                },
            );
            return Err(DbError::Fenced);
        }
        self.log_id(
            now,
            &claim.id,
            EventKind::Released {
                token: claim.lease.token,
            },
        );
        Ok(())
    }

    /// `now` on the configured clock, inside `tx`.
    pub(crate) async fn clock_now(&self, tx: &mut Tx, now: u64) -> Result<u64, DbError> {
        if self.inner.options.clock == Clock::Caller {
            return Ok(now);
        }
        let sql = self.inner.sql.now.as_str();
        let db_now: i64 = with_tx!(tx, |conn| {
            sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .fetch_one(conn)
                .await
        })?;
        Ok(u64::try_from(db_now).unwrap_or(0))
    }
}

impl CommitTx {
    /// The fenced commit: `UPDATE … SET status = 'done', response = … WHERE token = $mine`
    /// in this transaction, then `COMMIT`. If the update changed no row (the claim was
    /// taken over, released or pruned), the transaction rolls back, the route's business
    /// writes with it, and the result is `Err(DbError::Fenced)`. Retention restarts at `now`.
    pub async fn commit(self, now: u64, response: SavedResponse) -> Result<(), DbError> {
        self.finish(now, Finish::Commit(response)).await
    }

    /// The work failed: apply the route's declared policy ([`Claim::on_error`]) in this
    /// transaction, with the route's own writes (say, "order declined"): save `response`
    /// for replay, or release the claim (`DELETE … WHERE token = $mine`). Fenced like
    /// [`commit`](Self::commit): a lost claim rolls everything back.
    pub async fn fail(self, now: u64, response: SavedResponse) -> Result<(), DbError> {
        let finish = rules::finish(self.claim.on_error, response);
        self.finish(now, finish).await
    }

    /// Release the claim in this transaction, with the route's own writes, whatever the
    /// policy (a route that knows its work did nothing downstream).
    pub async fn release(self, now: u64) -> Result<(), DbError> {
        self.finish(now, Finish::Release).await
    }

    async fn finish(mut self, now: u64, finish: Finish) -> Result<(), DbError> {
        let db = self.db.clone();
        let now = db.clock_now(&mut self.tx, now).await?;
        let (scope, key) = (self.claim.id.scope(), self.claim.id.key().as_str());
        let token = to_i64("token", self.claim.lease.token)?;
        let expires_at = to_i64("expires_at", rules::expires_at(now, db.config()))?;
        let changed = match &finish {
            Finish::Commit(response) => {
                let headers = row::headers_json(response);
                with_tx!(&mut self.tx, |conn| {
                    sqlx::query(sql::COMMIT)
                        .bind(scope)
                        .bind(key)
                        .bind(token)
                        .bind(expires_at)
                        .bind(i64::from(response.status))
                        .bind(response.content_type.as_str())
                        .bind(headers.as_str())
                        .bind(response.body.as_slice())
                        .execute(conn)
                        .await
                        .map(|done| done.rows_affected())
                })?
            }
            Finish::Release => with_tx!(&mut self.tx, |conn| {
                sqlx::query(sql::RELEASE)
                    .bind(scope)
                    .bind(key)
                    .bind(token)
                    .execute(conn)
                    .await
                    .map(|done| done.rows_affected())
            })?,
        };
        let id = self.claim.id.clone();
        let lease_token = self.claim.lease.token;
        if changed == 0 {
            self.tx.rollback().await?;
            db.log_id(now, &id, EventKind::Fenced { token: lease_token });
            return Err(DbError::Fenced);
        }
        self.tx.commit().await?;
        let kind = match finish {
            Finish::Commit(response) => EventKind::Saved {
                token: lease_token,
                status: response.status,
            },
            Finish::Release => EventKind::Released { token: lease_token },
        };
        db.log_id(now, &id, kind);
        Ok(())
    }
}
