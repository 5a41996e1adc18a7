//! The service: claim, run the inner service, save.

use std::{
    convert::Infallible,
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
};

use axum::{
    body::{Body, Bytes},
    extract::Request,
    response::{IntoResponse, Response},
};
use futures_util::StreamExt;
use http::Method;
use http_body_util::BodyExt;
use idem_store::{
    http::{lease_lost, HttpResponse},
    RouteConfig,
};
use tower::Service;

use crate::{
    db::{Db, DbError},
    request::{target_of, BodyLimits, IdempotentRequest, ScopeExtractor},
    sql::now_ms,
    storage_error,
    wire::{answer_too_large, to_response, to_saved},
};

/// Largest inner answer the layer saves by default, in bytes
/// ([`super::TwoStepLayer::max_saved_bytes`]); a larger one completes the key with its status
/// and [`crate::wire::ANSWER_TOO_LARGE`] instead of its body (the work never runs twice).
pub const MAX_SAVED_BYTES: usize = 1024 * 1024;

/// What every service a [`super::TwoStepLayer`] wraps shares.
#[derive(Clone)]
pub(super) struct Shared {
    pub db: Db,
    pub route: RouteConfig,
    pub scopes: Arc<dyn ScopeExtractor>,
    pub limits: BodyLimits,
    pub max_saved_bytes: usize,
    /// How long a duplicate of a request in flight waits for its answer (`None`: 409 at once).
    pub wait: Option<std::time::Duration>,
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
    if request.method().is_safe() && request.method() != Method::TRACE {
        // GET, HEAD, OPTIONS change nothing: no key, no claim.
        let Ok(response) = inner.call(request).await;
        return response.into_response();
    }
    let (mut parts, body) = request.into_parts();
    let mut read = match IdempotentRequest::read(&parts, body, &*shared.scopes, shared.limits).await
    {
        Ok(read) => read,
        Err(refused) => return to_response(refused),
    };
    match target_of(&mut parts).await {
        Ok(target) => read.target = Some(target),
        Err(refused) => return to_response(refused),
    }
    let begun = match shared.wait {
        Some(wait) => read.begin_waiting(&shared.db, &shared.route, wait).await,
        None => read.begin(&shared.db, &shared.route).await,
    };
    let claim = match begun {
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
    let status = parts.status.as_u16();
    let (saved, answer) = match collect(body, shared.max_saved_bytes).await {
        Collected::Whole(body) => {
            let saved = HttpResponse {
                status,
                headers: parts
                    .headers
                    .iter()
                    .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
                    .collect(),
                body: body.to_vec(),
            };
            (saved, Body::from(body))
        }
        Collected::TooLarge { head, rest } => {
            // The work ran once: the key is completed with the outcome (its status) and a
            // problem in place of the body, and the caller still gets the whole answer.
            let saved = answer_too_large(status, shared.max_saved_bytes);
            let head = futures_util::stream::once(async move { Ok::<_, axum::Error>(head) });
            (
                saved,
                Body::from_stream(head.chain(rest.into_data_stream())),
            )
        }
        Collected::Broken(e) => {
            // The answer broke on its way out of the handler: what the client would get is
            // not known, so nothing is saved and a retry runs the work again.
            tracing::error!(error = %e, "inner answer broken; releasing the claim");
            let _ = shared.db.release(now_ms(), &claim).await;
            return to_response(idem_store::http::internal_error());
        }
    };
    let outcome = if status >= 500 {
        // Unknown outcome: never saved; the retry runs the work again.
        shared.db.release(now_ms(), &claim).await
    } else if status >= 400 {
        // The route's declared policy: save the refusal, or release the claim.
        shared.db.fail(now_ms(), &claim, to_saved(&saved)).await
    } else {
        shared.db.save(now_ms(), &claim, to_saved(&saved)).await
    };
    match outcome {
        // The first answer goes out whole (its cookies too); replays get the saved copy.
        Ok(()) => Response::from_parts(parts, answer),
        Err(DbError::Fenced) => to_response(lease_lost()),
        Err(e) => to_response(storage_error(&e)),
    }
}

/// An inner answer's body, read up to the save limit.
enum Collected {
    /// All of it, within the limit.
    Whole(Bytes),
    /// Over the limit: what was read (`head`, past the limit by its last chunk) and the rest,
    /// still to be sent.
    TooLarge { head: Bytes, rest: Body },
    /// The body failed.
    Broken(axum::Error),
}

async fn collect(mut body: Body, limit: usize) -> Collected {
    let mut read = Vec::new();
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                // Trailers are not saved (an answer with trailers replays without them).
                if let Ok(data) = frame.into_data() {
                    read.extend_from_slice(&data);
                    if read.len() > limit {
                        return Collected::TooLarge {
                            head: Bytes::from(read),
                            rest: body,
                        };
                    }
                }
            }
            Err(e) => return Collected::Broken(e),
        }
    }
    Collected::Whole(Bytes::from(read))
}
