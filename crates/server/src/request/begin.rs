//! An idempotent route's first step after reading the request: hand it to the store and turn
//! every answer that is not "run the work" into its response.

use idem_store::{
    http::{internal_error, problem_for, response_for, HttpResponse},
    RequestError, RouteConfig,
};

use super::IdempotentRequest;
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
        let request = db::Request {
            scope: &self.scope,
            key: self.key.as_deref(),
            body: &self.body,
            route,
        };
        match db.begin(now_ms(), request).await {
            Ok(Begin::Execute(claim)) => Ok(Some(claim)),
            Ok(Begin::Unkeyed) => Ok(None),
            // `Answer` holds only decisions that have a response; a bug otherwise.
            Ok(Begin::Answer(decision)) => {
                Err(response_for(&decision).unwrap_or_else(internal_error))
            }
            Err(e) => Err(storage_error(&e)),
        }
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
        let request = db::Request {
            scope: &self.scope,
            key: self.key.as_deref(),
            body: &self.body,
            route,
        };
        match db.begin_with(now_ms(), request, first).await {
            Ok(BeginWith::Answer(decision)) => {
                Err(response_for(&decision).unwrap_or_else(internal_error))
            }
            Ok(BeginWith::Unkeyed) => Err(problem_for(&RequestError::MissingKey)),
            Ok(begun) => Ok(begun),
            Err(e) => Err(storage_error(&e)),
        }
    }
}
