//! An idempotent route's first step after reading the request: hand it to the store and turn
//! every answer that is not "run the work" into its response.

use idem_store::{
    http::{internal_error, problem_for, response_for, HttpResponse},
    RequestError, RouteConfig,
};

use std::{future::Future, time::Duration};

use tokio::time::Instant;

use super::IdempotentRequest;

/// The first pause of [`wait_through_conflicts`] before it reads the row again.
const FIRST_PAUSE: Duration = Duration::from_millis(10);
/// Its longest pause: a waiting duplicate hears of the first answer within this.
const LONGEST_PAUSE: Duration = Duration::from_millis(100);
use crate::{
    db::{self, Begin, BeginWith, ClaimTx, Db, RouteInsert},
    sql::now_ms,
    storage_error,
};

impl IdempotentRequest {
    /// The store's decision on `route`: `Ok(Some(claim))` to run the work (the claim's
    /// transaction is open), `Ok(None)` for a request without a key on an optional-key
    /// route, `Err(response)` for everything answered without the work (replay, 409, 422,
    /// 400, 413, and 503 when the database is away).
    pub async fn begin(
        &self,
        db: &Db,
        route: &RouteConfig,
    ) -> Result<Option<ClaimTx>, HttpResponse> {
        match db.begin(now_ms(), self.to_store(route)).await {
            Ok(Begin::Execute(claim)) => Ok(Some(claim)),
            Ok(Begin::Unkeyed) => Ok(None),
            // `Answer` holds only decisions that have a response; a bug otherwise.
            Ok(Begin::Answer(decision)) => {
                Err(response_for(&decision).unwrap_or_else(internal_error))
            }
            Err(e) => Err(storage_error(&e)),
        }
    }

    /// This request as the table reads it, on `route`.
    fn to_store<'a>(&'a self, route: &'a RouteConfig) -> db::Request<'a> {
        db::Request {
            scope: &self.scope,
            key: self.key.as_deref(),
            first_sent: self.first_sent,
            body: &self.body,
            route,
            target: self.target.as_ref(),
        }
    }

    /// [`begin`](Self::begin), but a request whose key is in flight waits, up to `wait`, for
    /// the first one to finish, and gets its answer (the replay) instead of a 409 (see
    /// [`wait_through_conflicts`]).
    pub async fn begin_waiting(
        &self,
        db: &Db,
        route: &RouteConfig,
        wait: Duration,
    ) -> Result<Option<ClaimTx>, HttpResponse> {
        wait_through_conflicts(Some(wait), || self.begin(db, route)).await
    }

    /// [`begin`](Self::begin) for a route that requires a key and takes JSON parameters:
    /// [`parse`](Self::parse), then the decision.
    pub async fn begin_parsed<P>(
        &self,
        db: &Db,
        route: &RouteConfig,
        parse: impl FnOnce(&[u8]) -> Result<P, HttpResponse>,
    ) -> Result<(ClaimTx, P), HttpResponse> {
        let params = self.parse(route, parse)?;
        match self.begin(db, route).await? {
            Some(claim) => Ok((claim, params)),
            // The key is there, so the store never answers "unkeyed".
            None => Err(problem_for(&RequestError::MissingKey)),
        }
    }

    /// The parameters of a route that requires a key and takes JSON: the key must be there,
    /// the store's JSON rules (invalid JSON, duplicate members) come first, then `parse` (a
    /// 400 for JSON that is not the parameters). Nothing is decided yet.
    pub fn parse<P>(
        &self,
        route: &RouteConfig,
        parse: impl FnOnce(&[u8]) -> Result<P, HttpResponse>,
    ) -> Result<P, HttpResponse> {
        if self.key.is_none() {
            return Err(problem_for(&RequestError::MissingKey));
        }
        if let Err(e) = idem_store::fingerprint(&route.operation, &self.body) {
            return Err(problem_for(&e));
        }
        parse(&self.body)
    }

    /// [`begin_with`](Self::begin_with) in wait mode when `wait` is set (see
    /// [`wait_through_conflicts`]).
    pub async fn begin_with_waiting(
        &self,
        db: &Db,
        route: &RouteConfig,
        first: &RouteInsert<'_>,
        wait: Option<Duration>,
    ) -> Result<BeginWith, HttpResponse> {
        wait_through_conflicts(wait, || self.begin_with(db, route, first)).await
    }

    /// The store's decision on a route whose work starts by creating `first`
    /// ([`Db::begin_with`]): `Ok(Created{..})` or `Ok(Resume(..))` to run the work,
    /// `Err(response)` for everything answered without it (as [`begin`](Self::begin); a
    /// request without a key is a 400 here: parse it with [`parse`](Self::parse) first).
    pub async fn begin_with(
        &self,
        db: &Db,
        route: &RouteConfig,
        first: &RouteInsert<'_>,
    ) -> Result<BeginWith, HttpResponse> {
        match db.begin_with(now_ms(), self.to_store(route), first).await {
            Ok(BeginWith::Answer(decision)) => {
                Err(response_for(&decision).unwrap_or_else(internal_error))
            }
            Ok(BeginWith::Unkeyed) => Err(problem_for(&RequestError::MissingKey)),
            Ok(begun) => Ok(begun),
            Err(e) => Err(storage_error(&e)),
        }
    }
}

/// Wait mode: `begin` (one decision) again while it answers 409 (the key in flight, or the row
/// contended), up to `wait` (`None`: once), at pauses of 10 ms doubling to 100 ms, so a
/// duplicate gets the first request's answer (the replay) instead of a 409, or the claim when
/// the first worker's lease went stale. Reading the row again works the same whichever process
/// holds the claim: on SQLite and across servers sharing PostgreSQL, with no connection held
/// while waiting. Past `wait`, the 409 with `Retry-After`. Dropped while it waits, nothing was
/// written (each try is one whole decision).
pub async fn wait_through_conflicts<T, F>(
    wait: Option<Duration>,
    mut begin: impl FnMut() -> F,
) -> Result<T, HttpResponse>
where
    F: Future<Output = Result<T, HttpResponse>>,
{
    let deadline = wait.map(|wait| Instant::now() + wait);
    let mut pause = FIRST_PAUSE;
    loop {
        match begin().await {
            Err(conflict)
                if conflict.status == 409
                    && deadline.is_some_and(|d| Instant::now() + pause <= d) =>
            {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(LONGEST_PAUSE);
            }
            other => return other,
        }
    }
}
