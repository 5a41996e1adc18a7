//! `receipts`: the consumer of the checkout's outbox, a service of its own (its own port, its
//! own database), as a team's downstream service would be. It receives each `order.paid`
//! message from the checkout's relay (`POST /deliveries`, `deliver`), sends the receipt
//! (a row of `receipts`, [`table`]) through `consumer::Consumer::process_once` keyed by the
//! message id, in one transaction with the record that the message was processed, and then
//! acknowledges: so a message delivered twice (the relay's resend after a crash, two relays,
//! a lost acknowledgement) is one receipt. `GET /api/receipts` lists the caller's tenant's;
//! with failpoints enabled, `GET /api/failpoints` and `PUT /api/failpoints/{point}` as on the
//! checkout.
//!
//! What it does not do: call the relay back, order messages (it never needs to: one message
//! per order), or keep a message id longer than `ConsumerConfig::retention_ms` (7 days).

mod deliver;
pub mod table;

use std::{ops::Deref, sync::Arc};

use axum::{
    extract::{FromRef, State},
    response::Response,
    routing::{get, post, put},
    Router,
};

use crate::{
    app::{Background, ServiceConfig},
    checkout::{
        checkpoint::{Arming, Checkpoints, Point, Verdict},
        failpoints,
    },
    consumer::{Consumer, ConsumerConfig},
    db::{AppMigrations, Db},
    request::{BearerTenants, BodyLimits, Scope, ScopeExtractor, Scopes},
    storage_error,
    wire::{json, to_response},
    StartError,
};

/// The `receipts` table's versioned schema, applied next to the claim table.
pub const SCHEMA: AppMigrations = AppMigrations {
    name: "receipts",
    sqlite: &[(1, "receipts", include_str!("schema/sqlite.sql"))],
    postgres: &[(1, "receipts", include_str!("schema/postgres.sql"))],
};

/// The most receipts `GET /api/receipts` lists.
pub const LIST_LIMIT: i64 = 1_000;

/// Everything `idem-server receipts` is started with.
pub struct ReceiptsConfig {
    /// Listener, database (its own), limits.
    pub service: ServiceConfig,
    /// Bearer token → sender, for `POST /deliveries` (the checkout's relay).
    pub senders: BearerTenants,
    /// Bearer token → tenant, for `GET /api/receipts`.
    pub tenants: BearerTenants,
    /// `Some(presets)`: process-wide checkpoints, settable at run time (`--failpoints`,
    /// `--failpoint consumer-after-effect=…`; loopback only).
    pub failpoints: Option<Vec<(Point, Verdict)>>,
}

/// The service's shared state (cheap to clone).
#[derive(Clone)]
pub struct Receipts(Arc<Inner>);

/// What the handlers share.
pub struct Inner {
    /// Receipts and processed message ids.
    pub db: Db,
    /// `process_once` on `db`.
    pub consumer: Consumer,
    /// Who may deliver.
    pub senders: Arc<dyn ScopeExtractor>,
    /// Whose receipts a reader sees.
    pub tenants: Arc<dyn ScopeExtractor>,
    /// Body limits of a delivery.
    pub body: BodyLimits,
    /// Where it may fail on purpose (off unless configured).
    pub checkpoints: Checkpoints,
}

impl Deref for Receipts {
    type Target = Inner;

    fn deref(&self) -> &Inner {
        &self.0
    }
}

/// `GET /api/receipts` reads the tenant from the bearer token.
impl FromRef<Receipts> for Scopes {
    fn from_ref(app: &Receipts) -> Scopes {
        Scopes(Arc::clone(&app.tenants))
    }
}

/// `/api/failpoints` sets the service's checkpoints.
impl AsRef<Checkpoints> for Receipts {
    fn as_ref(&self) -> &Checkpoints {
        &self.checkpoints
    }
}

/// The service's routes, without the common layers; `/api/failpoints` (the checkout's
/// handlers over this service's checkpoints) when started with failpoints enabled.
pub fn routes(app: Receipts) -> Router {
    let mut router = Router::new()
        .route("/deliveries", post(deliver::deliver))
        .route("/api/receipts", get(list));
    if app.checkpoints.process_enabled() {
        router = router
            .route("/api/failpoints", get(failpoints::list::<Receipts>))
            .route("/api/failpoints/{point}", put(failpoints::set::<Receipts>));
    }
    router.with_state(app)
}

async fn list(State(app): State<Receipts>, Scope(tenant): Scope) -> Response {
    to_response(match table::list(&app.db, &tenant, LIST_LIMIT).await {
        Ok(receipts) => json(200, &receipts, &[]),
        Err(e) => storage_error(&e.into()),
    })
}

/// Open the database, bind, print `idem-server receipts listening on http://ADDR`, serve.
pub async fn run(config: ReceiptsConfig) -> Result<(), StartError> {
    let db = config.service.open_db(&SCHEMA).await?;
    let consumer = Consumer::open(&db, ConsumerConfig::default()).await?;
    let arming = Arming {
        process: config.failpoints,
        tenants: None,
    };
    let checkpoints = Checkpoints::new(config.service.listen, arming)?;
    let tenants: Arc<dyn ScopeExtractor> = Arc::new(config.tenants);
    let app = Receipts(Arc::new(Inner {
        db: db.clone(),
        consumer: consumer.clone(),
        senders: Arc::new(config.senders),
        tenants: Arc::clone(&tenants),
        body: config.service.body,
        checkpoints,
    }));
    let background = Background {
        consumer: Some(consumer),
        ..Background::default()
    };
    config
        .service
        .serve("receipts", routes(app), db, Some(tenants), background)
        .await
}
