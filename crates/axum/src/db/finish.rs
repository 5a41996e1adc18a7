//! The fenced writes that end a claim: commit a response (alone, with the route's business
//! writes in one transaction, or with its updates and inserts in one statement), release, or
//! fail by the route's declared policy.

use idem_store::{
    rules::{self, Finish},
    EventKind,
};

use crate::with_tx;

use super::{
    error::to_i64,
    row, sql,
    write::{bind_params, RouteWrite},
    Claim, Db, DbError, FinishTx, Pool,
};

/// The claim's side of a fenced write, ready to bind: `$1` scope, `$2` key, `$3` token, and
/// for a commit `$4` expires_at, `$5` status, `$6` content type, `$7` headers, `$8` body
/// ([`sql::COMMIT`], [`sql::RELEASE`]).
struct Fence<'c> {
    scope: &'c str,
    key: &'c str,
    token: i64,
    /// When the write happens on the table's clock.
    now: u64,
    expires_at: i64,
    headers: String,
}

impl<'c> Fence<'c> {
    fn new(db: &Db, claim: &'c Claim, now: u64, finish: &Finish) -> Result<Self, DbError> {
        let now = claim.table_now(db.inner.options.clock, now);
        let expires_at = rules::expires_at(now, claim.retention_ms);
        Ok(Self {
            scope: claim.id.scope(),
            key: claim.id.key().as_str(),
            token: to_i64("token", claim.lease.token)?,
            now,
            expires_at: to_i64("expires_at", expires_at)?,
            headers: match finish {
                Finish::Commit(response) => row::headers_json(response),
                Finish::Release => String::new(),
            },
        })
    }
}

/// Bind a [`Fence`]'s parameters, in order, after whatever `$query` has bound already.
macro_rules! bind_fence {
    ($query:expr, $fence:expr, $finish:expr) => {{
        let query = $query
            .bind($fence.scope)
            .bind($fence.key)
            .bind($fence.token);
        match $finish {
            Finish::Commit(response) => query
                .bind($fence.expires_at)
                .bind(i64::from(response.status))
                .bind(response.content_type.as_str())
                .bind($fence.headers.as_str())
                .bind(response.body.as_slice()),
            Finish::Release => query,
        }
    }};
}

impl Db {
    /// End `claim`, fenced, in one statement with no business writes: `Finish::Commit`
    /// saves the response (the two-step save, for work that could not share the
    /// transaction: safe only when that work is idempotent downstream), `Finish::Release`
    /// releases it (`UPDATE … SET released_token = token WHERE token = $mine`: the row stays,
    /// bound to its fingerprint until retention ends, so the same request's retry claims it
    /// again and resumes the recovery point, and another request under the key is 422). For
    /// work that failed, [`Claim::failed`] gives the route's declared policy.
    /// `Err(DbError::Fenced)` if the claim was lost (taken over, released, saved, pruned):
    /// nothing was written. The row's own retention restarts at `now` on a commit.
    pub async fn finish(&self, now: u64, claim: &Claim, finish: Finish) -> Result<(), DbError> {
        let fence = Fence::new(self, claim, now, &finish)?;
        let statement = match finish {
            Finish::Commit(_) => sql::COMMIT,
            Finish::Release => sql::RELEASE,
        };
        let _turn = self.writer_turn().await;
        let changed = on_writer!(self, |pool| {
            bind_fence!(sqlx::query(statement), fence, &finish)
                .execute(pool)
                .await?
                .rows_affected()
        });
        self.finished(fence.now, claim, finish, changed > 0)
    }

    /// End `claim` with the route's business writes (say, "order paid" and a message for
    /// the outbox, [`RouteWrite`]s): all of them happen with the fenced write, or, if `claim`
    /// was lost, none does, and the result is `Err(DbError::Fenced)`. A write that fails
    /// (a constraint) fails the whole call and leaves nothing, the claim included.
    ///
    /// On PostgreSQL this is **one statement** (one round trip, no `BEGIN`/`COMMIT`): a
    /// `WITH` whose first part is the fenced `UPDATE idem_claims … WHERE token = $mine
    /// RETURNING 1` and whose next parts are the route's writes, each gated on a row from
    /// the first (an update `… AND EXISTS (SELECT 1 FROM idem)`, an insert `… SELECT … FROM
    /// idem`). SQLite has no data-modifying `WITH`: there it is one `BEGIN IMMEDIATE`
    /// transaction, the fenced update first, rolled back when it changes nothing, then the
    /// route's writes in their order.
    pub async fn finish_with(
        &self,
        now: u64,
        claim: &Claim,
        finish: Finish,
        writes: &[RouteWrite<'_>],
    ) -> Result<(), DbError> {
        let fence = Fence::new(self, claim, now, &finish)?;
        let held = match &self.inner.pool {
            Pool::Postgres(pool) => {
                let which = match finish {
                    Finish::Commit(_) => "finish_with",
                    Finish::Release => "release_with",
                };
                let shape = writes.iter().map(|w| w.shape(which)).collect();
                let statement = self.inner.composed.get(shape, || {
                    let mut first = 1;
                    let mut parts = Vec::with_capacity(writes.len());
                    for (i, write) in writes.iter().enumerate() {
                        parts.push(format!("route_{i} AS ({})", write.sql_from(first, true)?));
                        first += write.param_count();
                    }
                    let fenced = match finish {
                        Finish::Commit(_) => sql::commit_from(first),
                        Finish::Release => sql::release_from(first),
                    };
                    let routes: String = parts.iter().map(|part| format!(", {part}")).collect();
                    Ok(format!(
                        "WITH idem AS ({fenced}){routes} SELECT COUNT(*) AS held FROM idem"
                    ))
                })?;
                let query = sqlx::query_scalar(sqlx::AssertSqlSafe(statement));
                let query = bind_params!(query, writes.iter().flat_map(RouteWrite::params));
                let held: i64 = bind_fence!(query, fence, &finish).fetch_one(pool).await?;
                held > 0
            }
            Pool::Sqlite(_) => {
                // Composed (or refused) before anything is written.
                let mut texts = Vec::with_capacity(writes.len());
                for write in writes {
                    let shape = vec![write.shape("write")];
                    texts.push(
                        self.inner
                            .composed
                            .get(shape, || write.sql_from(1, false))?,
                    );
                }
                let (mut tx, _turn) = self.write_tx().await?;
                let statement = match finish {
                    Finish::Commit(_) => sql::COMMIT,
                    Finish::Release => sql::RELEASE,
                };
                let changed = with_tx!(&mut tx, |conn| {
                    bind_fence!(sqlx::query(statement), fence, &finish)
                        .execute(conn)
                        .await
                        .map(|done| done.rows_affected())
                })?;
                if changed == 0 {
                    tx.rollback().await?;
                    false
                } else {
                    for (write, text) in writes.iter().zip(texts) {
                        with_tx!(&mut tx, |conn| {
                            bind_params!(sqlx::query(sqlx::AssertSqlSafe(text)), write.params())
                                .execute(conn)
                                .await
                                .map(|_| ())
                        })?;
                    }
                    tx.commit().await?;
                    true
                }
            }
        };
        self.finished(fence.now, claim, finish, held)
    }

    /// Open the fenced transaction that ends `claim`: do the business writes in
    /// [`FinishTx::tx`], then [`FinishTx::finish`]. For writes a [`RouteWrite`] can say
    /// (updates and inserts), [`finish_with`](Self::finish_with) does it in fewer round trips.
    pub async fn finish_tx(&self, claim: &Claim) -> Result<FinishTx, DbError> {
        let (tx, turn) = self.write_tx().await?;
        Ok(FinishTx {
            claim: claim.clone(),
            tx,
            db: self.clone(),
            _turn: turn,
        })
    }

    /// Log the end of `claim` (or that it was fenced) and say so.
    fn finished(&self, now: u64, claim: &Claim, finish: Finish, held: bool) -> Result<(), DbError> {
        let token = claim.lease.token;
        if !held {
            self.log_id(now, &claim.id, EventKind::Fenced { token });
            return Err(DbError::Fenced);
        }
        let kind = match finish {
            Finish::Commit(response) => EventKind::Saved {
                token,
                status: response.status,
            },
            Finish::Release => EventKind::Released { token },
        };
        self.log_id(now, &claim.id, kind);
        Ok(())
    }
}

impl FinishTx {
    /// End the claim in this transaction, with the route's own writes: `Finish::Commit`
    /// saves the response (`UPDATE … SET status = 'done', response = … WHERE token = $mine`),
    /// `Finish::Release` releases the claim; [`Claim::failed`] gives the route's declared
    /// policy for work that failed. Then `COMMIT`. If the fenced update changed no row (the
    /// claim was taken over, released or pruned), the transaction rolls back, the route's
    /// business writes with it, and the result is `Err(DbError::Fenced)`.
    pub async fn finish(mut self, now: u64, finish: Finish) -> Result<(), DbError> {
        let db = self.db.clone();
        let fence = Fence::new(&db, &self.claim, now, &finish)?;
        let statement = match finish {
            Finish::Commit(_) => sql::COMMIT,
            Finish::Release => sql::RELEASE,
        };
        let changed = with_tx!(&mut self.tx, |conn| {
            bind_fence!(sqlx::query(statement), fence, &finish)
                .execute(conn)
                .await
                .map(|done| done.rows_affected())
        })?;
        let now = fence.now;
        if changed == 0 {
            self.tx.rollback().await?;
        } else {
            self.tx.commit().await?;
        }
        db.finished(now, &self.claim, finish, changed > 0)
    }
}
