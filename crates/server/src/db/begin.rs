//! [`Db::begin`]: one read, the rule core's decision, and the one conditional write it asks for.

use std::time::Instant;

use idem_store::{
    rules::{self, Answer, Step, Write},
    EventKind, Fingerprint, IdRef, Lease, Record, Rejection, RouteConfig,
};

use crate::with_tx;

use super::{error::to_i64, row, sql, Begin, Claim, ClaimTx, Db, DbError, Request, Tx};

impl Db {
    /// Decide what to do with a request: the store's checks (scope, key, body size, JSON),
    /// then one read of the row and [`rules::decide`].
    ///
    /// A replay, a 409 or a 422 costs one round trip (the read). A claim or a takeover
    /// opens a write transaction, performs the conditional write in it, one statement that
    /// also returns the recovery point (`INSERT … ON CONFLICT DO NOTHING RETURNING token,
    /// (SELECT point …)`, or `UPDATE … WHERE token = $seen RETURNING …`), and hands the open
    /// transaction over in [`Begin::Execute`]. A write that changes no row (another server
    /// won the race) reads again, at most [`rules::MAX_READS`] times, then answers 409.
    pub async fn begin(&self, now: u64, request: Request<'_>) -> Result<Begin, DbError> {
        let Request {
            scope,
            key,
            body,
            route,
        } = request;
        let (key, fp) = match rules::check_request(scope, key, body, route, self.config()) {
            Ok(Some(checked)) => checked,
            Ok(None) => return Ok(Begin::Unkeyed),
            Err(refusal) => {
                let status = refusal.error.status();
                let kind = EventKind::Rejected {
                    status,
                    reason: Rejection::Invalid(refusal.error.clone()),
                };
                self.log(now, refusal.scope, refusal.key, kind);
                return Ok(Begin::Answer(idem_store::Begin::Invalid(refusal.error)));
            }
        };
        self.decide(now, IdRef { scope, key }, fp, route).await
    }

    async fn decide(
        &self,
        now: u64,
        id: IdRef<'_>,
        fp: Fingerprint,
        route: &RouteConfig,
    ) -> Result<Begin, DbError> {
        let lock_ms = self.lock_ms();
        let mut at = now;
        for _ in 0..rules::MAX_READS {
            let (row, db_now) = self.read(now, id).await?;
            let read_at = Instant::now();
            at = db_now;
            let write = match rules::decide(row.as_ref(), at, &fp, lock_ms) {
                Step::Answer(answer) => return Ok(self.answer(at, id, answer)),
                Step::Write(write) => write,
            };
            let lease_clock = LeaseClock { at, read_at };
            match write {
                Write::Claim => {
                    let retention_ms = rules::retention_ms(route, self.config());
                    let fresh = Taking::Fresh { retention_ms };
                    if let Some(claim) = self.claim(lease_clock, id, fp, route, fresh).await? {
                        return Ok(Begin::Execute(claim));
                    }
                }
                Write::TakeOver { seen } => {
                    // The row keeps the retention it was claimed with.
                    let retention_ms = row.as_ref().map_or(0, |r| r.retention_ms);
                    let over = Taking::Over { seen, retention_ms };
                    if let Some(claim) = self.claim(lease_clock, id, fp, route, over).await? {
                        return Ok(Begin::Execute(claim));
                    }
                }
                Write::ClearExpired => {
                    let _turn = self.writer_turn().await;
                    let cleared = on_pool!(self, |pool| {
                        sqlx::query(sql::CLEAR_EXPIRED)
                            .bind(id.scope)
                            .bind(id.key)
                            .bind(to_i64("now", at)?)
                            .bind(to_i64("lock_ms", lock_ms)?)
                            .execute(pool)
                            .await?
                            .rows_affected()
                    });
                    if cleared > 0 {
                        self.log(at, id.scope, Some(id.key), EventKind::Pruned);
                    }
                }
            }
        }
        let retry_after_ms = rules::contended(lock_ms);
        let kind = EventKind::Rejected {
            status: 409,
            reason: Rejection::InFlight { retry_after_ms },
        };
        self.log(at, id.scope, Some(id.key), kind);
        Ok(Begin::Answer(idem_store::Begin::InFlight {
            retry_after_ms,
        }))
    }

    /// One round trip: the row (if any) and the clock the decision uses.
    pub(crate) async fn read(
        &self,
        now: u64,
        id: IdRef<'_>,
    ) -> Result<(Option<Record>, u64), DbError> {
        let sql = &self.inner.sql;
        let now_i = to_i64("now", now)?;
        let decoded = on_pool!(self, |pool| {
            let query = sqlx::query(sqlx::AssertSqlSafe(sql.read.as_str()))
                .bind(id.scope)
                .bind(id.key);
            let query = if sql.read_binds_now {
                query.bind(now_i)
            } else {
                query
            };
            let r = query.fetch_one(pool).await?;
            let db_now: i64 = row::get(&r, "now_ms")?;
            (row::RawRow::read(&r), db_now)
        });
        let (raw, db_now) = decoded;
        let db_now = u64::try_from(db_now).map_err(|_| DbError::OutOfRange {
            what: "database clock",
            value: 0,
        })?;
        let raw = raw.map_err(|reason| row::corrupt(id.scope, id.key, reason))?;
        if raw.is_absent() {
            return Ok((None, db_now));
        }
        let record = raw
            .into_record()
            .map_err(|reason| row::corrupt(id.scope, id.key, reason))?;
        Ok((Some(record), db_now))
    }

    fn answer(&self, now: u64, id: IdRef<'_>, answer: Answer<'_>) -> Begin {
        let (kind, begin) = match answer {
            Answer::Replay(response) => (
                EventKind::Replayed {
                    status: response.status,
                },
                idem_store::Begin::Replay(response.clone()),
            ),
            Answer::InFlight { retry_after_ms } => (
                EventKind::Rejected {
                    status: 409,
                    reason: Rejection::InFlight { retry_after_ms },
                },
                idem_store::Begin::InFlight { retry_after_ms },
            ),
            Answer::Mismatch => (
                EventKind::Rejected {
                    status: 422,
                    reason: Rejection::Mismatch,
                },
                idem_store::Begin::Mismatch,
            ),
        };
        self.log(now, id.scope, Some(id.key), kind);
        Begin::Answer(begin)
    }

    /// The claim's write transaction: a fresh claim or a takeover of a stale lease. `None`
    /// when the conditional write changed nothing.
    async fn claim(
        &self,
        clock: LeaseClock,
        id: IdRef<'_>,
        fp: Fingerprint,
        route: &RouteConfig,
        taking: Taking,
    ) -> Result<Option<ClaimTx>, DbError> {
        let sql = &self.inner.sql;
        let now = clock.at;
        let (seen, retention_ms) = match taking {
            Taking::Fresh { retention_ms } => (None, retention_ms),
            Taking::Over { seen, retention_ms } => (Some(seen), retention_ms),
        };
        let expires_at = rules::expires_at(now, retention_ms);
        let (now_i, expires_i) = (to_i64("now", now)?, to_i64("expires_at", expires_at)?);
        let retention_i = to_i64("retention_ms", retention_ms)?;
        let fp_bytes: &[u8] = &fp.0;
        let (mut tx, turn) = self.write_tx().await?;
        if let (Some(bump), Tx::Sqlite(t)) = (sql.bump_token, &mut tx) {
            sqlx::query(sqlx::AssertSqlSafe(bump))
                .execute(&mut **t)
                .await?;
        }
        // One statement: the conditional write, and the recovery point in its RETURNING.
        let written: Option<(i64, Option<Vec<u8>>)> = match seen {
            None => with_tx!(&mut tx, |conn| {
                sqlx::query_as(sqlx::AssertSqlSafe(sql.claim.as_str()))
                    .bind(id.scope)
                    .bind(id.key)
                    .bind(fp_bytes)
                    .bind(route.on_error.as_str())
                    .bind(now_i)
                    .bind(expires_i)
                    .bind(retention_i)
                    .fetch_optional(conn)
                    .await
            })?,
            Some(seen) => {
                let seen_token = to_i64("token", seen.token)?;
                with_tx!(&mut tx, |conn| {
                    sqlx::query_as(sqlx::AssertSqlSafe(sql.take_over.as_str()))
                        .bind(id.scope)
                        .bind(id.key)
                        .bind(fp_bytes)
                        .bind(seen_token)
                        .bind(now_i)
                        .bind(expires_i)
                        .fetch_optional(conn)
                        .await
                })?
            }
        };
        let Some((token, recovery)) = written else {
            tx.rollback().await?;
            return Ok(None);
        };
        let token = u64::try_from(token)
            .map_err(|_| row::corrupt(id.scope, id.key, format!("token {token} is negative")))?;
        let owned = id
            .to_owned()
            .map_err(|e| row::corrupt(id.scope, id.key, e.to_string()))?;
        Ok(Some(ClaimTx {
            claim: Claim {
                id: owned,
                lease: Lease {
                    locked_at: now,
                    token,
                },
                fingerprint: fp,
                on_error: route.on_error,
                retention_ms,
                taken_over: seen.is_some(),
                read_at: clock.read_at,
            },
            recovery,
            replaced: seen.map(|l| l.token),
            expires_at,
            tx,
            db: self.clone(),
            _turn: turn,
        }))
    }
}

/// When the lease is taken: `at` on the table's clock (the caller's, or the database's as
/// the read returned it) and the monotonic instant the read came back, from which a later
/// write of the same request tells the table's time without asking the database again.
#[derive(Debug, Clone, Copy)]
struct LeaseClock {
    at: u64,
    read_at: Instant,
}

/// A fresh claim or a takeover, with the retention the row gets or keeps.
#[derive(Debug, Clone, Copy)]
enum Taking {
    /// No row: the route's retention.
    Fresh { retention_ms: u64 },
    /// A stale lease `seen`: the row keeps its own retention.
    Over { seen: Lease, retention_ms: u64 },
}
