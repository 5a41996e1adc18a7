//! What a request to any route asks for besides its body ([`RequestTarget`]), read from axum's
//! routing: the method, the route template it matched (`MatchedPath`) and that route's path
//! parameters, the query and the `Content-Type`. A layer in front of many routes fingerprints
//! these with the body, so one key cannot be replayed across endpoints or resources.

use axum::extract::{
    rejection::RawPathParamsRejection, FromRequestParts, MatchedPath, RawPathParams,
};
use http::{header::CONTENT_TYPE, request::Parts};
use idem_store::{http::HttpResponse, BodyFields, RequestTarget};

use super::invalid_path;

/// The request's target. Under a router (the layer added with `Router::layer` or
/// `route_layer`) the route is the matched template and its parameters are percent-decoded
/// (`/customers/cus%5FA` and `/customers/cus_A` are one resource); with no matched route (the
/// layer around a whole service) it is the path as sent, which still tells every resource
/// apart. A path parameter that is not UTF-8 is a 400, as on every route of this crate. Every
/// body field counts; a layer narrows that with its route's rule.
pub async fn target_of(parts: &mut Parts) -> Result<RequestTarget, HttpResponse> {
    let matched = parts
        .extensions
        .get::<MatchedPath>()
        .map(|m| m.as_str().to_owned());
    let (route, params) = match matched {
        Some(route) => {
            let params = match RawPathParams::from_request_parts(parts, &()).await {
                Ok(raw) => raw
                    .iter()
                    .map(|(name, value)| (name.to_owned(), value.to_owned()))
                    .collect(),
                // A route without parameters may carry none.
                Err(RawPathParamsRejection::MissingPathParams(_)) => Vec::new(),
                Err(rejection) => return Err(invalid_path(&rejection.body_text())),
            };
            (route, params)
        }
        None => (parts.uri.path().to_owned(), Vec::new()),
    };
    let content_type = parts
        .headers
        .get(CONTENT_TYPE)
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned());
    Ok(RequestTarget {
        method: parts.method.as_str().to_owned(),
        route,
        params,
        query: parts.uri.query().map(str::to_owned),
        content_type,
        fields: BodyFields::All,
    })
}
