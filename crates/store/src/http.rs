//! The wire: parsing `Idempotency-Key`, and turning decisions into HTTP responses.
//!
//! `idem-client` does not depend on this crate; it agrees with it on what this module
//! exports: the header names, the status codes and the problem `type` URIs in
//! [`problem`]. Error bodies are RFC 9457 problem details (`application/problem+json`):
//!
//! | decision | status | headers | problem `type` |
//! |---|---|---|---|
//! | [`Begin::Replay`] | the saved one | `Idempotent-Replayed: true`, saved `Content-Type` | — |
//! | [`Begin::InFlight`] | 409 | `Retry-After` (seconds, rounded up) | [`problem::IN_FLIGHT`] |
//! | [`Begin::Mismatch`] | 422 | | [`problem::KEY_REUSED`] |
//! | [`RequestError::MissingKey`] | 400 | | [`problem::KEY_MISSING`] |
//! | key empty / too long / not printable / malformed header | 400 | | [`problem::KEY_INVALID`] |
//! | [`RequestError::BodyTooLarge`] | 413 | | [`problem::BODY_TOO_LARGE`] |
//! | [`RequestError::InvalidJson`] | 400 | | [`problem::INVALID_JSON`] |
//! | [`Fenced`](crate::Fenced) (see [`lease_lost`]) | 409 | `Retry-After: 1` | [`problem::LEASE_LOST`] |

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::{key, Begin, RequestError, SavedResponse};

/// Request header carrying the key (IETF draft `Idempotency-Key`, and Stripe).
pub const IDEMPOTENCY_KEY: &str = "Idempotency-Key";
/// Response header marking a replay; its value is [`REPLAYED_TRUE`].
pub const IDEMPOTENT_REPLAYED: &str = "Idempotent-Replayed";
/// The value of [`IDEMPOTENT_REPLAYED`].
pub const REPLAYED_TRUE: &str = "true";
/// Response header on 409: whole seconds to wait.
pub const RETRY_AFTER: &str = "Retry-After";
/// The content type header.
pub const CONTENT_TYPE: &str = "Content-Type";
/// Content type of problem bodies (RFC 9457).
pub const PROBLEM_JSON: &str = "application/problem+json";

/// Stable problem `type` URIs, one per error. They identify the error; they need not
/// resolve.
pub mod problem {
    /// 400: the route requires an `Idempotency-Key` and there is none.
    pub const KEY_MISSING: &str = "https://idem.dev/problems/idempotency-key-missing";
    /// 400: the key is empty, over 255 characters, not printable ASCII, or the header is
    /// malformed.
    pub const KEY_INVALID: &str = "https://idem.dev/problems/idempotency-key-invalid";
    /// 413: the request body is over the limit.
    pub const BODY_TOO_LARGE: &str = "https://idem.dev/problems/request-body-too-large";
    /// 400: the request body is not JSON.
    pub const INVALID_JSON: &str = "https://idem.dev/problems/request-body-not-json";
    /// 422: the key was first used with a different payload. Do not retry with this key.
    pub const KEY_REUSED: &str = "https://idem.dev/problems/key-reused-with-different-payload";
    /// 409: a request with this key is still being processed. Retry after `Retry-After`.
    pub const IN_FLIGHT: &str = "https://idem.dev/problems/request-in-flight";
    /// 409: this worker's claim was taken over before it could save. Retry: the new
    /// holder's answer will be replayed.
    pub const LEASE_LOST: &str = "https://idem.dev/problems/lease-lost";
}

/// An RFC 9457 problem details body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// One of the [`problem`] URIs.
    #[serde(rename = "type")]
    pub kind: String,
    /// Short summary of the problem type.
    pub title: String,
    /// The HTTP status.
    pub status: u16,
    /// What went wrong with this request.
    pub detail: String,
}

/// A response to send: status, headers in order, body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpResponse {
    /// HTTP status code.
    pub status: u16,
    /// Header name and value pairs.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// The first value of header `name`, compared case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The first answer: `saved` as it is, with its content type.
    pub fn original(saved: SavedResponse) -> Self {
        Self {
            status: saved.status,
            headers: vec![(CONTENT_TYPE.to_owned(), saved.content_type)],
            body: saved.body,
        }
    }

    /// A replay: `saved` byte for byte, plus `Idempotent-Replayed: true`.
    pub fn replayed(saved: SavedResponse) -> Self {
        let mut response = Self::original(saved);
        response
            .headers
            .push((IDEMPOTENT_REPLAYED.to_owned(), REPLAYED_TRUE.to_owned()));
        response
    }
}

/// The response a decision calls for, or `None` for [`Begin::Execute`] and
/// [`Begin::Unkeyed`] (run the work; its response is the answer).
pub fn response_for(begin: &Begin) -> Option<HttpResponse> {
    match begin {
        Begin::Execute { .. } | Begin::Unkeyed => None,
        Begin::Replay(saved) => Some(HttpResponse::replayed(saved.clone())),
        Begin::InFlight { retry_after_ms } => Some(in_flight(*retry_after_ms)),
        Begin::Mismatch => Some(problem_response(
            422,
            problem::KEY_REUSED,
            "Idempotency key reused with a different payload",
            "this key was first used with a different request body; use a new key for a new operation",
            None,
        )),
        Begin::Invalid(e) => Some(problem_for(e)),
    }
}

/// 409 for a key in flight, with `Retry-After` in whole seconds, rounded up.
pub fn in_flight(retry_after_ms: u64) -> HttpResponse {
    problem_response(
        409,
        problem::IN_FLIGHT,
        "Request in flight",
        "a request with this idempotency key is still being processed",
        Some(retry_after_secs(retry_after_ms)),
    )
}

/// 409 for a worker whose fenced write failed ([`crate::Fenced`]): its claim was taken
/// over, so the client should retry and receive the new holder's answer.
pub fn lease_lost() -> HttpResponse {
    problem_response(
        409,
        problem::LEASE_LOST,
        "Claim taken over",
        "this request's claim on the idempotency key was taken over; retry to get the result",
        Some(1),
    )
}

/// The 400 or 413 problem response for a request error.
pub fn problem_for(e: &RequestError) -> HttpResponse {
    let (kind, title) = match e {
        RequestError::MissingKey => (problem::KEY_MISSING, "Idempotency key missing"),
        RequestError::EmptyKey
        | RequestError::KeyTooLong { .. }
        | RequestError::KeyNotPrintable { .. }
        | RequestError::MalformedHeader => (problem::KEY_INVALID, "Idempotency key invalid"),
        RequestError::BodyTooLarge { .. } => (problem::BODY_TOO_LARGE, "Request body too large"),
        RequestError::InvalidJson { .. } => (problem::INVALID_JSON, "Request body is not JSON"),
    };
    problem_response(e.status(), kind, title, &e.to_string(), None)
}

/// `ceil(ms / 1000)` whole seconds; at least 1, since the lease is still live.
pub fn retry_after_secs(retry_after_ms: u64) -> u64 {
    retry_after_ms.div_ceil(1_000).max(1)
}

fn problem_response(
    status: u16,
    kind: &str,
    title: &str,
    detail: &str,
    retry_after: Option<u64>,
) -> HttpResponse {
    let problem = Problem {
        kind: kind.to_owned(),
        title: title.to_owned(),
        status,
        detail: detail.to_owned(),
    };
    // A struct of strings and an integer always serialises.
    let body = serde_json::to_vec(&problem).unwrap_or_default();
    let mut headers = vec![(CONTENT_TYPE.to_owned(), PROBLEM_JSON.to_owned())];
    if let Some(secs) = retry_after {
        headers.push((RETRY_AFTER.to_owned(), secs.to_string()));
    }
    HttpResponse {
        status,
        headers,
        body,
    }
}

/// Parse an `Idempotency-Key` header value: the IETF draft's structured-field string
/// (`"abc"`, with `\"` and `\\` escapes, parameters after it ignored) or a bare token as
/// Stripe sends it (`abc`). Surrounding spaces and tabs are ignored. The key inside must
/// be a valid [`crate::IdempotencyKey`]; borrowed unless it had escapes.
pub fn parse_key_header(value: &str) -> Result<Cow<'_, str>, RequestError> {
    let value = value.trim_matches([' ', '\t']);
    let Some(rest) = value.strip_prefix('"') else {
        return key::validate(value).map(Cow::Borrowed);
    };
    let key = parse_sf_string(rest)?;
    key::validate(&key)?;
    Ok(key)
}

/// The rest of a structured-field string after its opening quote.
fn parse_sf_string(rest: &str) -> Result<Cow<'_, str>, RequestError> {
    let bytes = rest.as_bytes();
    let mut owned: Option<String> = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                let tail = &rest[i + 1..];
                // An sf-item may carry parameters (`;a=1`); the key ignores them.
                if !(tail.is_empty() || tail.starts_with(';')) {
                    return Err(RequestError::MalformedHeader);
                }
                return Ok(owned.map_or(Cow::Borrowed(&rest[..i]), Cow::Owned));
            }
            b'\\' => {
                let escaped = match bytes.get(i + 1) {
                    Some(&c @ (b'"' | b'\\')) => c,
                    _ => return Err(RequestError::MalformedHeader),
                };
                owned
                    .get_or_insert_with(|| rest[..i].to_owned())
                    .push(char::from(escaped));
                i += 2;
            }
            c @ 0x20..=0x7e => {
                if let Some(s) = owned.as_mut() {
                    s.push(char::from(c));
                }
                i += 1;
            }
            _ => return Err(RequestError::KeyNotPrintable { index: i }),
        }
    }
    // No closing quote.
    Err(RequestError::MalformedHeader)
}

/// Format `key` as a structured-field string, the draft's form of the header value.
pub fn format_key_header(key: &str) -> String {
    let mut out = String::with_capacity(key.len() + 2);
    out.push('"');
    for c in key.chars() {
        if matches!(c, '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}
