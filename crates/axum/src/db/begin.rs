//! [`Db::begin`]: one read, the rule core's decision, and the one conditional write it asks for.

use std::{sync::Arc, time::Instant};

use idem_store::{
    first_sent::FirstSent,
    rules::{self, Answer, Step, Write},
    EventKind, Fingerprint, IdRef, Lease, Record, Rejection, RouteConfig,
};

use crate::with_tx;

use super::{
    error::to_i64,
    row, sql,
    write::{bind_params, RouteInsert},
    Begin, BeginWith, Claim, ClaimTx, Db, DbError, Link, Request, Tx,
};

impl Db {
    /// Decide what to do with a request: the store's checks (scope, key, body size, JSON),
    /// then one read of the row and [`rules::decide`].
    ///
    /// A replay, a 409 or a 422 costs one round trip (the read). A claim or a takeover
    /// opens a write transaction, performs the conditional write in it, one statement that
    /// also returns the recovery point (`INSERT … ON CONFLICT DO NOTHING RETURNING token,
    /// (SELECT point …)`, or `UPDATE … WHERE token = $seen RETURNING …`), and hands the open
    /// transaction over in [`Begin::Execute`]. A write that changes no row (another server
    /// won the race) reads again, at most [`rules::MAX_READS`] times, then answers 409. On
    /// PostgreSQL the read and the claim's transaction share one connection.
    pub async fn begin(&self, now: u64, request: Request<'_>) -> Result<Begin, DbError> {
        let (id, fp) = match self.check(now, request) {
            Ok(checked) => checked,
            Err(Unchecked::Unkeyed) => return Ok(Begin::Unkeyed),
            Err(Unchecked::Answer(answer)) => return Ok(Begin::Answer(answer)),
        };
        let sent = rules::first_sent(request.first_sent, request.route, self.config());
        Ok(
            match self.decide(now, id, fp, request.route, sent, None).await? {
                Decided::Claimed(claim) => Begin::Execute(claim),
                Decided::Answer(answer) => Begin::Answer(answer),
                // Only `begin_with` creates.
                Decided::Created { .. } => unreachable!("no first row was given"),
            },
        )
    }

    /// [`begin`](Self::begin) for a route whose work starts by creating one row (the
    /// checkout's order): when the key is ours and no earlier worker of this same request
    /// left a recovery point, the claim, `first` and its id as the recovery point are written
    /// together and committed, and the answer is [`BeginWith::Created`]. On PostgreSQL that is
    /// **one statement** (no `BEGIN`/`COMMIT`), on the connection the read used:
    ///
    /// ```text
    /// WITH idem AS (INSERT INTO idem_claims … SELECT … WHERE NOT EXISTS (<a recovery point>)
    ///               ON CONFLICT (scope, key) DO NOTHING RETURNING token),
    ///      route AS (INSERT INTO <first> SELECT … FROM idem RETURNING <id>),
    ///      point AS (INSERT INTO idem_recovery … SELECT … FROM route …)
    /// SELECT idem.token, route.id FROM idem, route
    /// ```
    ///
    /// so either all three rows are written or none. None means another worker claimed the
    /// key meanwhile, or this request has a recovery point: the row is read and decided
    /// again, and this time the claim takes the transactional path of [`begin`](Self::begin).
    /// On SQLite (no data-modifying `WITH`) it is the claim's transaction with `first` and the
    /// recovery point in it.
    ///
    /// After a takeover, or a claim over a released key with a recovery point of this same
    /// request, nothing is created: [`BeginWith::Resume`] hands over the claim's open
    /// transaction, as [`begin`](Self::begin) does, and the route resumes from
    /// [`ClaimTx::recovery`] (or, if that point names nothing usable, creates in that
    /// transaction and calls [`ClaimTx::set_recovery`]).
    pub async fn begin_with(
        &self,
        now: u64,
        request: Request<'_>,
        first: &RouteInsert<'_>,
    ) -> Result<BeginWith, DbError> {
        let (id, fp) = match self.check(now, request) {
            Ok(checked) => checked,
            Err(Unchecked::Unkeyed) => return Ok(BeginWith::Unkeyed),
            Err(Unchecked::Answer(answer)) => return Ok(BeginWith::Answer(answer)),
        };
        let sent = rules::first_sent(request.first_sent, request.route, self.config());
        match self
            .decide(now, id, fp, request.route, sent, Some(first))
            .await?
        {
            Decided::Created { claim, id } => Ok(BeginWith::Created { claim, id }),
            Decided::Answer(answer) => Ok(BeginWith::Answer(answer)),
            Decided::Claimed(claim) if claim.recovery().is_some() => Ok(BeginWith::Resume(claim)),
            Decided::Claimed(mut claim) => {
                let id = claim.create(first).await?;
                Ok(BeginWith::Created {
                    claim: claim.commit().await?,
                    id,
                })
            }
        }
    }

    /// The store's checks of a request: its (scope, key) and fingerprint, or why there is
    /// nothing to decide.
    fn check<'r>(
        &self,
        now: u64,
        request: Request<'r>,
    ) -> Result<(IdRef<'r>, Fingerprint), Unchecked> {
        let Request {
            scope,
            key,
            body,
            route,
            target,
            first_sent: _,
        } = request;
        match rules::check_request_to(scope, key, body, target, route, self.config()) {
            Ok(Some((key, fp))) => Ok((IdRef { scope, key }, fp)),
            Ok(None) => Err(Unchecked::Unkeyed),
            Err(refusal) => {
                let status = refusal.error.status();
                let kind = EventKind::Rejected {
                    status,
                    reason: Rejection::Invalid(refusal.error.clone()),
                };
                self.log(now, refusal.scope, refusal.key, kind);
                Err(Unchecked::Answer(idem_store::Begin::Invalid(refusal.error)))
            }
        }
    }

    /// Read, decide, write, until the rules answer or a write lands (the loop's rules:
    /// [`rules::Deciding`], the same as the in-memory store's). With `first`, a fresh
    /// claim on PostgreSQL is tried once as one statement with the route's first row
    /// ([`begin_with`](Self::begin_with)).
    pub(super) async fn decide(
        &self,
        now: u64,
        id: IdRef<'_>,
        fp: Fingerprint,
        route: &RouteConfig,
        first_sent: Option<FirstSent>,
        mut first: Option<&RouteInsert<'_>>,
    ) -> Result<Decided, DbError> {
        let lock_ms = self.lock_ms();
        let mut at = now;
        let mut link = Some(self.link().await?);
        let mut deciding = rules::Deciding::new(fp, lock_ms).with_first_sent(first_sent);
        loop {
            if let Err(rules::Contended { retry_after_ms }) = deciding.read() {
                let kind = EventKind::Rejected {
                    status: 409,
                    reason: Rejection::InFlight { retry_after_ms },
                };
                self.log(at, id.scope, Some(id.key), kind);
                return Ok(Decided::Answer(idem_store::Begin::InFlight {
                    retry_after_ms,
                }));
            }
            let held = match link.as_mut() {
                Some(held) => held,
                // A claim that wrote nothing ended its transaction: take a connection again.
                None => link.insert(self.link().await?),
            };
            let (row, db_now) = self.read_on(held, now, id).await?;
            let read_at = Instant::now();
            at = db_now;
            let write = match deciding.decide(row.as_ref(), at) {
                Step::Answer(answer) => return Ok(Decided::Answer(self.answer(at, id, answer))),
                Step::Write(write) => write,
            };
            let lease_clock = LeaseClock { at, read_at };
            match write {
                Write::Claim => {
                    let retention_ms = rules::retention_ms(route, self.config());
                    if let (Some(insert), Some(Link::Postgres(conn))) = (first, link.as_mut()) {
                        // Tried once: if it writes nothing, the next claim is transactional.
                        first = None;
                        let fresh = Fresh {
                            clock: lease_clock,
                            retention_ms,
                        };
                        if let Some(created) = self
                            .claim_creating(conn, fresh, id, fp, route, insert)
                            .await?
                        {
                            return Ok(created);
                        }
                        continue;
                    }
                    let fresh = Taking::Fresh { retention_ms };
                    let held = link.take().unwrap_or(Link::Pool);
                    if let Some(claim) = self.claim(held, lease_clock, id, fp, route, fresh).await?
                    {
                        return Ok(Decided::Claimed(claim));
                    }
                }
                Write::TakeOver { seen } | Write::Reclaim { released: seen } => {
                    // The row keeps the retention it was claimed with.
                    let retention_ms = row.as_ref().map_or(0, |r| r.retention_ms);
                    let taking = match write {
                        Write::TakeOver { .. } => Taking::Over { seen, retention_ms },
                        _ => Taking::Again { seen, retention_ms },
                    };
                    let held = link.take().unwrap_or(Link::Pool);
                    if let Some(claim) =
                        self.claim(held, lease_clock, id, fp, route, taking).await?
                    {
                        return Ok(Decided::Claimed(claim));
                    }
                }
                Write::ClearExpired => {
                    let _turn = self.writer_turn().await;
                    let (now_i, lock_i) = (to_i64("now", at)?, to_i64("lock_ms", lock_ms)?);
                    macro_rules! clear {
                        ($exec:expr) => {
                            sqlx::query(sql::CLEAR_EXPIRED)
                                .bind(id.scope)
                                .bind(id.key)
                                .bind(now_i)
                                .bind(lock_i)
                                .execute($exec)
                                .await?
                                .rows_affected()
                        };
                    }
                    // SQLite: on the writer's connection, as every write.
                    let cleared = match &self.inner.writer {
                        Some(writer) => clear!(writer),
                        None => on_link!(self, link.as_mut().unwrap_or(&mut Link::Pool), |exec| {
                            clear!(exec)
                        }),
                    };
                    if cleared > 0 {
                        self.log(at, id.scope, Some(id.key), EventKind::Pruned);
                    }
                }
            }
        }
    }

    /// One round trip: the row (if any) and the clock the decision uses.
    pub(crate) async fn read(
        &self,
        now: u64,
        id: IdRef<'_>,
    ) -> Result<(Option<Record>, u64), DbError> {
        self.read_on(&mut Link::Pool, now, id).await
    }

    /// [`read`](Self::read) on where `link` sends the request's statements.
    async fn read_on(
        &self,
        link: &mut Link,
        now: u64,
        id: IdRef<'_>,
    ) -> Result<(Option<Record>, u64), DbError> {
        let sql = &self.inner.sql;
        let now_i = to_i64("now", now)?;
        let decoded = on_link!(self, link, |pool| {
            let query = sqlx::query(sqlx::AssertSqlSafe(Arc::clone(&sql.read)))
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

    fn answer(&self, now: u64, id: IdRef<'_>, answer: Answer<'_>) -> idem_store::Begin {
        let (kind, begin) = answer.decided();
        self.log(now, id.scope, Some(id.key), kind);
        begin
    }

    /// The claim's write transaction: a fresh claim or a takeover of a stale lease. `None`
    /// when the conditional write changed nothing.
    async fn claim(
        &self,
        link: Link,
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
            Taking::Over { seen, retention_ms } | Taking::Again { seen, retention_ms } => {
                (Some(seen), retention_ms)
            }
        };
        let taken_over = matches!(taking, Taking::Over { .. });
        let expires_at = rules::expires_at(now, retention_ms);
        let (now_i, expires_i) = (to_i64("now", now)?, to_i64("expires_at", expires_at)?);
        let retention_i = to_i64("retention_ms", retention_ms)?;
        let fp_bytes: &[u8] = &fp.0;
        let (mut tx, turn) = self.write_tx_on(link).await?;
        if let (Some(bump), Tx::Sqlite(t)) = (sql.bump_token, &mut tx) {
            sqlx::query(bump).execute(&mut **t).await?;
        }
        // One statement: the conditional write, and the recovery point in its RETURNING (a
        // takeover and a claim again are the same compare-and-set on the row's last lease).
        let written: Option<(i64, Option<Vec<u8>>)> = match seen {
            None => with_tx!(&mut tx, |conn| {
                sqlx::query_as(sqlx::AssertSqlSafe(Arc::clone(&sql.claim)))
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
                    sqlx::query_as(sqlx::AssertSqlSafe(Arc::clone(&sql.take_over)))
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
        let Some((token, mut recovery)) = written else {
            tx.rollback().await?;
            return Ok(None);
        };
        if taken_over && matches!(tx, Tx::Postgres(_)) {
            // The old worker may have been saving its point (`Db::save_recovery`) when this
            // takeover found its row locked: the update then went ahead once that commit
            // landed, but under READ COMMITTED the RETURNING's subquery still reads the
            // statement's first snapshot, without the point. A statement of its own sees it:
            // one more round trip, on takeovers only (a released claim's lease saves nothing
            // more, so a claim again reads its point in the one statement). SQLite's write
            // transactions run one at a time: nothing to read again.
            recovery = with_tx!(&mut tx, |conn| {
                sqlx::query_scalar(sql::RECOVERY_READ)
                    .bind(id.scope)
                    .bind(id.key)
                    .bind(fp_bytes)
                    .fetch_optional(conn)
                    .await
            })?;
        }
        let claim = Claim::new(id, token, clock, fp, route, retention_ms, taken_over)?;
        Ok(Some(ClaimTx {
            claim,
            recovery,
            replaced: seen.filter(|_| taken_over).map(|l| l.token),
            expires_at,
            tx,
            db: self.clone(),
            _turn: turn,
        }))
    }

    /// PostgreSQL: a fresh claim, `first` and the recovery point in one statement, on the
    /// request's connection, committed on its own. `None` when it wrote nothing (the key was
    /// claimed meanwhile, or this request has a recovery point to resume).
    async fn claim_creating(
        &self,
        conn: &mut sqlx::PgConnection,
        fresh: Fresh,
        id: IdRef<'_>,
        fp: Fingerprint,
        route: &RouteConfig,
        first: &RouteInsert<'_>,
    ) -> Result<Option<Decided>, DbError> {
        let now = fresh.clock.at;
        let expires_at = rules::expires_at(now, fresh.retention_ms);
        let token = self.inner.sql.token;
        let statement = self
            .inner
            .composed
            .get(vec![first.shape("claim_creating")], || {
                sql::claim_creating(token, first)
            })?;
        let query = sqlx::query_as(sqlx::AssertSqlSafe(statement));
        let written: Option<(i64, i64)> = bind_params!(query, first.params())
            .bind(id.scope)
            .bind(id.key)
            .bind(&fp.0[..])
            .bind(route.on_error.as_str())
            .bind(to_i64("now", now)?)
            .bind(to_i64("expires_at", expires_at)?)
            .bind(to_i64("retention_ms", fresh.retention_ms)?)
            .fetch_optional(conn)
            .await?;
        let Some((token, row_id)) = written else {
            return Ok(None);
        };
        let claim = Claim::new(id, token, fresh.clock, fp, route, fresh.retention_ms, false)?;
        self.log_id(
            now,
            &claim.id,
            EventKind::Claimed {
                token: claim.lease.token,
            },
        );
        Ok(Some(Decided::Created { claim, id: row_id }))
    }
}

impl Claim {
    /// The claim a conditional write just took, with the token it returned.
    fn new(
        id: IdRef<'_>,
        token: i64,
        clock: LeaseClock,
        fingerprint: Fingerprint,
        route: &RouteConfig,
        retention_ms: u64,
        taken_over: bool,
    ) -> Result<Claim, DbError> {
        let token = u64::try_from(token)
            .map_err(|_| row::corrupt(id.scope, id.key, format!("token {token} is negative")))?;
        let owned = id
            .to_owned()
            .map_err(|e| row::corrupt(id.scope, id.key, e.to_string()))?;
        Ok(Claim {
            id: owned,
            lease: Lease {
                locked_at: clock.at,
                token,
            },
            fingerprint,
            on_error: route.on_error,
            retention_ms,
            taken_over,
            read_at: clock.read_at,
        })
    }
}

/// A request with nothing to decide ([`Db::check`]).
enum Unchecked {
    /// No key on an optional-key route.
    Unkeyed,
    /// Refused by the store's checks (400, 413).
    Answer(idem_store::Begin),
}

/// What [`Db::decide`] ended with.
pub(super) enum Decided {
    /// Claimed; the claim's transaction is open.
    Claimed(ClaimTx),
    /// Claimed with the route's first row, committed ([`Db::begin_with`], PostgreSQL).
    Created { claim: Claim, id: i64 },
    /// Not to run: a replay, 409 or 422.
    Answer(idem_store::Begin),
}

/// A fresh claim's clock and retention.
#[derive(Debug, Clone, Copy)]
struct Fresh {
    clock: LeaseClock,
    retention_ms: u64,
}

/// When the lease is taken: `at` on the table's clock (the caller's, or the database's as
/// the read returned it) and the monotonic instant the read came back, from which a later
/// write of the same request tells the table's time without asking the database again.
#[derive(Debug, Clone, Copy)]
struct LeaseClock {
    at: u64,
    read_at: Instant,
}

/// A fresh claim, a takeover or a claim again, with the retention the row gets or keeps.
#[derive(Debug, Clone, Copy)]
enum Taking {
    /// No row: the route's retention.
    Fresh { retention_ms: u64 },
    /// A stale lease `seen`: the row keeps its own retention.
    Over { seen: Lease, retention_ms: u64 },
    /// A row released by `seen`, claimed again by its own request: the row keeps its own
    /// retention; logged as a claim, not a takeover.
    Again { seen: Lease, retention_ms: u64 },
}
