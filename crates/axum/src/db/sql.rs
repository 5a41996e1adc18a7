//! The SQL of the claim table, one text per statement, shared by SQLite and PostgreSQL
//! (both read `$1`-style parameters). Only the fencing token and the clock differ; each
//! backend's [`Dialect`] fills those in once, at open.
//!
//! Every fenced write names the caller's token in its `WHERE`: zero rows changed is how a
//! zombie learns it lost its lease.
//!
//! A released claim keeps its row (schema version 3): `status` stays `'in_flight'` and
//! `released_token` names the lease that released it, so the row is released while
//! `released_token = token`. A fenced write also requires the row not to be
//! released (a release is final for its lease); a takeover, or a claim again of a released
//! row by its own request, moves `token` on and clears `released_token`. A server of schema
//! version 2 sees a released row as an in-flight claim (see the migration's comment).
//!
//! Texts are kept as `Arc<str>` and handed to sqlx as clones: a `&str` that is not
//! `'static` would be copied into a new allocation for every statement sent.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
};

use super::{write::Shape, Clock, DbError, RouteInsert};

/// The columns of a claim, in the order [`super::row`] reads them.
const COLUMNS: &str = "c.fingerprint, c.on_error, c.status, c.token, c.locked_at, \
     c.created_at, c.expires_at, c.retention_ms, c.response_status, c.response_content_type, \
     c.response_headers, c.response_body, c.released_token";

/// The row is not a released claim: no lease released it, or one did and the row was taken
/// over since (by a server of schema version 2, whose takeover leaves `released_token`).
/// `IS DISTINCT FROM`, because `<>` with a `NULL` `released_token` is `NULL`, not true.
macro_rules! not_released {
    () => {
        "released_token IS DISTINCT FROM token"
    };
}

/// The statements, with the backend's token and clock spelled in.
#[derive(Debug)]
pub(crate) struct Dialect {
    /// One round trip: the row of ($1 scope, $2 key), if any, and `now_ms` (the caller's
    /// $3, or the database clock, which binds no $3). A row is always returned; an absent
    /// claim reads as NULLs.
    pub read: Arc<str>,
    /// Whether [`read`](Self::read) takes the caller's clock as $3.
    pub read_binds_now: bool,
    /// Bumps the SQLite token counter inside the write transaction (`None`: the token
    /// expression draws from a sequence itself).
    pub bump_token: Option<&'static str>,
    /// Insert-if-absent: $1 scope, $2 key, $3 fingerprint, $4 on_error, $5 now, $6
    /// expires_at, $7 retention_ms. Returns the new `token` and, read in the same statement,
    /// the recovery `point` of ($1, $2, $3) if an earlier worker of this request left one;
    /// no row if the key was claimed meanwhile.
    pub claim: Arc<str>,
    /// Compare-and-set takeover of a stale lease, or claim again of a row its lease
    /// released (the same write: the row's last lease is replaced, and the row is no longer
    /// released): $1 scope, $2 key, $3 fingerprint, $4 seen token, $5 now, $6 expires_at.
    /// Returns `token` and `point` as [`claim`](Self::claim) does; no row if the lease
    /// changed meanwhile. Since a release is final for its lease, a row under token $4 that
    /// was released between the read and this write is what a claim again would take: the
    /// outcome is the same.
    pub take_over: Arc<str>,
    /// The database clock, in milliseconds.
    pub now: Arc<str>,
    /// The next fencing token, as an SQL expression.
    pub token: &'static str,
}

impl Dialect {
    pub(crate) fn sqlite(clock: Clock) -> Self {
        Self::new(
            clock,
            "(SELECT last FROM idem_lease_token)",
            Some("UPDATE idem_lease_token SET last = last + 1"),
            "CAST(unixepoch('subsec') * 1000 AS INTEGER)",
        )
    }

    pub(crate) fn postgres(clock: Clock) -> Self {
        Self::new(
            clock,
            "nextval('idem_lease_token')",
            None,
            "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
        )
    }

    fn new(
        clock: Clock,
        token: &'static str,
        bump_token: Option<&'static str>,
        db_now: &str,
    ) -> Self {
        let now = match clock {
            Clock::Caller => "CAST($3 AS BIGINT)",
            Clock::Database => db_now,
        };
        Self {
            read: format!(
                "SELECT {COLUMNS}, {now} AS now_ms FROM (SELECT 1 AS one) AS o \
                 LEFT JOIN idem_claims AS c ON c.scope = $1 AND c.key = $2"
            )
            .into(),
            read_binds_now: clock == Clock::Caller,
            bump_token,
            claim: format!(
                "INSERT INTO idem_claims (scope, key, fingerprint, on_error, status, token, \
                 locked_at, created_at, expires_at, retention_ms) \
                 VALUES ($1, $2, $3, $4, 'in_flight', {token}, $5, $5, $6, $7) \
                 ON CONFLICT (scope, key) DO NOTHING RETURNING token, {RECOVERY_POINT}"
            )
            .into(),
            take_over: format!(
                "UPDATE idem_claims SET token = {token}, locked_at = $5, expires_at = $6, \
                 released_token = NULL \
                 WHERE scope = $1 AND key = $2 AND status = 'in_flight' AND token = $4 \
                 RETURNING token, {RECOVERY_POINT}"
            )
            .into(),
            now: format!("SELECT {db_now}").into(),
            token,
        }
    }
}

/// PostgreSQL: a fresh claim, the route's first row and its id as the recovery point, in
/// one statement ([`Db::begin_with`](super::Db::begin_with)). The route's parameters come
/// first, `$1` to `$k`; then scope, key, fingerprint, on_error, now, expires_at and
/// retention_ms. The claim is inserted only if the key is free and this request (scope,
/// key, fingerprint) has no recovery point to resume; the route's row only if the claim was;
/// the recovery point only if the row was. Returns `token` and the row's `id`, or no row if
/// nothing was written.
pub(crate) fn claim_creating(token: &str, first: &RouteInsert<'_>) -> Result<String, DbError> {
    let route = first.parts()?;
    let p = |i: usize| format!("${}", first.params().len() + i);
    let (scope, key, fp, on_error, now, expires_at, retention) =
        (p(1), p(2), p(3), p(4), p(5), p(6), p(7));
    Ok(format!(
        "WITH idem AS (INSERT INTO idem_claims (scope, key, fingerprint, on_error, status, \
         token, locked_at, created_at, expires_at, retention_ms) \
         SELECT {scope}, {key}, {fp}, {on_error}, 'in_flight', {token}, {now}, {now}, \
         {expires_at}, {retention} \
         WHERE NOT EXISTS (SELECT 1 FROM idem_recovery AS r \
            WHERE r.scope = {scope} AND r.key = {key} AND r.fingerprint = {fp}) \
         ON CONFLICT (scope, key) DO NOTHING RETURNING token), \
         route AS (INSERT INTO {table} ({columns}) SELECT {values} FROM idem \
            RETURNING {id} AS id), \
         point AS (INSERT INTO idem_recovery (scope, key, fingerprint, point, expires_at) \
            SELECT {scope}, {key}, {fp}, convert_to(CAST(route.id AS TEXT), 'UTF8'), \
            {expires_at} FROM route \
            ON CONFLICT (scope, key, fingerprint) \
            DO UPDATE SET point = excluded.point, expires_at = excluded.expires_at) \
         SELECT idem.token, route.id FROM idem, route",
        table = route.table,
        columns = route.columns,
        values = route.placeholders,
        id = route.id,
    ))
}

/// The rows [`idem_store::Record::is_expired`] at $now under $lock_ms: past retention and
/// no live claim (done, released — `released_token = token`; `NULL = token` is not true —
/// or in flight under a stale lease).
macro_rules! expired {
    ($now:literal, $lock_ms:literal) => {
        concat!(
            "expires_at <= ",
            $now,
            " AND (status = 'done' OR released_token = token \
             OR locked_at + ",
            $lock_ms,
            " <= ",
            $now,
            ")"
        )
    };
}

/// Deletes the row of ($1, $2) if it is past retention at $3 and no live claim under
/// $4 = lock_ms ([`idem_store::Record::is_expired`]).
pub(crate) const CLEAR_EXPIRED: &str = concat!(
    "DELETE FROM idem_claims WHERE scope = $1 AND key = $2 AND ",
    expired!("$3", "$4")
);

/// The recovery point of ($1 scope, $2 key, $3 fingerprint) as a scalar subquery, so the
/// claim's or takeover's own statement returns it (no second round trip).
const RECOVERY_POINT: &str = "(SELECT r.point FROM idem_recovery AS r \
     WHERE r.scope = $1 AND r.key = $2 AND r.fingerprint = $3) AS point";

/// The fenced commit: ($1, $2) done with the response, if still in flight under token $3
/// and not released by it.
pub(crate) const COMMIT: &str = concat!(
    "UPDATE idem_claims SET status = 'done', expires_at = $4, response_status = $5, \
     response_content_type = $6, response_headers = $7, response_body = $8 \
     WHERE scope = $1 AND key = $2 AND status = 'in_flight' AND token = $3 AND ",
    not_released!()
);

/// The fenced release: mark ($1, $2) released by token $3, if still in flight under it and
/// not released already. The row, its fingerprint and its `expires_at` stay.
pub(crate) const RELEASE: &str = concat!(
    "UPDATE idem_claims SET released_token = token \
     WHERE scope = $1 AND key = $2 AND status = 'in_flight' AND token = $3 AND ",
    not_released!()
);

/// The fenced renewal: restart the lease of ($1, $2) at $4 (and its retention: expires_at
/// $5), if still in flight under token $3 and not released. The token stays: every later
/// fenced write of the holder still matches.
pub(crate) const RENEW: &str = concat!(
    "UPDATE idem_claims SET locked_at = $4, expires_at = $5 \
     WHERE scope = $1 AND key = $2 AND status = 'in_flight' AND token = $3 AND ",
    not_released!()
);

/// [`COMMIT`] with its parameters from `$(first)` on (after a route's own), `RETURNING 1`.
pub(crate) fn commit_from(first: usize) -> String {
    let p = |i: usize| first + i - 1;
    format!(
        "UPDATE idem_claims SET status = 'done', expires_at = ${}, response_status = ${}, \
         response_content_type = ${}, response_headers = ${}, response_body = ${} \
         WHERE scope = ${} AND key = ${} AND status = 'in_flight' AND token = ${} \
         AND {} RETURNING 1",
        p(4),
        p(5),
        p(6),
        p(7),
        p(8),
        p(1),
        p(2),
        p(3),
        not_released!()
    )
}

/// [`RELEASE`] with its parameters from `$(first)` on, `RETURNING 1`.
pub(crate) fn release_from(first: usize) -> String {
    format!(
        "UPDATE idem_claims SET released_token = token WHERE scope = ${} AND key = ${} \
         AND status = 'in_flight' AND token = ${} AND {} RETURNING 1",
        first,
        first + 1,
        first + 2,
        not_released!()
    )
}

/// One batch of the prune: at most $3 rows past retention at $1 and no live claim under
/// $2 = lock_ms. The condition is checked again on the rows themselves, so a row that a
/// concurrent takeover refreshed between the inner select and the delete stays.
pub(crate) const PRUNE_BATCH: &str = concat!(
    "DELETE FROM idem_claims WHERE (scope, key) IN (SELECT scope, key FROM idem_claims WHERE ",
    expired!("$1", "$2"),
    " LIMIT $3) AND ",
    expired!("$1", "$2"),
    " RETURNING scope, key"
);

/// One batch of recovery points past retention at $1 whose key holds no claim in flight or
/// released (a released row's own request resumes its point; at most $2).
pub(crate) const PRUNE_RECOVERY_BATCH: &str = "DELETE FROM idem_recovery \
     WHERE (scope, key, fingerprint) IN (SELECT r.scope, r.key, r.fingerprint \
        FROM idem_recovery AS r WHERE r.expires_at <= $1 AND NOT EXISTS ( \
            SELECT 1 FROM idem_claims AS c WHERE c.scope = r.scope AND c.key = r.key \
            AND c.status = 'in_flight') LIMIT $2)";

/// Hold ($1, $2) for the rest of the transaction if it is still in flight under token $3 and
/// not released by it: a write that changes nothing, so it counts the row when the lease is
/// ours, and on PostgreSQL locks it until the commit (a takeover waits for it).
pub(crate) const HOLD: &str = concat!(
    "UPDATE idem_claims SET token = token \
     WHERE scope = $1 AND key = $2 AND status = 'in_flight' AND token = $3 AND ",
    not_released!()
);

/// The recovery point of ($1, $2, $3), read again after a takeover on PostgreSQL (see
/// `Db::claim`).
pub(crate) const RECOVERY_READ: &str =
    "SELECT point FROM idem_recovery WHERE scope = $1 AND key = $2 AND fingerprint = $3";

/// Write (or replace) the recovery point of ($1, $2, $3): $4 point, $5 expires_at.
pub(crate) const RECOVERY_WRITE: &str = "INSERT INTO idem_recovery \
     (scope, key, fingerprint, point, expires_at) VALUES ($1, $2, $3, $4, $5) \
     ON CONFLICT (scope, key, fingerprint) \
     DO UPDATE SET point = excluded.point, expires_at = excluded.expires_at";

/// The rows of scope $1 with key after $2, in key order, at most $3.
pub(crate) const ROWS: &str = "SELECT c.scope, c.key, c.fingerprint, c.on_error, c.status, \
     c.token, c.locked_at, c.created_at, c.expires_at, c.retention_ms, c.response_status, \
     c.response_content_type, c.response_headers, c.response_body, c.released_token \
     FROM idem_claims AS c WHERE c.scope = $1 AND c.key > $2 ORDER BY c.key LIMIT $3";

/// Statements composed from a route's parts ([`claim_creating`], the fenced commit with a
/// route's writes), built once per shape (one per route write the statement carries) and shared: every request of a route sends the
/// same text, and composing it again for each would be an allocation and a copy per request.
#[derive(Debug, Default)]
pub(crate) struct Composed(Mutex<HashMap<Vec<Shape>, Arc<str>>>);

impl Composed {
    /// The text of `shape`, built by `build` the first time (a refused build is not kept:
    /// the next call refuses it again).
    pub(crate) fn get(
        &self,
        shape: Vec<Shape>,
        build: impl FnOnce() -> Result<String, DbError>,
    ) -> Result<Arc<str>, DbError> {
        // A poisoned lock only means a panic elsewhere while it was held; the map is still
        // whole (an insert either happened or not).
        let mut map = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(text) = map.get(&shape) {
            return Ok(Arc::clone(text));
        }
        let text: Arc<str> = build()?.into();
        map.insert(shape, Arc::clone(&text));
        Ok(text)
    }
}
