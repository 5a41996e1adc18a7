//! How every service of this crate (the checkout, PayCo) starts ([`ServiceConfig`]): its
//! database with its schema, its listener, the one stdout line, then [`crate::ops`] serving
//! its routes (wrapped in [`crate::layers`]) until shutdown.

use std::net::SocketAddr;

use axum::Router;

use crate::{
    cors::cors_layer,
    db::{AppMigrations, Clock, Db, DbOptions},
    request::BodyLimits,
    serve::ConnLimits,
    StartError,
};

/// What a service runs beside its routes (nothing, by default).
#[derive(Default)]
pub struct Background {
    /// A completer of abandoned work.
    pub completer: Option<crate::completer::Completer>,
    /// A message-id table, pruned with the claims.
    pub consumer: Option<crate::consumer::Consumer>,
    /// The service's own background passes (the checkout's outbox relay).
    pub periodic: Vec<crate::periodic::Periodic>,
}

/// What every service is started with.
#[derive(Debug, Clone)]
pub struct ServiceConfig {
    /// Where to listen (port 0: a free port, printed on stdout).
    pub listen: SocketAddr,
    /// `sqlite:FILE` or `postgres://…`.
    pub database: String,
    /// A claim's lease, in milliseconds.
    pub lock_ms: u64,
    /// Body size and time limits.
    pub body: BodyLimits,
    /// Connection limits.
    pub conn: ConnLimits,
    /// Origins allowed by CORS.
    pub cors_origins: Vec<String>,
    /// Drain deadline and pruner ([`crate::ops`]).
    pub ops: crate::ops::OpsConfig,
}

impl ServiceConfig {
    /// The database, opened with the claim table's schema and then `schema`. Leases are
    /// measured on PostgreSQL's clock (several servers may share one database, and their own
    /// clocks may disagree by more than a lease), or on this machine's for a SQLite file (one
    /// machine, one clock).
    pub async fn open_db(&self, schema: &AppMigrations) -> Result<Db, StartError> {
        let clock = if self.database.starts_with("sqlite:") {
            Clock::Caller
        } else {
            Clock::Database
        };
        let options = DbOptions {
            store: idem_store::StoreConfig {
                lock_ms: self.lock_ms,
                retention_ms: self.ops.retention_ms,
                max_body_bytes: self.body.max_bytes,
                first_sent_tolerance_ms: self.ops.first_sent_tolerance_ms,
                ..idem_store::StoreConfig::default()
            },
            clock,
            prune_batch: self.ops.pruner.batch,
            ..DbOptions::default()
        };
        let db = Db::open(&self.database, options).await?;
        db.migrate(schema).await?;
        Ok(db)
    }

    /// Bind, print `idem-server NAME listening on http://ADDR` (the one stdout line, which
    /// scripts and tests wait for), and serve `routes` with the common layers, the probes,
    /// metrics, request spans, pruner and the `background` work
    /// ([`crate::ops::serve_service`]) until SIGTERM or Ctrl-C, then drain.
    pub async fn serve(
        &self,
        name: &str,
        routes: Router,
        db: Db,
        scopes: Option<crate::ops::trace::SharedScope>,
        background: Background,
    ) -> Result<(), StartError> {
        let cors = cors_layer(&self.cors_origins)?;
        let listener = tokio::net::TcpListener::bind(self.listen)
            .await
            .map_err(|e| StartError::Bind(self.listen, e))?;
        let addr = listener
            .local_addr()
            .map_err(|e| StartError::Bind(self.listen, e))?;
        println!("idem-server {name} listening on http://{addr}");
        let service = crate::ops::Service {
            routes,
            db,
            consumer: background.consumer,
            scopes,
            cors,
            conn: self.conn,
            // This application's own problem types are described beside idem-axum's.
            ops: crate::ops::OpsConfig {
                problems: crate::problems::TYPES,
                ..self.ops
            },
            completer: background.completer,
            periodic: background.periodic,
        };
        crate::ops::serve_service(listener, service).await;
        Ok(())
    }
}
