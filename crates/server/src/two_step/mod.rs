//! A tower [`Layer`](tower::Layer) that makes any route idempotent with a **two-step save**:
//! claim the key, run the inner service, then save its answer under the claim.
//!
//! For routes whose work cannot share the claim's transaction (it calls another system, or
//! another database). Between the work and the save there is no atomicity: a crash there
//! leaves the claim to go stale, the next retry takes it over and **runs the work again**. So
//! this layer is safe **only when the work is idempotent downstream**: it must carry its own
//! idempotency key to whatever it changes (as the checkout does with PayCo's
//! `charge:<order>`). Work that writes to this server's own database should commit its writes
//! with the saved response instead (the checkout's pattern, `db`'s transaction API).
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
//! use idem_server::{db::Db, request::{BearerTenants, BodyLimits}, two_step::TwoStepLayer};
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

mod layer;
mod service;

pub use layer::{TwoStepLayer, MAX_WAIT};
pub use service::{TwoStep, MAX_SAVED_BYTES};
