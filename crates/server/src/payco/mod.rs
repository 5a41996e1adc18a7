//! PayCo: the payment provider the checkout charges, a service of its own (its own port, its
//! own database), idempotent on its key through the same store rules, with a ledger.
//!
//! Routes: `POST /charges` (`charge`), `GET /ledger` (the merchant's ledger rows, oldest
//! first; `?from_order=N` keeps the rows of orders N and later).
//! Test cards: [`wire::DECLINING_CARD`] always declines (402, saved under the key); every
//! other token charges.

mod charge;
pub mod ledger;
pub mod wire;

use std::{ops::Deref, sync::Arc};

use axum::{
    extract::{FromRef, Request, State},
    response::Response,
    routing::{get, post},
    Router,
};
use idem_store::{ErrorPolicy, RouteConfig};

use idem_store::http::HttpResponse;

use crate::{
    app::ServiceConfig,
    db::{AppMigrations, Db},
    problems,
    request::{BearerTenants, BodyLimits, Scope, ScopeExtractor, Scopes},
    storage_error,
    wire::{json, to_response},
    StartError,
};

/// The `ledger` table's versioned schema, applied next to the claim table.
pub const SCHEMA: AppMigrations = AppMigrations {
    name: "ledger",
    sqlite: &[(1, "ledger", include_str!("schema/sqlite.sql"))],
    postgres: &[(1, "ledger", include_str!("schema/postgres.sql"))],
};

/// Everything `idem-server payco` is started with.
pub struct PaycoConfig {
    /// Listener, database (PayCo's own), limits, CORS.
    pub service: ServiceConfig,
    /// Merchant bearer token → merchant (PayCo's scope).
    pub merchants: BearerTenants,
}

/// PayCo's shared state (cheap to clone).
#[derive(Clone)]
pub struct Payco(Arc<Inner>);

/// What PayCo's handlers share.
pub struct Inner {
    /// Claim table and ledger.
    pub db: Db,
    /// `POST /charges`: key required, answers saved (declines included).
    pub route: RouteConfig,
    /// Which merchant is asking.
    pub merchants: Arc<dyn ScopeExtractor>,
    /// Body limits.
    pub body: BodyLimits,
}

impl Deref for Payco {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl Payco {
    /// The state for `inner`.
    pub fn new(inner: Inner) -> Self {
        Self(Arc::new(inner))
    }
}

/// `GET /ledger` reads the merchant as `POST /charges` does.
impl FromRef<Payco> for Scopes {
    fn from_ref(app: &Payco) -> Scopes {
        Scopes(Arc::clone(&app.merchants))
    }
}

/// The route every charge is claimed under.
pub fn charge_route() -> RouteConfig {
    RouteConfig::required(wire::CHARGE_ROUTE, ErrorPolicy::SaveResponse)
}

/// PayCo's routes, without the common layers.
pub fn routes(app: Payco) -> Router {
    Router::new()
        .route("/charges", post(charge::charge))
        .route("/ledger", get(list_ledger))
        .with_state(app)
}

async fn list_ledger(
    State(app): State<Payco>,
    Scope(merchant): Scope,
    request: Request,
) -> Response {
    let from_order = match from_order(request.uri().query()) {
        Ok(from) => from,
        Err(refused) => return to_response(refused),
    };
    to_response(match ledger::list(&app.db, &merchant, from_order).await {
        Ok(rows) => json(200, &rows, &[]),
        Err(e) => storage_error(&e.into()),
    })
}

/// `from_order=N` of `GET /ledger`'s query (rows of orders N and later), 0 when absent.
fn from_order(query: Option<&str>) -> Result<i64, HttpResponse> {
    let given = query
        .unwrap_or("")
        .split('&')
        .find_map(|pair| pair.strip_prefix("from_order="));
    match given {
        None => Ok(0),
        Some(n) => n
            .parse()
            .map_err(|_| problems::invalid_parameters("from_order must be an integer")),
    }
}

/// Open PayCo's database, bind, print `idem-server payco listening on http://ADDR`, serve.
pub async fn run(config: PaycoConfig) -> Result<(), StartError> {
    let db = config.service.open_db(&SCHEMA).await?;
    let merchants: Arc<dyn ScopeExtractor> = Arc::new(config.merchants);
    let app = Payco::new(Inner {
        db: db.clone(),
        route: charge_route(),
        merchants: Arc::clone(&merchants),
        body: config.service.body,
    });
    let scopes: crate::ops::trace::SharedScope = merchants;
    config
        .service
        .serve("payco", routes(app), db, Some(scopes), Default::default())
        .await
}
