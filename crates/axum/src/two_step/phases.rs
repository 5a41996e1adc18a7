//! What both modes of the layer do around the inner service: before it, read and claim the
//! request (or answer it without the work); after it, read its answer up to the save limit
//! and say what is saved for replay. The modes differ only in how the claim ends
//! (`service.rs`: a save of its own; `atomic.rs`: the route's writes and the save in one
//! fenced transaction).

use std::{sync::Arc, time::Duration};

use axum::{
    body::{Body, Bytes},
    extract::Request,
    response::Response,
};
use futures_util::{future::BoxFuture, StreamExt};
use http::{response::Parts, Method};
use http_body_util::BodyExt;
use idem_store::{
    http::{problem_for, HttpResponse},
    BodyFields, RequestError, RequestTarget, RouteConfig,
};

use crate::{
    db::{Claim, Db},
    request::{discard_body, target_of, BodyLimits, IdempotentRequest, ScopeExtractor},
    storage_error,
    wire::{answer_too_large, to_response},
};

/// Largest inner answer the layer saves by default, in bytes
/// ([`super::TwoStepLayer::max_saved_bytes`]); a larger one completes the key with its status
/// and [`crate::wire::ANSWER_TOO_LARGE`] instead of its body (the work never runs twice).
pub const MAX_SAVED_BYTES: usize = 1024 * 1024;

/// What every service a layer wraps shares.
#[derive(Clone)]
pub(super) struct Shared {
    pub db: Db,
    pub route: RouteConfig,
    pub scopes: Arc<dyn ScopeExtractor>,
    pub limits: BodyLimits,
    pub max_saved_bytes: usize,
    /// How long a duplicate of a request in flight waits for its answer (`None`: 409 at once).
    pub wait: Option<Duration>,
    /// Atomic mode: the handler's writes commit with the saved answer (`atomic.rs`).
    pub atomic: bool,
    /// Which body fields the fingerprint binds.
    pub fields: BodyFields,
    /// The application's own extractor of the tenant, if it gave one
    /// ([`super::TwoStepLayer::tenant_from`]).
    pub tenant_from: Option<TenantFrom>,
}

/// The application's extractor of the tenant, run on the request's head: the tenant, or the
/// extractor's rejection as the application's response.
pub(super) type TenantFrom = Arc<
    dyn for<'p> Fn(&'p mut http::request::Parts) -> BoxFuture<'p, Result<Arc<str>, Response>>
        + Send
        + Sync,
>;

/// The tenant [`TenantFrom`] found, left in the request's extensions for the scope extractor
/// (`FromExtension`).
#[derive(Clone)]
pub(super) struct ExtractedTenant(pub Arc<str>);

/// A request after the claim step.
pub(super) enum Begun {
    /// Run the inner service with nothing to save: a safe method (`GET`, `HEAD`, `OPTIONS`:
    /// no key, no claim), or no key on an optional-key route.
    Pass(Request),
    /// The key is this request's: run the inner service, then end the claim. With the
    /// recovery point an earlier worker of this request saved, if any.
    Claimed(Request, Claim, Option<Vec<u8>>),
    /// Answered without the work: a replay, 409, 422, 400, 401, 413, or 503.
    Answered(Response),
}

/// Read the request (scope, key, body, target) and claim its key.
pub(super) async fn begin(shared: &Shared, request: Request) -> Begun {
    if request.method().is_safe() && request.method() != Method::TRACE {
        return Begun::Pass(request);
    }
    let (mut parts, body) = request.into_parts();
    if let Some(tenant_from) = &shared.tenant_from {
        match tenant_from(&mut parts).await {
            Ok(tenant) => {
                parts.extensions.insert(ExtractedTenant(tenant));
            }
            Err(rejection) => {
                // The application's refusal, as it wrote it; the body is drained so the
                // connection stays usable (as `IdempotentRequest::read` does).
                discard_body(&parts.headers, body, shared.limits).await;
                return Begun::Answered(rejection);
            }
        }
    }
    let mut read = match IdempotentRequest::read(&parts, body, &*shared.scopes, shared.limits).await
    {
        Ok(read) => read,
        Err(refused) => return Begun::Answered(to_response(refused)),
    };
    match target_of(&mut parts).await {
        Ok(target) => {
            read.target = Some(RequestTarget {
                fields: shared.fields.clone(),
                ..target
            })
        }
        Err(refused) => return Begun::Answered(to_response(refused)),
    }
    let begun = match shared.wait {
        Some(wait) => read.begin_waiting(&shared.db, &shared.route, wait).await,
        None => read.begin(&shared.db, &shared.route).await,
    };
    let claim = match begun {
        Ok(Some(claim_tx)) => {
            let point = claim_tx.recovery().map(<[u8]>::to_vec);
            match claim_tx.commit().await {
                Ok(claim) => Some((claim, point)),
                Err(e) => return Begun::Answered(to_response(storage_error(&e))),
            }
        }
        Ok(None) => None,
        Err(answer) => return Begun::Answered(to_response(answer)),
    };
    let request = Request::from_parts(parts, Body::from(read.body));
    match claim {
        Some((claim, point)) => Begun::Claimed(request, claim, point),
        // Atomic mode has no transaction to give a request without a key.
        None if shared.atomic => {
            Begun::Answered(to_response(problem_for(&RequestError::MissingKey)))
        }
        None => Begun::Pass(request),
    }
}

/// The inner service's answer, read for saving.
pub(super) enum Answer {
    /// `saved` is what a replay gets (the answer, or [`answer_too_large`] in place of a body
    /// over the limit); the caller gets `parts` and `body`, whole.
    Read {
        saved: HttpResponse,
        parts: Parts,
        body: Body,
    },
    /// Its body failed on the way out of the handler: what the client would get is not
    /// known, so nothing may be saved and a retry runs the work again.
    Broken(axum::Error),
}

/// Read `response` up to `limit` bytes.
pub(super) async fn read_answer(response: Response, limit: usize) -> Answer {
    let (parts, body) = response.into_parts();
    let status = parts.status.as_u16();
    let (saved, body) = match collect(body, limit).await {
        Collected::Whole(body) => {
            let headers = parts
                .headers
                .iter()
                .filter_map(|(n, v)| Some((n.as_str().to_owned(), v.to_str().ok()?.to_owned())))
                .collect();
            let saved = HttpResponse {
                status,
                headers,
                body: body.to_vec(),
            };
            (saved, Body::from(body))
        }
        Collected::TooLarge { head, rest } => {
            // The work ran once: the key is completed with the outcome (its status) and a
            // problem in place of the body, and the caller still gets the whole answer. (Should
            // the rest of the body fail on its way, the caller's answer is cut short; the key
            // is already completed, and a retry is told the answer was too large.)
            let head = futures_util::stream::once(async move { Ok::<_, axum::Error>(head) });
            let body = Body::from_stream(head.chain(rest.into_data_stream()));
            (answer_too_large(status, limit), body)
        }
        Collected::Broken(e) => return Answer::Broken(e),
    };
    Answer::Read { saved, parts, body }
}

/// An answer's body, read up to the save limit.
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

/// An extractor's value that the layer put in the request (`Writes`, `Recovery`), or 500 and a
/// log line when the route is not behind the layer in the mode that provides it: a wiring bug
/// of the server, not of the request.
// The error is the extractor's rejection, an axum `Response` as axum's own extractors return.
#[allow(clippy::result_large_err)]
pub(super) fn from_layer<T: Clone + Send + Sync + 'static>(
    parts: &http::request::Parts,
    wiring: &'static str,
) -> Result<T, Response> {
    parts.extensions.get::<T>().cloned().ok_or_else(|| {
        tracing::error!("{wiring}");
        to_response(idem_store::http::internal_error())
    })
}
