//! The service: claim, run the inner service, save.

use std::{
    convert::Infallible,
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
};

use axum::{
    body::Body,
    extract::Request,
    response::{IntoResponse, Response},
};
use http_body_util::{BodyExt, Limited};
use idem_store::{
    http::{lease_lost, HttpResponse},
    RouteConfig,
};
use tower::Service;

use crate::{
    db::{Db, DbError},
    request::{BodyLimits, IdempotentRequest, ScopeExtractor},
    sql::now_ms,
    storage_error,
    wire::{to_response, to_saved},
};

/// Largest inner answer the layer saves, in bytes; a larger one releases the claim and
/// answers 500, since it could not be replayed.
pub const MAX_SAVED_BYTES: usize = 1024 * 1024;

/// What every service a [`super::TwoStepLayer`] wraps shares.
pub(super) struct Shared {
    pub db: Db,
    pub route: RouteConfig,
    pub scopes: Box<dyn ScopeExtractor>,
    pub limits: BodyLimits,
}

/// A service made idempotent by a two-step save. Built by [`super::TwoStepLayer`].
#[derive(Clone)]
pub struct TwoStep<S> {
    inner: S,
    shared: Arc<Shared>,
}

impl<S> TwoStep<S> {
    pub(super) fn new(inner: S, shared: Arc<Shared>) -> Self {
        Self { inner, shared }
    }
}

impl<S> Service<Request> for TwoStep<S>
where
    S: Service<Request, Error = Infallible> + Clone + Send + 'static,
    S::Response: IntoResponse,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // The clone that was polled ready does the work; a fresh clone stays for next time.
        let clone = self.inner.clone();
        let inner = std::mem::replace(&mut self.inner, clone);
        let shared = self.shared.clone();
        Box::pin(async move { Ok(handle(inner, &shared, request).await) })
    }
}

async fn handle<S>(mut inner: S, shared: &Shared, request: Request) -> Response
where
    S: Service<Request, Error = Infallible>,
    S::Response: IntoResponse,
{
    let (parts, body) = request.into_parts();
    let read = match IdempotentRequest::read(&parts, body, &*shared.scopes, shared.limits).await {
        Ok(read) => read,
        Err(refused) => return to_response(refused),
    };
    let claim = match read.begin(&shared.db, &shared.route).await {
        Ok(Some(claim_tx)) => match claim_tx.commit().await {
            Ok(claim) => Some(claim),
            Err(e) => return to_response(storage_error(&e)),
        },
        Ok(None) => None,
        Err(answer) => return to_response(answer),
    };
    let request = Request::from_parts(parts, Body::from(read.body));
    let Ok(response) = inner.call(request).await;
    let response = response.into_response();
    let Some(claim) = claim else {
        return response; // An unkeyed request on an optional-key route: nothing to save.
    };

    let (parts, body) = response.into_parts();
    let body = match Limited::new(body, MAX_SAVED_BYTES).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            tracing::error!(error = %e, "inner answer too large or broken; releasing the claim");
            let _ = shared.db.release(now_ms(), &claim).await;
            return to_response(idem_store::http::internal_error());
        }
    };
    let status = parts.status.as_u16();
    let first = HttpResponse {
        status,
        headers: parts
            .headers
            .iter()
            .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
            .collect(),
        body: body.to_vec(),
    };
    let outcome = if status >= 500 {
        // Unknown outcome: never saved; the retry runs the work again.
        shared.db.release(now_ms(), &claim).await
    } else if status >= 400 {
        // The route's declared policy: save the refusal, or release the claim.
        shared.db.fail(now_ms(), &claim, to_saved(&first)).await
    } else {
        shared.db.save(now_ms(), &claim, to_saved(&first)).await
    };
    match outcome {
        // The first answer goes out whole (its cookies too); replays get the saved copy.
        Ok(()) => Response::from_parts(parts, Body::from(body)),
        Err(DbError::Fenced) => to_response(lease_lost()),
        Err(e) => to_response(storage_error(&e)),
    }
}
