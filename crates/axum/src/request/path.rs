//! Path parameters whose refusal is a problem body.
//!
//! [`PathParam`] wraps axum's `Path`, whose own rejection is a `text/plain` 400: a
//! percent-encoded segment that is not UTF-8 (`GET /api/keys/%FF`) would get that instead of
//! an RFC 9457 problem. Every route with a path parameter reads it through this wrapper (the
//! crate's `clippy.toml` disallows `axum::extract::Path` anywhere else). On a scoped route it
//! comes after [`Scope`](super::Scope) in the handler's arguments, so an unauthenticated
//! caller is told 401 before its path is read.

use axum::{
    extract::{rejection::PathRejection, FromRequestParts},
    response::Response,
};
use http::request::Parts;
use idem_store::http::{problem, HttpResponse};
use serde::de::DeserializeOwned;

use crate::wire::to_response;

/// The problem `type` of a path parameter that cannot be read; what it means is served at
/// `GET /problems/invalid-path-parameter` (`crate::problems`, which lists it).
pub const INVALID_PATH: &str = "/problems/invalid-path-parameter";

/// 400 for a path parameter the route cannot read (`detail`: which, and why).
pub fn invalid_path(detail: &str) -> HttpResponse {
    problem(400, INVALID_PATH, "Invalid path parameter", detail, None)
}

/// The route's path parameters, deserialised as axum's `Path` does; refused with
/// [`invalid_path`] (400) when the client's path cannot be read as `T`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathParam<T>(pub T);

impl<S, T> FromRequestParts<S> for PathParam<T>
where
    T: DeserializeOwned + Send,
    S: Send + Sync,
{
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Response> {
        // The one place axum's `Path` is read: its rejection becomes a problem here.
        #[allow(clippy::disallowed_types)]
        let read = axum::extract::Path::<T>::from_request_parts(parts, state).await;
        match read {
            Ok(axum::extract::Path(value)) => Ok(Self(value)),
            Err(rejection) => Err(to_response(refusal(&rejection))),
        }
    }
}

/// 400 `invalid-path-parameter` for a path the client sent that cannot be read (not UTF-8,
/// not the parameter's type); 500 for a handler whose parameters do not match its route
/// (axum's 5xx rejections), a bug no request can fix, logged.
fn refusal(rejection: &PathRejection) -> HttpResponse {
    if rejection.status().is_server_error() {
        tracing::error!(
            rejection = %rejection.body_text(),
            "a handler's path parameters do not match its route"
        );
        return idem_store::http::internal_error();
    }
    invalid_path(&rejection.body_text())
}

#[cfg(test)]
mod tests {
    use axum::{body::Body, routing::get, Router};
    use http::{Request, StatusCode};
    use idem_store::http::Problem;
    use tower::ServiceExt;

    use super::*;

    /// `GET uri` on a router whose routes read their parameters through [`PathParam`]: the
    /// status and the problem body.
    async fn problem_at(uri: &str) -> (StatusCode, Problem) {
        let router = Router::new()
            .route(
                "/text/{p}",
                get(|PathParam(p): PathParam<String>| async { p }),
            )
            .route(
                "/number/{n}",
                get(|PathParam(n): PathParam<u32>| async move { n.to_string() }),
            )
            // A handler that asks for two parameters on a route with one: a bug.
            .route(
                "/wrong/{p}",
                get(|PathParam(pair): PathParam<(String, String)>| async move { pair.0 }),
            );
        let request = Request::get(uri).body(Body::empty()).unwrap();
        let response = router.oneshot(request).await.unwrap();
        let status = response.status();
        assert_eq!(
            response.headers()["content-type"],
            "application/problem+json",
            "{uri}"
        );
        let body = axum::body::to_bytes(response.into_body(), 4096)
            .await
            .unwrap();
        (status, serde_json::from_slice(&body).unwrap())
    }

    #[tokio::test]
    async fn a_path_that_cannot_be_read_is_a_400_problem() {
        for uri in ["/text/%FF", "/text/a%C3", "/number/abc", "/number/-1"] {
            let (status, problem) = problem_at(uri).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}");
            assert_eq!(problem.kind, INVALID_PATH, "{uri}");
            assert_eq!(problem.status, 400);
        }
        let (_, problem) = problem_at("/text/%FF").await;
        assert!(problem.detail.contains("UTF-8"), "{}", problem.detail);
    }

    #[tokio::test]
    async fn a_handler_that_does_not_match_its_route_is_a_500_problem() {
        let (status, problem) = problem_at("/wrong/x").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(problem.kind, idem_store::http::problem::INTERNAL);
    }
}
