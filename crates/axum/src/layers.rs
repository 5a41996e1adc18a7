//! The layers every service's routes are wrapped in: 404 and 405 problems for unknown paths
//! and methods, a 500 problem for a handler that panicked (the `server` profile unwinds, so
//! one panic fails one request), CORS for the configured origins, and request tracing.
//! [`crate::ops::serve_service`] applies them; they decide nothing about requests.

use std::any::Any;

use axum::{response::Response, Router};
use tower_http::{catch_panic::CatchPanicLayer, cors::CorsLayer, trace::TraceLayer};

use crate::wire::to_response;

/// `routes` with the common layers (CORS only when origins are configured).
pub fn with_common_layers(routes: Router, cors: Option<CorsLayer>) -> Router {
    let routes = routes
        .fallback(|| async { to_response(idem_store::http::not_found("no such route")) })
        .method_not_allowed_fallback(|| async {
            to_response(idem_store::http::method_not_allowed())
        })
        .layer(CatchPanicLayer::custom(panic_response));
    let routes = match cors {
        Some(cors) => routes.layer(cors),
        None => routes,
    };
    routes.layer(TraceLayer::new_for_http())
}

fn panic_response(panic: Box<dyn Any + Send + 'static>) -> Response {
    let what = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic");
    tracing::error!(panic = what, "handler panicked");
    to_response(idem_store::http::internal_error())
}
