//! The problem types idem-server sends, and `GET /problems/{name}`, which describes each.
//!
//! Every error body is RFC 9457 problem details with a `type` that is a relative reference,
//! `/problems/<name>` (crates/store/README.md): resolved against the request's URI, it names
//! a page on the deployer's own origin, and every service of this crate serves that page, a
//! short plain-text description, from [`TYPES`]: the store's types (`idem_store::http`'s
//! builders: 400, 401, 404, 405, 408, 409, 413, 422, 500, 502, 503) and this crate's own
//! three: 400 for a path parameter a route cannot read (not UTF-8, not its type), 400 for JSON
//! that is not a route's parameters, and the replay of an answer too large to save (with that
//! answer's status). An application adds its own types
//! ([`OpsConfig::problems`](crate::ops::OpsConfig::problems), say a 402 for a declined card)
//! and they are served beside these. All are written by the store's one `problem` function, so every body has the
//! same shape. An unknown name is a 404 problem.

use axum::{response::Response, routing::get, Router};
use idem_store::http::{problem, problem as store, HttpResponse};

use crate::{request::PathParam, wire::to_response};

/// Problem `type` URIs of this crate's own errors: a path it cannot read, parameters a route
/// cannot take, an answer too large to replay.
pub mod kind {
    /// 400: a path parameter is not percent-encoded UTF-8, or not what the route takes
    /// (written by [`crate::request::invalid_path`], below this module).
    pub const INVALID_PATH: &str = crate::request::INVALID_PATH;
    /// 400: the body is JSON, but not the parameters the route takes.
    pub const INVALID_PARAMETERS: &str = "/problems/invalid-parameters";
    /// The first answer's status: that answer was too large to save for replay (written by
    /// [`crate::wire::answer_too_large`], below this module).
    pub const ANSWER_TOO_LARGE: &str = crate::wire::ANSWER_TOO_LARGE;
}

/// One problem type and what it means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProblemType {
    /// The `type` member, `/problems/<name>`.
    pub uri: &'static str,
    /// The HTTP status it comes with.
    pub status: u16,
    /// The `title` member.
    pub title: &'static str,
    /// What happened, and what a client should do.
    pub description: &'static str,
}

/// Every problem type this crate's services send: the one table `GET /problems/{name}`
/// answers from.
pub const TYPES: &[ProblemType] = &[
    ProblemType {
        uri: store::KEY_MISSING,
        status: 400,
        title: "Idempotency key missing",
        description: "The route requires an Idempotency-Key header and the request had none. \
            Send one: a new key for each operation, the same key for every retry of it.",
    },
    ProblemType {
        uri: store::KEY_INVALID,
        status: 400,
        title: "Idempotency key invalid",
        description: "The Idempotency-Key header is empty, longer than 255 characters, not \
            printable ASCII, malformed, or sent twice. Retrying the same request will not help.",
    },
    ProblemType {
        uri: store::SCOPE_INVALID,
        status: 400,
        title: "Scope invalid",
        description: "The tenant the server derived for the request is empty, over 255 bytes \
            or not visible ASCII: the server's scope extractor or the caller is broken.",
    },
    ProblemType {
        uri: store::INVALID_JSON,
        status: 400,
        title: "Request body is not JSON",
        description: "The body is not JSON, nests deeper than 128 levels, or names an object \
            member twice (its two readings would be two different requests). Nothing was \
            recorded for the key.",
    },
    ProblemType {
        uri: store::BODY_TOO_LARGE,
        status: 413,
        title: "Request body too large",
        description: "The request body is over the server's limit. Nothing was recorded for \
            the key.",
    },
    ProblemType {
        uri: store::KEY_REUSED,
        status: 422,
        title: "Idempotency key reused with a different payload",
        description: "This key was first used with a different request (another body or \
            endpoint). Do not retry with this key: a new operation needs a new key.",
    },
    ProblemType {
        uri: store::KEY_EXPIRED,
        status: 412,
        title: "Key expired: reconcile before paying again",
        description: "The server keeps idempotency keys for a limited time (its retention), \
            holds no record of this key any more, and this request says it was first sent \
            longer ago than that (Repeatability-First-Sent): it may have run under the key \
            already, so it was not run again. Find out what became of the operation (its \
            order, its charge) before sending it again under a new key.",
    },
    ProblemType {
        uri: store::FIRST_SENT_INVALID,
        status: 400,
        title: "Repeatability-First-Sent invalid",
        description: "The Repeatability-First-Sent header must be one HTTP-date \
            (Sun, 06 Nov 1994 08:49:37 GMT): when the operation was first sent. Nothing was \
            recorded for the key.",
    },
    ProblemType {
        uri: store::IN_FLIGHT,
        status: 409,
        title: "Request in flight",
        description: "A request with this key is still being processed. Retry with the same \
            key and body after the seconds in Retry-After: you will get its answer.",
    },
    ProblemType {
        uri: store::LEASE_LOST,
        status: 409,
        title: "Claim taken over",
        description: "This request's claim on the key was taken over (its lease ran out) \
            before it could save its answer, and its writes were rolled back. Retry with the \
            same key: the new holder's answer is replayed.",
    },
    ProblemType {
        uri: store::UNAUTHORIZED,
        status: 401,
        title: "Unauthorized",
        description: "No credentials, or credentials the server does not know. The \
            WWW-Authenticate header names the scheme (Bearer, realm \"idem\") and, when a token \
            came and was refused, error=\"invalid_token\".",
    },
    ProblemType {
        uri: store::NOT_FOUND,
        status: 404,
        title: "Not found",
        description: "No such resource; for a key's state, no live key of yours by that name \
            (never claimed, past retention, or another tenant's).",
    },
    ProblemType {
        uri: store::METHOD_NOT_ALLOWED,
        status: 405,
        title: "Method not allowed",
        description: "The resource does not take this method.",
    },
    ProblemType {
        uri: store::REQUEST_TIMEOUT,
        status: 408,
        title: "Request timeout",
        description: "The request body did not arrive within the server's time limit. \
            Nothing was recorded for the key.",
    },
    ProblemType {
        uri: store::INTERNAL,
        status: 500,
        title: "Internal error",
        description: "The server failed while processing the request. Retry with the same \
            key: a claim it left is taken over once its lease runs out, and a saved answer \
            is replayed.",
    },
    ProblemType {
        uri: store::BAD_GATEWAY,
        status: 502,
        title: "Bad gateway",
        description: "A service this one depends on (the payment provider) answered \
            something unexpected or not at all. Retry with the same key and body.",
    },
    ProblemType {
        uri: store::UNAVAILABLE,
        status: 503,
        title: "Service unavailable",
        description: "The server's database (or another dependency) is unavailable, or the \
            server is shutting down. Nothing was decided: retry after the seconds in \
            Retry-After.",
    },
    ProblemType {
        uri: kind::INVALID_PATH,
        status: 400,
        title: "Invalid path parameter",
        description: "A segment of the request's path is not what the route takes: its \
            percent-encoding is not UTF-8 text, or it is not the parameter's type. Nothing was \
            read or recorded; retrying the same path will not help.",
    },
    ProblemType {
        uri: kind::INVALID_PARAMETERS,
        status: 400,
        title: "Invalid parameters",
        description: "The body is JSON (or a form), but not the parameters the route takes; \
            the detail says which. Retrying the same body will not help.",
    },
    ProblemType {
        uri: kind::ANSWER_TOO_LARGE,
        status: 200,
        title: "Answer too large to replay",
        description: "Comes with the status of the first answer to this key (any status the \
            route saves: 2xx, 3xx, or a 4xx under the save policy; 200 stands for all of \
            them here). The work ran once and that is its outcome, but its answer was larger \
            than the server saves for replay, so its body cannot be sent again. Do not retry \
            to get it: ask the resource it created, if any.",
    },
];

/// The problem type of `uri` (`/problems/<name>`), if this crate sends it.
pub fn describe(uri: &str) -> Option<&'static ProblemType> {
    TYPES.iter().find(|t| t.uri == uri)
}

/// `GET /problems/{name}` for this crate's types and the application's `own`.
pub fn routes(own: &'static [ProblemType]) -> Router {
    Router::new().route(
        "/problems/{name}",
        get(move |name: PathParam<String>| get_problem(own, name)),
    )
}

/// 200 `text/plain`: the type's title, status and description; 404 problem for a name no
/// service sends.
async fn get_problem(own: &'static [ProblemType], PathParam(name): PathParam<String>) -> Response {
    let found = TYPES
        .iter()
        .chain(own)
        .find(|t| t.uri.strip_prefix("/problems/") == Some(name.as_str()));
    to_response(match found {
        Some(t) => HttpResponse {
            status: 200,
            headers: vec![(
                "Content-Type".to_owned(),
                "text/plain; charset=utf-8".to_owned(),
            )],
            body: format!(
                "{} ({})\n\n{}\n\ntype: {}\n",
                t.title, t.status, t.description, t.uri
            )
            .into_bytes(),
        },
        None => idem_store::http::not_found("no such problem type"),
    })
}

/// 400 for a JSON body that is not the route's parameters.
pub fn invalid_parameters(detail: &str) -> HttpResponse {
    problem(
        400,
        kind::INVALID_PARAMETERS,
        "Invalid parameters",
        detail,
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example's problem types follow the store's scheme: relative references under
    /// `/problems/`, which the deployer's origin resolves (crates/store/README.md).
    #[test]
    fn problem_types_are_relative_references() {
        for (r, kind) in [
            (crate::request::invalid_path("x"), kind::INVALID_PATH),
            (invalid_parameters("x"), kind::INVALID_PARAMETERS),
        ] {
            let p: idem_store::http::Problem = serde_json::from_slice(&r.body).unwrap();
            assert_eq!(p.kind, kind);
            assert!(kind.starts_with("/problems/"), "{kind}");
        }
    }

    /// The table says what the builders send: each builder's `type`, status and title are
    /// its entry's, and no type is listed twice.
    #[test]
    fn the_table_matches_what_the_builders_send() {
        use idem_store::{http as h, RequestError};
        let sent = [
            h::problem_for(&RequestError::MissingKey),
            h::problem_for(&RequestError::EmptyKey),
            h::problem_for(&RequestError::EmptyScope),
            h::problem_for(&RequestError::InvalidJson { line: 1, column: 1 }),
            h::problem_for(&RequestError::BodyTooLarge { len: 2, limit: 1 }),
            h::response_for(&idem_store::Begin::Mismatch).unwrap(),
            h::response_for(&idem_store::Begin::KeyExpired).unwrap(),
            h::problem_for(&RequestError::MalformedFirstSent),
            h::in_flight(1),
            h::lease_lost(),
            h::unauthorized(h::Challenge::TokenMissing, "x"),
            h::not_found("x"),
            h::method_not_allowed(),
            h::request_timeout(),
            h::internal_error(),
            h::bad_gateway("x", 1),
            h::unavailable(1),
            crate::request::invalid_path("x"),
            invalid_parameters("x"),
            crate::wire::answer_too_large(200, 1),
        ];
        for r in &sent {
            let p: h::Problem = serde_json::from_slice(&r.body).unwrap();
            let t = describe(&p.kind).unwrap_or_else(|| panic!("{} is not in TYPES", p.kind));
            assert_eq!(
                (t.status, t.title),
                (p.status, p.title.as_str()),
                "{}",
                p.kind
            );
        }
        let mut uris: Vec<_> = TYPES.iter().map(|t| t.uri).collect();
        uris.sort_unstable();
        uris.dedup();
        assert_eq!(uris.len(), TYPES.len(), "a type listed twice");
        assert_eq!(TYPES.len(), sent.len(), "a type no builder sends");
    }
}
