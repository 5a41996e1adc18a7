//! The layer: builds what every wrapped service shares and wraps each in [`TwoStep`].

use std::sync::Arc;

use idem_store::RouteConfig;
use tower::Layer;

use super::service::{Shared, TwoStep};
use crate::{
    db::Db,
    request::{BodyLimits, ScopeExtractor},
};

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
        let scopes = Box::new(scopes);
        let shared = Arc::new(Shared {
            db,
            route,
            scopes,
            limits,
        });
        Self { shared }
    }
}

impl<S> Layer<S> for TwoStepLayer {
    type Service = TwoStep<S>;

    fn layer(&self, inner: S) -> TwoStep<S> {
        TwoStep::new(inner, self.shared.clone())
    }
}
