//! The layer: builds what every wrapped service shares and wraps each in [`TwoStep`].

use std::{sync::Arc, time::Duration};

use idem_store::{BodyFields, RouteConfig};
use tower::Layer;

use axum::{extract::FromRequestParts, response::IntoResponse};
use http::request::Parts;

use super::{
    phases::{ExtractedTenant, Shared, TenantFrom, MAX_SAVED_BYTES},
    service::TwoStep,
};
use crate::{
    db::Db,
    request::{BodyLimits, FromExtension, ScopeExtractor},
};

/// The longest [`TwoStepLayer::wait_for_first`]: below idem's SDK's 10 s attempt timeout.
pub const MAX_WAIT: Duration = Duration::from_secs(9);

/// Wraps a service in [`TwoStep`]. See the [module docs](super) for when it is safe.
#[derive(Clone)]
pub struct TwoStepLayer {
    pub(super) shared: Arc<Shared>,
}

impl TwoStepLayer {
    /// Claims in `db` under `route`, scopes from `scopes`, bodies within `limits`.
    pub fn new(
        db: Db,
        route: RouteConfig,
        scopes: impl ScopeExtractor,
        limits: BodyLimits,
    ) -> Self {
        let shared = Arc::new(Shared {
            db,
            route,
            scopes: Arc::new(scopes),
            limits,
            max_saved_bytes: MAX_SAVED_BYTES,
            wait: None,
            atomic: false,
            fields: BodyFields::All,
            tenant_from: None,
        });
        Self { shared }
    }

    /// The largest answer saved for replay, in bytes (default [`MAX_SAVED_BYTES`], 1 MiB).
    /// A larger answer still goes to its caller whole, streamed; the key is completed with
    /// its status and the problem [`ANSWER_TOO_LARGE`](crate::wire::ANSWER_TOO_LARGE) in place of its body, so a retry is
    /// told what happened and the work never runs twice. (A streaming answer is read up to
    /// this limit before it is sent on: an endless stream is never saved, and a retry of it
    /// gets that problem.)
    pub fn max_saved_bytes(self, bytes: usize) -> Self {
        self.with(|shared| shared.max_saved_bytes = bytes)
    }

    /// Wait mode: a duplicate of a request still in flight waits up to `wait` for the first to
    /// finish and gets its answer (the replay), instead of a 409 it would have to retry. Past
    /// the wait, the 409 with `Retry-After` as without it. Capped at [`MAX_WAIT`] (9 s), below
    /// idem's SDK's 10 s attempt timeout: a wait the client has stopped waiting for is wasted.
    /// Works across servers sharing PostgreSQL (the waiting request reads the row again at
    /// 10 to 100 ms pauses; see `IdempotentRequest::begin_waiting`).
    pub fn wait_for_first(self, wait: Duration) -> Self {
        self.with(|shared| shared.wait = Some(wait.min(MAX_WAIT)))
    }

    /// Atomic mode: the handler's own writes go into the transaction that ends the claim
    /// (the [`Writes`](super::Writes) extractor) and commit with its saved answer, fenced, or
    /// roll back with a 5xx (the claim then released). For work that writes this database
    /// only; work that calls another system keeps the two-step save (see the module docs).
    pub fn atomic(self) -> Self {
        self.with(|shared| shared.atomic = true)
    }

    /// Which body fields a key is bound to (every one by default): leave out a field a
    /// retry may legitimately reword (`BodyFields::Except(vec!["note".into()])`), or name the
    /// ones that make the request (`BodyFields::Only(…)`). Top-level members of a JSON object
    /// body, pairs of a form body; other bodies are bound whole. The rule holds for every route
    /// behind this layer: give a route with other fields a layer of its own (an `Only` list
    /// that names none of another route's fields would bind none of them).
    pub fn fingerprint_fields(self, fields: BodyFields) -> Self {
        self.with(|shared| shared.fields = fields)
    }

    /// The tenant from any axum extractor of the application's (its own `AuthUser`, a typed
    /// header): `read` names the tenant of what the extractor gave. The extractor runs first,
    /// on every request the layer claims for; its rejection is the answer, as the application
    /// wrote it. This replaces the `scopes` given to [`new`](Self::new).
    pub fn tenant_from<E, F>(self, read: F) -> Self
    where
        E: FromRequestParts<()> + Send + 'static,
        E::Rejection: IntoResponse,
        F: Fn(E) -> Arc<str> + Send + Sync + 'static,
    {
        let read = Arc::new(read);
        let tenant_from: TenantFrom = Arc::new(move |parts: &mut Parts| {
            let read = Arc::clone(&read);
            Box::pin(async move {
                match E::from_request_parts(parts, &()).await {
                    Ok(found) => Ok(read(found)),
                    Err(rejection) => Err(rejection.into_response()),
                }
            })
        });
        self.with(|shared| {
            shared.tenant_from = Some(tenant_from);
            shared.scopes = Arc::new(FromExtension::new(|t: &ExtractedTenant| t.0.clone()));
        })
    }

    fn with(self, change: impl FnOnce(&mut Shared)) -> Self {
        let mut shared = Arc::unwrap_or_clone(self.shared);
        change(&mut shared);
        Self {
            shared: Arc::new(shared),
        }
    }
}

impl<S> Layer<S> for TwoStepLayer {
    type Service = TwoStep<S>;

    fn layer(&self, inner: S) -> TwoStep<S> {
        TwoStep::new(inner, self.shared.clone())
    }
}
