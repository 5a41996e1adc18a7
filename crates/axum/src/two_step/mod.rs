//! A tower [`Layer`](tower::Layer) that makes any route idempotent with a **two-step save**
//! (claim the key, run the inner service, then save its answer under the claim) or, in
//! **atomic mode**, with the route's own writes and its answer committed together.
//!
//! For routes whose work cannot share the claim's transaction (it calls another system, or
//! another database). Between the work and the save there is no atomicity: a crash there
//! leaves the claim to go stale, the next retry takes it over and **runs the work again**. So
//! this layer is safe **only when the work is idempotent downstream**: it must carry its own
//! idempotency key to whatever it changes (as the checkout does with PayCo's
//! `charge:<order>`). Work that writes to this server's own database should commit its writes
//! with the saved response instead: [`TwoStepLayer::atomic`] (below), or the checkout's
//! pattern through `db`'s transaction API.
//!
//! What is saved: answers below 500, with their status, content type, body and only the
//! replay allow-list of headers ([`crate::wire::REPLAYED_HEADERS`]; never `Set-Cookie`).
//! 2xx and 3xx are saved as results; 4xx go through the route's error policy (saved, or the
//! claim released); 5xx always release the claim, since the outcome is not known. An answer
//! over [`TwoStepLayer::max_saved_bytes`] goes to its caller whole and is saved as its status
//! with the problem [`crate::wire::ANSWER_TOO_LARGE`] in place of its body.
//!
//! One layer can stand in front of a whole router: the key binds the request's method, matched
//! route, path parameters, query and body (JSON, form-encoded, empty, or bytes:
//! [`idem_store::RequestTarget`]), not the `RouteConfig`'s operation name, so a key reused on
//! another endpoint or resource is 422. `GET`, `HEAD` and `OPTIONS` pass through untouched.
//!
//! ```no_run
//! use axum::{routing::post, Router};
//! use idem_axum::{db::Db, request::{BearerTenants, BodyLimits}, two_step::TwoStepLayer};
//! use idem_store::{ErrorPolicy, RouteConfig};
//!
//! # async fn example(db: Db) {
//! let route = RouteConfig::required("POST /api/refunds", ErrorPolicy::ReleaseClaim);
//! let tenants = BearerTenants::new().with("token-a", "tenant-a");
//! let app: Router = Router::new()
//!     .route("/api/refunds", post(|| async { "refund sent under its own downstream key" }))
//!     .layer(TwoStepLayer::new(db, route, tenants, BodyLimits::default()));
//! # }
//! ```
//!
//! **Atomic mode** ([`TwoStepLayer::atomic`]): the handler takes [`Writes`], writes its own
//! rows in the transaction that ends the claim, and answers; the layer saves the answer in that
//! transaction and commits (fenced: a claim taken over meanwhile rolls everything back, 409),
//! or on a 5xx rolls the writes back and releases the claim. A real sqlx connection, no macro,
//! for an application on one backend:
//!
//! ```no_run
//! use axum::{http::StatusCode, routing::post, Router};
//! use idem_axum::{
//!     db::Db,
//!     request::{BearerTenants, BodyLimits, PathParam},
//!     two_step::{TwoStepLayer, Writes},
//! };
//! use idem_store::{ErrorPolicy, RouteConfig};
//!
//! async fn add_note(PathParam(account): PathParam<String>, writes: Writes, text: String)
//!     -> Result<(StatusCode, String), StatusCode>
//! {
//!     let mut tx = writes.lock().await.map_err(|_| StatusCode::INTERNAL_SERVER_ERROR)?;
//!     let conn = tx.postgres().ok_or(StatusCode::INTERNAL_SERVER_ERROR)?;
//!     let id: i64 = sqlx::query_scalar("INSERT INTO notes (account, text) VALUES ($1, $2) RETURNING id")
//!         .bind(&account)
//!         .bind(&text)
//!         .fetch_one(&mut *conn)
//!         .await
//!         .map_err(|_| StatusCode::SERVICE_UNAVAILABLE)?;
//!     Ok((StatusCode::CREATED, format!("{{\"note\":{id}}}")))
//! }
//!
//! # async fn example(db: Db) {
//! let route = RouteConfig::required("notes", ErrorPolicy::ReleaseClaim);
//! let tenants = BearerTenants::new().with("token-a", "tenant-a");
//! let app: Router = Router::new()
//!     .route("/v1/accounts/{account}/notes", post(add_note))
//!     .layer(TwoStepLayer::new(db, route, tenants, BodyLimits::default()).atomic());
//! # }
//! ```

mod atomic;
mod layer;
mod phases;
mod recovery;
mod service;

pub use atomic::{Writes, WritesEnded, WritesGuard};
pub use layer::{TwoStepLayer, MAX_WAIT};
pub use phases::MAX_SAVED_BYTES;
pub use recovery::{Recovery, RecoveryError};
pub use service::TwoStep;
