//! The example checkout: the service a page embedding idem's SDK talks to.
//!
//! Routes: `POST /api/checkout` (`create`), `GET /api/orders`, `GET /api/orders/{id}`,
//! `GET /api/claims`, `GET /api/claims/{key}` (`views`), `GET /api/events` (`events`),
//! when failpoints are enabled, `GET /api/failpoints`, `PUT /api/failpoints/{point}`, and in
//! demo mode the routes of [`demo`]. The checkout's work itself is idem-checkout's state
//! machine; `create` drives it, and the [`checkpoint`]s sit between its steps. A paid
//! order's `order.paid` message goes to the [`outbox`] in its fenced commit, and the relay,
//! a background pass of this service, delivers it.

pub mod checkpoint;
mod completer;
mod create;
pub mod demo;
mod events;
pub mod failpoints;
pub mod orders;
pub mod outbox;
pub mod params;
pub mod payco_client;
mod views;

use std::{ops::Deref, sync::Arc, time::Duration};

use axum::{
    extract::FromRef,
    middleware,
    routing::{get, post, put},
    Router,
};
use idem_store::{ErrorPolicy, RouteConfig};

use crate::{
    app::ServiceConfig,
    db::{AppMigrations, Db},
    reconcile::route::{self, KeyStates},
    request::{BearerTenants, BodyLimits, ScopeExtractor, Scopes},
    StartError,
};
use checkpoint::{faults::FaultTable, Arming, Checkpoints, Point, Verdict};
use demo::{Demo, DemoTenants};
use payco_client::PaycoClient;

/// The `orders` and `outbox` tables' versioned schema, applied next to the claim table.
pub const SCHEMA: AppMigrations = AppMigrations {
    name: "orders",
    sqlite: &[
        (1, "orders", include_str!("schema/sqlite.sql")),
        (2, "outbox", include_str!("schema/sqlite_outbox.sql")),
        (
            3,
            "outbox pruning",
            include_str!("schema/outbox_sent_index.sql"),
        ),
    ],
    postgres: &[
        (1, "orders", include_str!("schema/postgres.sql")),
        (2, "outbox", include_str!("schema/postgres_outbox.sql")),
        (
            3,
            "outbox pruning",
            include_str!("schema/outbox_sent_index.sql"),
        ),
    ],
};

/// Everything `idem-server serve` is started with.
pub struct CheckoutConfig {
    /// Listener, database, limits, CORS.
    pub service: ServiceConfig,
    /// PayCo's base URL.
    pub payco_url: String,
    /// The merchant's bearer token at PayCo.
    pub payco_token: String,
    /// Time allowed for one PayCo call.
    pub payco_timeout: Duration,
    /// Bearer token → tenant.
    pub tenants: BearerTenants,
    /// What a declined payment does to the claim.
    pub on_error: ErrorPolicy,
    /// Wait mode: how long a duplicate of a checkout in flight waits for its answer instead
    /// of a 409 (`None`: 409 at once; capped at `two_step::MAX_WAIT`).
    pub wait: Option<Duration>,
    /// The completer of abandoned checkouts (`None`: off).
    pub completer: Option<crate::completer::CompleterConfig>,
    /// The outbox's relay (`None`: off; messages wait in the outbox).
    pub relay: Option<outbox::relay::RelayConfig>,
    /// `Some(presets)` to enable process-wide checkpoints, settable at run time
    /// (`--failpoints`, `--failpoint POINT=VERDICT`; loopback listen addresses only).
    pub failpoints: Option<Vec<(Point, Verdict)>>,
}

/// The checkout's shared state (cheap to clone).
#[derive(Clone)]
pub struct Checkout(Arc<Inner>);

/// What the handlers share.
pub struct Inner {
    /// The claim table and the orders.
    pub db: Db,
    /// `POST /api/checkout`'s route: key required, the configured error policy.
    pub route: RouteConfig,
    /// Who is asking.
    pub tenants: Arc<dyn ScopeExtractor>,
    /// Body limits.
    pub body: BodyLimits,
    /// PayCo.
    pub payco: PaycoClient,
    /// Where the checkout may fail on purpose (off unless configured).
    pub checkpoints: Checkpoints,
    /// Wait mode (see [`CheckoutConfig::wait`]).
    pub wait: Option<Duration>,
    /// Demo mode's routes (`--demo-faults`), if on.
    pub demo: Option<Demo>,
}

impl Deref for Checkout {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        &self.0
    }
}

/// `/api/failpoints` sets the checkout's checkpoints.
impl AsRef<Checkpoints> for Checkout {
    fn as_ref(&self) -> &Checkpoints {
        &self.checkpoints
    }
}

/// `GET /api/keys/{key}` reads the checkout's table.
impl FromRef<Checkout> for KeyStates {
    fn from_ref(app: &Checkout) -> KeyStates {
        KeyStates {
            db: app.db.clone(),
            operation: app.route.operation.clone(),
        }
    }
}

/// Every scoped route of the checkout (the views, the key state, the event stream) reads the
/// tenant as `POST /api/checkout` does.
impl FromRef<Checkout> for Scopes {
    fn from_ref(app: &Checkout) -> Scopes {
        Scopes(Arc::clone(&app.tenants))
    }
}

impl Checkout {
    /// The state for `inner`.
    pub fn new(inner: Inner) -> Self {
        Self(Arc::new(inner))
    }
}

/// The checkout's routes, without the common layers.
pub fn routes(app: Checkout) -> Router {
    let mut router = Router::new()
        .route("/api/checkout", post(create::create))
        .route("/api/orders", get(views::list_orders))
        .route("/api/orders/{id}", get(views::get_order))
        .route("/api/claims", get(views::list_claims))
        .route("/api/claims/{key}", get(views::get_claim))
        .route("/api/keys/{key}", get(route::get_key_state))
        .route("/api/events", get(events::events));
    if app.checkpoints.process_enabled() {
        router = router
            .route("/api/failpoints", get(failpoints::list::<Checkout>))
            .route("/api/failpoints/{point}", put(failpoints::set::<Checkout>));
    }
    let Some(demo) = app.demo.clone() else {
        return router.with_state(app);
    };
    router
        .with_state(app)
        .merge(demo::routes::routes(demo))
        .layer(middleware::from_fn(demo::routes::access_token))
}

/// Open the database, bind, print `idem-server checkout listening on http://ADDR` on stdout,
/// and serve until the process ends.
pub async fn run(config: CheckoutConfig) -> Result<(), StartError> {
    run_with(config, Mode::Plain).await
}

/// Whether the checkout runs in demo mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The example checkout alone.
    Plain,
    /// With [`demo`]: a tenant per page session, faults on request (loopback only).
    DemoFaults,
}

/// [`run`] in `mode`.
pub async fn run_with(config: CheckoutConfig, mode: Mode) -> Result<(), StartError> {
    let db = config.service.open_db(&SCHEMA).await?;
    let payco = PaycoClient::new(&config.payco_url, &config.payco_token, config.payco_timeout)
        .map_err(|e| StartError::Payco(e.to_string()))?;
    let tenants: Arc<dyn ScopeExtractor> = match mode {
        Mode::Plain => Arc::new(config.tenants.clone()),
        Mode::DemoFaults => Arc::new(DemoTenants::new(config.tenants.clone())),
    };
    let faults = (mode == Mode::DemoFaults).then(|| Arc::new(FaultTable::default()));
    let arming = Arming {
        process: config.failpoints.clone(),
        tenants: faults.clone().map(|faults| (faults, db.clone())),
    };
    let checkpoints = Checkpoints::new(config.service.listen, arming)?;
    let demo = faults.map(|faults| {
        Demo::new(demo::Inner {
            faults,
            tenants: Arc::clone(&tenants),
            db: db.clone(),
            payco: payco.clone(),
            lock_ms: config.service.lock_ms,
        })
    });
    let app = Checkout::new(Inner {
        db: db.clone(),
        route: RouteConfig::required(params::CHECKOUT_ROUTE, config.on_error),
        tenants: Arc::clone(&tenants),
        body: config.service.body,
        payco,
        checkpoints,
        wait: config.wait.map(|w| w.min(crate::two_step::MAX_WAIT)),
        demo,
    });
    let scopes: crate::ops::trace::SharedScope = tenants;
    let background = crate::app::Background {
        completer: config
            .completer
            .map(|c| completer::completer(app.clone(), c)),
        periodic: match config.relay {
            Some(relay) => vec![outbox::relay::relay(app.clone(), relay)
                .map_err(|e| StartError::Relay(e.to_string()))?],
            None => Vec::new(),
        },
        consumer: None,
    };
    config
        .service
        .serve("checkout", routes(app), db, Some(scopes), background)
        .await
}
