//! idem-store's wire values as axum responses, and what a saved response may carry.
//!
//! The status codes, problem bodies and headers are decided in `idem_store::http`; this file
//! only copies an [`HttpResponse`] into an axum [`Response`], and says what is saved of an
//! answer: its allow-listed headers, or, for an answer too large to save, a problem in its place
//! ([`answer_too_large`], built by the store's one `problem` function).

use axum::{body::Body, response::Response};
use http::{HeaderName, HeaderValue, StatusCode};
use idem_store::http::{problem, HttpResponse};

/// The problem `type` saved in place of an answer too large to save, with that answer's
/// status; what it means is served at `GET /problems/answer-too-large` (`crate::problems`).
pub const ANSWER_TOO_LARGE: &str = "/problems/answer-too-large";

/// What is saved, and replayed, in place of a first answer of `status` larger than `limit`
/// bytes: the same status (the outcome is known: the work ran once) and a problem saying the
/// body could not be kept.
pub fn answer_too_large(status: u16, limit: usize) -> HttpResponse {
    let detail = format!(
        "The first answer to this request ({status}) was larger than the {limit} bytes this \
         server saves for replay, so its body cannot be sent again. The work ran once."
    );
    problem(
        status,
        ANSWER_TOO_LARGE,
        "Answer too large to replay",
        &detail,
        None,
    )
}

// What a saved response keeps of a first answer is a wire rule: idem-store's, so the
// simulator saves what this layer saves.
pub use idem_store::http::{is_replayed_header, to_saved, REPLAYED_HEADERS};

/// A JSON answer with `status`: `value` serialised, `Content-Type: application/json`, then
/// `headers`. A value that does not serialise (none of this crate's do) is a 500 problem.
pub fn json<T: serde::Serialize>(
    status: u16,
    value: &T,
    headers: &[(&str, String)],
) -> HttpResponse {
    let Ok(body) = serde_json::to_vec(value) else {
        return idem_store::http::internal_error();
    };
    let mut all = vec![(
        idem_store::http::CONTENT_TYPE.to_owned(),
        "application/json".to_owned(),
    )];
    all.extend(headers.iter().map(|(n, v)| ((*n).to_owned(), v.clone())));
    HttpResponse {
        status,
        headers: all,
        body,
    }
}

/// Copy `wire` into an axum response. A header that is not valid HTTP (possible only for a
/// corrupt stored row) is dropped and logged rather than failing the answer; `Set-Cookie` is
/// dropped always. A status outside 100..=999 (a corrupt row again) becomes 500.
pub fn to_response(wire: HttpResponse) -> Response {
    let status = StatusCode::from_u16(wire.status).unwrap_or_else(|_| {
        tracing::error!(status = wire.status, "saved response has an invalid status");
        StatusCode::INTERNAL_SERVER_ERROR
    });
    let mut response = Response::new(Body::from(wire.body));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    for (name, value) in wire.headers {
        let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(&value),
        ) else {
            tracing::warn!(header = %name, "dropping a response header that is not valid HTTP");
            continue;
        };
        if name == http::header::SET_COOKIE {
            continue;
        }
        headers.append(name, value);
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_status_headers_and_body() {
        let wire = HttpResponse {
            status: 201,
            headers: vec![
                ("Content-Type".into(), "application/json".into()),
                ("Location".into(), "/api/orders/7".into()),
            ],
            body: b"{\"order\":7}".to_vec(),
        };
        let response = to_response(wire);
        assert_eq!(response.status(), StatusCode::CREATED);
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(response.headers()["location"], "/api/orders/7");
    }

    #[test]
    fn never_sends_set_cookie_and_survives_corrupt_values() {
        let wire = HttpResponse {
            status: 1000,
            headers: vec![
                ("Set-Cookie".into(), "session=other-client".into()),
                ("Bad Name".into(), "x".into()),
                ("X-Ok".into(), "line\nbreak".into()),
            ],
            body: Vec::new(),
        };
        let response = to_response(wire);
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert!(response.headers().is_empty(), "{:?}", response.headers());
    }

    #[test]
    fn the_saved_response_keeps_only_allowed_headers() {
        let first = HttpResponse {
            status: 201,
            headers: vec![
                ("Content-Type".into(), "application/json".into()),
                ("Set-Cookie".into(), "session=abc".into()),
                ("Location".into(), "/api/orders/7".into()),
                ("X-Request-Id".into(), "r-1".into()),
            ],
            body: b"{}".to_vec(),
        };
        let saved = to_saved(&first);
        assert_eq!(saved.status, 201);
        assert_eq!(saved.content_type, "application/json");
        assert_eq!(
            saved.headers,
            vec![("Location".into(), "/api/orders/7".into())]
        );
        assert_eq!(saved.body, b"{}");
    }
}
