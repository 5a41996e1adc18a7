//! The service: claim, run the inner service, end the claim with its answer (a save of its
//! own, or in atomic mode with the route's writes: `atomic.rs`).

use crate::db::Finish;
use std::{
    convert::Infallible,
    future::Future,
    pin::Pin,
    sync::Arc,
    task::{Context, Poll},
};

use axum::{
    extract::Request,
    response::{IntoResponse, Response},
};
use idem_store::http::lease_lost;
use tower::Service;

use super::{
    atomic,
    phases::{self, read_answer, Answer, Begun, Shared},
    recovery::Recovery,
};
use crate::{
    db::DbError,
    sql::now_ms,
    storage_error,
    wire::{to_response, to_saved},
};

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
    let (mut request, claim, point) = match phases::begin(shared, request).await {
        Begun::Pass(mut request) => {
            // Nothing to resume without a claim; a handler may still ask.
            let nothing = Recovery::new(shared.db.clone(), None, None);
            request.extensions_mut().insert(nothing);
            let Ok(response) = inner.call(request).await;
            return response.into_response();
        }
        Begun::Claimed(request, claim, point) => (request, claim, point),
        Begun::Answered(answer) => return answer,
    };
    if shared.atomic {
        let writes = match atomic::open(shared, &claim).await {
            Ok(writes) => writes,
            Err(answer) => return answer,
        };
        request.extensions_mut().insert(writes.clone());
        let Ok(response) = inner.call(request).await;
        let answer = read_answer(response.into_response(), shared.max_saved_bytes).await;
        return atomic::finish(shared, &claim, writes, answer).await;
    }
    let recovery = Recovery::new(shared.db.clone(), Some(claim.clone()), point);
    request.extensions_mut().insert(recovery);
    let Ok(response) = inner.call(request).await;
    let (saved, parts, body) =
        match read_answer(response.into_response(), shared.max_saved_bytes).await {
            Answer::Read { saved, parts, body } => (saved, parts, body),
            Answer::Broken(e) => {
                tracing::error!(error = %e, "inner answer broken; releasing the claim");
                let _ = shared.db.finish(now_ms(), &claim, Finish::Release).await;
                return to_response(idem_store::http::internal_error());
            }
        };
    let outcome = if saved.status >= 500 {
        // Unknown outcome: never saved; the retry runs the work again.
        shared.db.finish(now_ms(), &claim, Finish::Release).await
    } else if saved.status >= 400 {
        // The route's declared policy: save the refusal, or release the claim.
        shared
            .db
            .finish(now_ms(), &claim, claim.failed(to_saved(&saved)))
            .await
    } else {
        shared
            .db
            .finish(now_ms(), &claim, Finish::Commit(to_saved(&saved)))
            .await
    };
    match outcome {
        // The first answer goes out whole (its cookies too); replays get the saved copy.
        Ok(()) => Response::from_parts(parts, body),
        Err(DbError::Fenced) => to_response(lease_lost()),
        Err(e) => to_response(storage_error(&e)),
    }
}
