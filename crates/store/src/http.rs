//! The wire: parsing `Idempotency-Key`, and turning decisions into HTTP responses.
//!
//! `idem-client` does not depend on this crate; it agrees with it on what this module
//! exports: the header names, the status codes and the problem `type` URIs in
//! [`problem`](mod@problem). Error bodies are RFC 9457 problem details (`application/problem+json`):
//!
//! | decision | status | headers | problem `type` |
//! |---|---|---|---|
//! | [`Begin::Replay`] | the saved one | `Idempotent-Replayed: true`, saved `Content-Type` | — |
//! | [`Begin::InFlight`] | 409 | `Retry-After` (seconds, rounded up) | [`problem::IN_FLIGHT`] |
//! | [`Begin::Mismatch`] | 422 | | [`problem::KEY_REUSED`] |
//! | [`Begin::KeyExpired`] (the expired-key guard, [`crate::first_sent`]) | 412 | | [`problem::KEY_EXPIRED`] |
//! | [`RequestError::MalformedFirstSent`] | 400 | | [`problem::FIRST_SENT_INVALID`] |
//! | [`RequestError::MissingKey`] | 400 | | [`problem::KEY_MISSING`] |
//! | key empty / too long / not printable / malformed header | 400 | | [`problem::KEY_INVALID`] |
//! | scope empty / too long / not visible ASCII | 400 | | [`problem::SCOPE_INVALID`] |
//! | [`RequestError::BodyTooLarge`] | 413 | | [`problem::BODY_TOO_LARGE`] |
//! | [`RequestError::InvalidJson`] | 400 | | [`problem::INVALID_JSON`] |
//! | [`Fenced`](crate::Fenced) (see [`lease_lost`]) | 409 | `Retry-After: 1` | [`problem::LEASE_LOST`] |
//! | no or unknown credentials (see [`unauthorized`]) | 401 | `WWW-Authenticate: Bearer realm="idem"`, plus `error="invalid_token"` for an unknown token | [`problem::UNAUTHORIZED`] |

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
/// Response header on 401: the challenge (RFC 9110 §11.6.1), a Bearer one (RFC 6750 §3).
pub const WWW_AUTHENTICATE: &str = "WWW-Authenticate";
/// The `realm` of every challenge idem's services send (RFC 6750 §3: the protection space).
pub const REALM: &str = "idem";
/// The content type header.
pub const CONTENT_TYPE: &str = "Content-Type";
/// Content type of problem bodies (RFC 9457).
pub const PROBLEM_JSON: &str = "application/problem+json";

/// Stable problem `type`s, one per error: relative references, `/problems/<name>`.
///
/// RFC 9457 §3.1.1 lets `type` be a relative URI reference, resolved against the request's
/// URI, so `/problems/request-in-flight` answered by `https://shop.example/api/checkout` names
/// `https://shop.example/problems/request-in-flight`: the deployer's own origin, which may serve
/// a short description there. No domain the project does not own appears on the wire. They
/// identify the error: a client compares the string as sent (idem-client does not resolve it).
pub mod problem {
    /// 400: the route requires an `Idempotency-Key` and there is none.
    pub const KEY_MISSING: &str = "/problems/idempotency-key-missing";
    /// 400: the key is empty, over 255 characters, not printable ASCII, or the header is
    /// malformed.
    pub const KEY_INVALID: &str = "/problems/idempotency-key-invalid";
    /// 413: the request body is over the limit.
    pub const BODY_TOO_LARGE: &str = "/problems/request-body-too-large";
    /// 400: the scope (tenant) is empty, over 255 bytes or not visible ASCII: no tenant id
    /// looks like that, so the server's scope extractor or the caller is broken.
    pub const SCOPE_INVALID: &str = "/problems/scope-invalid";
    /// 400: the request body is not JSON.
    pub const INVALID_JSON: &str = "/problems/request-body-not-json";
    /// 422: the key was first used with a different payload. Do not retry with this key.
    pub const KEY_REUSED: &str = "/problems/key-reused-with-different-payload";
    /// 412: the key's record is gone (past retention) and this request was first sent longer
    /// ago than that (its `Repeatability-First-Sent`): it may have run already, so it is not
    /// run again. Reconcile (ask what became of the operation) before paying again.
    pub const KEY_EXPIRED: &str = "/problems/key-expired";
    /// 400: the `Repeatability-First-Sent` header is not an HTTP-date.
    pub const FIRST_SENT_INVALID: &str = "/problems/first-sent-invalid";
    /// 409: a request with this key is still being processed. Retry after `Retry-After`.
    pub const IN_FLIGHT: &str = "/problems/request-in-flight";
    /// 409: this worker's claim was taken over before it could save. Retry: the new
    /// holder's answer will be replayed.
    pub const LEASE_LOST: &str = "/problems/lease-lost";
    /// 401: no credentials, or none the server knows (the scope extractor's refusal).
    pub const UNAUTHORIZED: &str = "/problems/unauthorized";
    /// 404: no such resource.
    pub const NOT_FOUND: &str = "/problems/not-found";
    /// 405: the resource does not take this method.
    pub const METHOD_NOT_ALLOWED: &str = "/problems/method-not-allowed";
    /// 408: the request was not received in time.
    pub const REQUEST_TIMEOUT: &str = "/problems/request-timeout";
    /// 500: the server failed; nothing about the request's key was decided by it.
    pub const INTERNAL: &str = "/problems/internal-error";
    /// 502: a downstream service answered something unexpected or not at all. Retry.
    pub const BAD_GATEWAY: &str = "/problems/bad-gateway";
    /// 503: the database (or another dependency) is unavailable. Retry after `Retry-After`.
    pub const UNAVAILABLE: &str = "/problems/unavailable";
}

/// An RFC 9457 problem details body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    /// One of the [`problem`](mod@problem) URIs.
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

    /// The first answer: `saved` as it is, with its content type, then its saved headers.
    pub fn original(saved: SavedResponse) -> Self {
        let mut headers = Vec::with_capacity(saved.headers.len() + 2);
        headers.push((CONTENT_TYPE.to_owned(), saved.content_type));
        headers.extend(saved.headers);
        Self {
            status: saved.status,
            headers,
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
        Begin::Mismatch => Some(problem(
            422,
            problem::KEY_REUSED,
            "Idempotency key reused with a different payload",
            "this key was first used with a different request body; use a new key for a new operation",
            None,
        )),
        Begin::KeyExpired => Some(problem(
            412,
            problem::KEY_EXPIRED,
            "Key expired: reconcile before paying again",
            "this request was first sent longer ago than the server keeps idempotency keys, and no record of its key is left: it may have run already, so it was not run again; find out what became of it before sending it under a new key",
            None,
        )),
        Begin::Invalid(e) => Some(problem_for(e)),
    }
}

/// 409 for a key in flight, with `Retry-After` in whole seconds, rounded up.
pub fn in_flight(retry_after_ms: u64) -> HttpResponse {
    problem(
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
    problem(
        409,
        problem::LEASE_LOST,
        "Claim taken over",
        "this request's claim on the idempotency key was taken over; retry to get the result",
        Some(1),
    )
}

/// What a 401's challenge tells the client about the credentials it sent (RFC 6750 §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Challenge {
    /// No bearer token came (none at all, or another scheme): the bare challenge, no error
    /// code, as RFC 6750 §3.1 asks for a client that may not know authentication is needed.
    TokenMissing,
    /// A bearer token the server does not accept: `error="invalid_token"`.
    TokenInvalid,
}

impl Challenge {
    /// The `WWW-Authenticate` value: `Bearer realm="idem"`, and for
    /// [`TokenInvalid`](Self::TokenInvalid) `, error="invalid_token"`.
    pub fn header_value(self) -> String {
        match self {
            Self::TokenMissing => format!("Bearer realm=\"{REALM}\""),
            Self::TokenInvalid => format!("Bearer realm=\"{REALM}\", error=\"invalid_token\""),
        }
    }
}

/// 401 with its `WWW-Authenticate` challenge (RFC 9110 §15.5.2: a 401 MUST carry one): no
/// credentials, or unknown ones, as `challenge` says.
pub fn unauthorized(challenge: Challenge, detail: &str) -> HttpResponse {
    let mut response = problem(401, problem::UNAUTHORIZED, "Unauthorized", detail, None);
    response
        .headers
        .push((WWW_AUTHENTICATE.to_owned(), challenge.header_value()));
    response
}

/// 404: no such resource.
pub fn not_found(detail: &str) -> HttpResponse {
    problem(404, problem::NOT_FOUND, "Not found", detail, None)
}

/// 405: the resource does not take this method.
pub fn method_not_allowed() -> HttpResponse {
    let detail = "the resource does not take this method";
    problem(
        405,
        problem::METHOD_NOT_ALLOWED,
        "Method not allowed",
        detail,
        None,
    )
}

/// 408: the request (its headers or its body) was not received in time.
pub fn request_timeout() -> HttpResponse {
    let detail = "the request was not received in time";
    problem(
        408,
        problem::REQUEST_TIMEOUT,
        "Request timeout",
        detail,
        None,
    )
}

/// 500: the server failed (a handler panicked, a stored row is corrupt).
pub fn internal_error() -> HttpResponse {
    let detail = "the server failed to process the request";
    problem(500, problem::INTERNAL, "Internal error", detail, None)
}

/// 502 with `Retry-After`: a downstream service failed; the client should retry.
pub fn bad_gateway(detail: &str, retry_after_secs: u64) -> HttpResponse {
    let title = "Bad gateway";
    problem(
        502,
        problem::BAD_GATEWAY,
        title,
        detail,
        Some(retry_after_secs),
    )
}

/// 503 with `Retry-After`: the database is unavailable; nothing was decided.
pub fn unavailable(retry_after_secs: u64) -> HttpResponse {
    let detail = "the service's database is unavailable; retry later";
    let title = "Service unavailable";
    problem(
        503,
        problem::UNAVAILABLE,
        title,
        detail,
        Some(retry_after_secs),
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
        RequestError::EmptyScope
        | RequestError::ScopeTooLong { .. }
        | RequestError::ScopeNotVisible { .. } => (problem::SCOPE_INVALID, "Scope invalid"),
        RequestError::BodyTooLarge { .. } => (problem::BODY_TOO_LARGE, "Request body too large"),
        RequestError::InvalidJson { .. } => (problem::INVALID_JSON, "Request body is not JSON"),
        RequestError::MalformedFirstSent => (
            problem::FIRST_SENT_INVALID,
            "Repeatability-First-Sent invalid",
        ),
    };
    problem(e.status(), kind, title, &e.to_string(), None)
}

/// `ceil(ms / 1000)` whole seconds; at least 1, since the lease is still live.
pub fn retry_after_secs(retry_after_ms: u64) -> u64 {
    retry_after_ms.div_ceil(1_000).max(1)
}

/// A problem response (RFC 9457): `kind` is one of the [`problem`](mod@problem) URIs; with
/// `retry_after`, a `Retry-After` header in whole seconds. Every problem body of idem is
/// written here.
pub fn problem(
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

/// Response headers a saved response keeps for its replays, besides `Content-Type`
/// (lowercase). Anything else the handler set, `Set-Cookie` above all, is not saved: a replay
/// must never hand one client's session to another request.
pub const REPLAYED_HEADERS: &[&str] = &["location"];

/// Whether a response header belongs in the saved response (see [`REPLAYED_HEADERS`]).
pub fn is_replayed_header(name: &str) -> bool {
    REPLAYED_HEADERS
        .iter()
        .any(|allowed| allowed.eq_ignore_ascii_case(name))
}

/// The response a handler answered, as it will be saved for replay: status, content type,
/// body byte for byte, and only the [`REPLAYED_HEADERS`]. Everything else (`Set-Cookie`,
/// caching headers, per-request ids) stays with the first answer.
pub fn to_saved(first: &HttpResponse) -> SavedResponse {
    let content_type = first
        .header(CONTENT_TYPE)
        .unwrap_or("application/octet-stream")
        .to_owned();
    let headers = first
        .headers
        .iter()
        .filter(|(name, _)| is_replayed_header(name))
        .cloned()
        .collect();
    SavedResponse {
        status: first.status,
        content_type,
        headers,
        body: first.body.clone(),
    }
}

/// Parse an `Idempotency-Key` header value: the IETF draft's structured-field string
/// (`"abc"`, with `\"` and `\\` escapes, RFC 8941 §3.3.3) or a bare token as Stripe sends
/// it (`abc`). Surrounding spaces and tabs are ignored. The key inside must be a valid
/// [`crate::IdempotencyKey`]; borrowed unless it had escapes.
///
/// A structured-field string may carry parameters (`"abc";v=1`, RFC 8941 §3.1.2): they
/// must be well formed (a lowercase key, optionally `=` and a bare item) and are ignored.
/// A bare token is taken whole, up to the trimmed ends: `abc;v=1` is the key `abc;v=1`,
/// as Stripe would read it.
pub fn parse_key_header(value: &str) -> Result<Cow<'_, str>, RequestError> {
    let value = value.trim_matches([' ', '\t']);
    let Some(rest) = value.strip_prefix('"') else {
        return key::validate(value).map(Cow::Borrowed);
    };
    let (key, tail) = parse_sf_string(rest)?;
    check_parameters(tail)?;
    key::validate(&key)?;
    Ok(key)
}

/// The rest of a structured-field string after its opening quote: the unescaped string
/// and what follows its closing quote.
fn parse_sf_string(rest: &str) -> Result<(Cow<'_, str>, &str), RequestError> {
    let bytes = rest.as_bytes();
    let mut owned: Option<String> = None;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                // `i` is the closing quote, an ASCII byte: both cuts are char boundaries.
                let (text, tail) = (&rest[..i], &rest[i + 1..]);
                return Ok((owned.map_or(Cow::Borrowed(text), Cow::Owned), tail));
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

/// Check what follows the key's closing quote: nothing, or RFC 8941 parameters
/// (`*( ";" *SP key [ "=" bare-item ] )`, §3.1.2).
fn check_parameters(mut tail: &str) -> Result<(), RequestError> {
    while let Some(rest) = tail.strip_prefix(';') {
        let rest = rest.trim_start_matches(' ');
        tail = sf_key(rest).ok_or(RequestError::MalformedHeader)?;
        if let Some(value) = tail.strip_prefix('=') {
            tail = sf_bare_item(value).ok_or(RequestError::MalformedHeader)?;
        }
    }
    if tail.is_empty() {
        Ok(())
    } else {
        Err(RequestError::MalformedHeader)
    }
}

/// What follows a parameter key (`( lcalpha / "*" ) *( lcalpha / DIGIT / "_" / "-" / "." /
/// "*" )`), or `None` if `s` does not start with one.
fn sf_key(s: &str) -> Option<&str> {
    let rest = s.strip_prefix(|c: char| c.is_ascii_lowercase() || c == '*')?;
    Some(rest.trim_start_matches(|c: char| {
        c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-' | '.' | '*')
    }))
}

/// What follows a bare item (integer, decimal, string, token, byte sequence or boolean,
/// RFC 8941 §3.3), or `None` if `s` does not start with one.
fn sf_bare_item(s: &str) -> Option<&str> {
    if let Some(rest) = s.strip_prefix('"') {
        return parse_sf_string(rest).ok().map(|(_, tail)| tail);
    }
    if let Some(rest) = s.strip_prefix('?') {
        return rest.strip_prefix(['0', '1']);
    }
    if let Some(rest) = s.strip_prefix(':') {
        let rest =
            rest.trim_start_matches(|c: char| c.is_ascii_alphanumeric() || "+/=".contains(c));
        return rest.strip_prefix(':');
    }
    if let Some(rest) = s.strip_prefix(|c: char| c.is_ascii_alphabetic() || c == '*') {
        let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~:/".contains(c);
        return Some(rest.trim_start_matches(tchar));
    }
    sf_number(s.strip_prefix('-').unwrap_or(s))
}

/// What follows an unsigned integer (1 to 15 digits) or decimal (1 to 12 digits, `.`, 1 to
/// 3 digits).
fn sf_number(s: &str) -> Option<&str> {
    fn skip_digits(s: &str) -> &str {
        s.trim_start_matches(|c: char| c.is_ascii_digit())
    }
    let rest = skip_digits(s);
    let int = s.len() - rest.len();
    let Some(fraction) = rest.strip_prefix('.') else {
        return (1..=15).contains(&int).then_some(rest);
    };
    let after = skip_digits(fraction);
    let frac = fraction.len() - after.len();
    ((1..=12).contains(&int) && (1..=3).contains(&frac)).then_some(after)
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

#[cfg(test)]
mod tests {
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;
    use crate::{IdempotencyKey, Lease, RecordId};

    fn problem_of(r: &HttpResponse) -> Problem {
        assert_eq!(r.header(CONTENT_TYPE), Some(PROBLEM_JSON));
        serde_json::from_slice(&r.body).unwrap()
    }

    #[test]
    fn parses_a_structured_field_string() {
        assert_eq!(parse_key_header("\"abc-1\""), Ok(Cow::Borrowed("abc-1")));
        assert_eq!(parse_key_header("  \"abc\"\t"), Ok(Cow::Borrowed("abc")));
        assert_eq!(parse_key_header("\"a b\""), Ok(Cow::Borrowed("a b")));
        assert_eq!(parse_key_header("\"abc\";v=1"), Ok(Cow::Borrowed("abc")));
    }

    #[test]
    fn ignores_well_formed_parameters() {
        for value in [
            r#""abc";v=1"#,
            r#""abc";v"#,
            r#""abc"; v=1;  w=?0"#,
            r#""abc";*x.y_z-1=-12.345"#,
            r#""abc";a=123456789012345;b=-0.1"#,
            r#""abc";a="x\"y\\z";b=tok:en/1;c=*t;d=:aGk=:;e=?1"#,
            "\"abc\";v=1 \t",
        ] {
            assert_eq!(parse_key_header(value), Ok(Cow::Borrowed("abc")), "{value}");
        }
    }

    #[test]
    fn rejects_malformed_parameters() {
        for value in [
            r#""abc";"#,
            r#""abc";;v=1"#,
            r#""abc" ;v=1"#,
            r#""abc";V=1"#,
            r#""abc";1v"#,
            r#""abc";v="#,
            r#""abc";v=1,2"#,
            r#""abc";v=1234567890123456"#,
            r#""abc";v=1234567890123.1"#,
            r#""abc";v=1.1234"#,
            r#""abc";v=1."#,
            r#""abc";v=-"#,
            r#""abc";v=?2"#,
            r#""abc";v=:aGk="#,
            r#""abc";v="x"#,
            r#""abc";v="\n""#,
            r#""abc";v="é""#,
            r#""abc";v=é"#,
            r#""abc";v=1;"#,
            r#""abc";v=1 w"#,
        ] {
            assert_eq!(
                parse_key_header(value),
                Err(RequestError::MalformedHeader),
                "{value}"
            );
        }
    }

    /// Every short header value over the characters the parser branches on: no panic, and
    /// every accepted key is a valid [`IdempotencyKey`].
    #[test]
    fn any_short_header_parses_without_panicking() {
        const ALPHABET: [char; 12] = ['"', '\\', ';', '=', 'a', 'é', ' ', ':', '?', '1', '.', '-'];
        let mut value = String::new();
        for n in 0..ALPHABET.len().pow(5) {
            value.clear();
            let mut n = n;
            for _ in 0..5 {
                value.push(ALPHABET[n % ALPHABET.len()]);
                n /= ALPHABET.len();
            }
            if let Ok(key) = parse_key_header(&value) {
                assert!(IdempotencyKey::parse(&key).is_ok(), "{value:?} -> {key:?}");
            }
        }
    }

    #[test]
    fn a_bare_token_is_taken_whole() {
        assert_eq!(parse_key_header("abc;v=1"), Ok(Cow::Borrowed("abc;v=1")));
        assert_eq!(parse_key_header(r#"a"b"#), Ok(Cow::Borrowed(r#"a"b"#)));
    }

    #[test]
    fn unescapes_a_structured_field_string() {
        let key = parse_key_header(r#""a\"b\\c""#).unwrap();
        assert!(matches!(key, Cow::Owned(_)));
        assert_eq!(key, r#"a"b\c"#);
    }

    #[test]
    fn parses_a_bare_token() {
        let uuid = "550e8400-e29b-41d4-a716-446655440000";
        assert_eq!(parse_key_header(uuid), Ok(Cow::Borrowed(uuid)));
        assert_eq!(parse_key_header(" tok "), Ok(Cow::Borrowed("tok")));
    }

    #[test]
    fn rejects_malformed_headers() {
        for value in [r#""abc"#, r#""a\nb""#, r#""abc"x"#, r#""a\"#] {
            assert_eq!(
                parse_key_header(value),
                Err(RequestError::MalformedHeader),
                "{value}"
            );
        }
        assert_eq!(parse_key_header("\"\""), Err(RequestError::EmptyKey));
        assert_eq!(parse_key_header("   "), Err(RequestError::EmptyKey));
        assert_eq!(
            parse_key_header("\"é\""),
            Err(RequestError::KeyNotPrintable { index: 0 })
        );
        assert_eq!(
            parse_key_header("a\u{1}b"),
            Err(RequestError::KeyNotPrintable { index: 1 })
        );
        let long = format!("\"{}\"", "k".repeat(256));
        assert_eq!(
            parse_key_header(&long),
            Err(RequestError::KeyTooLong { len: 256 })
        );
    }

    #[test]
    fn formatting_round_trips() {
        for key in ["abc", r#"a"b"#, r"a\b", " x "] {
            assert_eq!(parse_key_header(&format_key_header(key)).unwrap(), key);
        }
        assert_eq!(format_key_header(r#"a"b"#), r#""a\"b""#);
    }

    #[test]
    fn replay_is_byte_for_byte_and_marked() {
        let saved = SavedResponse::json(201, b"{\"order\":17}".to_vec())
            .with_header("Location", "/api/orders/17");
        let r = response_for(&Begin::Replay(saved.clone())).unwrap();
        assert_eq!(r.status, 201);
        assert_eq!(r.body, saved.body);
        assert_eq!(r.header("idempotent-replayed"), Some("true"));
        assert_eq!(r.header(CONTENT_TYPE), Some("application/json"));
        assert_eq!(r.header("location"), Some("/api/orders/17"));
        let first = HttpResponse::original(saved);
        assert_eq!(first.header(IDEMPOTENT_REPLAYED), None);
    }

    #[test]
    fn in_flight_is_409_with_retry_after_rounded_up() {
        for (ms, secs) in [
            (1, "1"),
            (999, "1"),
            (1_000, "1"),
            (1_001, "2"),
            (9_500, "10"),
        ] {
            let r = response_for(&Begin::InFlight { retry_after_ms: ms }).unwrap();
            assert_eq!(r.status, 409);
            assert_eq!(r.header(RETRY_AFTER), Some(secs), "{ms} ms");
            let p = problem_of(&r);
            assert_eq!((p.kind.as_str(), p.status), (problem::IN_FLIGHT, 409));
        }
    }

    #[test]
    fn mismatch_is_422() {
        let r = response_for(&Begin::Mismatch).unwrap();
        assert_eq!(r.status, 422);
        assert_eq!(r.header(RETRY_AFTER), None);
        let p = problem_of(&r);
        assert_eq!(p.kind, problem::KEY_REUSED);
        assert_eq!(p.kind, "/problems/key-reused-with-different-payload");
        assert_eq!(p.status, 422);
    }

    #[test]
    fn each_request_error_has_its_status_and_type() {
        let cases = [
            (RequestError::MissingKey, 400, problem::KEY_MISSING),
            (RequestError::EmptyKey, 400, problem::KEY_INVALID),
            (
                RequestError::KeyTooLong { len: 300 },
                400,
                problem::KEY_INVALID,
            ),
            (
                RequestError::KeyNotPrintable { index: 0 },
                400,
                problem::KEY_INVALID,
            ),
            (RequestError::MalformedHeader, 400, problem::KEY_INVALID),
            (RequestError::EmptyScope, 400, problem::SCOPE_INVALID),
            (
                RequestError::ScopeTooLong { len: 300 },
                400,
                problem::SCOPE_INVALID,
            ),
            (
                RequestError::ScopeNotVisible { index: 1 },
                400,
                problem::SCOPE_INVALID,
            ),
            (
                RequestError::BodyTooLarge { len: 9, limit: 8 },
                413,
                problem::BODY_TOO_LARGE,
            ),
            (
                RequestError::InvalidJson { line: 1, column: 2 },
                400,
                problem::INVALID_JSON,
            ),
        ];
        for (e, status, kind) in cases {
            let r = response_for(&Begin::Invalid(e.clone())).unwrap();
            assert_eq!(r.status, status, "{e}");
            let p = problem_of(&r);
            assert_eq!((p.kind.as_str(), p.status), (kind, status), "{e}");
            assert_eq!(p.detail, e.to_string());
        }
    }

    #[test]
    fn execute_and_unkeyed_have_no_canned_response() {
        let id = RecordId::new("t", IdempotencyKey::parse("k").unwrap());
        let lease = Lease {
            locked_at: 0,
            token: 1,
        };
        let execute = Begin::Execute {
            id,
            lease,
            taken_over: false,
        };
        assert_eq!(response_for(&execute), None);
        assert_eq!(response_for(&Begin::Unkeyed), None);
    }

    #[test]
    fn lease_lost_is_409() {
        let r = lease_lost();
        assert_eq!(r.status, 409);
        assert_eq!(r.header(RETRY_AFTER), Some("1"));
        assert_eq!(problem_of(&r).kind, problem::LEASE_LOST);
    }

    #[test]
    fn the_server_problems_have_their_status_type_and_retry_after() {
        for (r, status, kind, retry) in [
            (
                unauthorized(Challenge::TokenMissing, "no token"),
                401,
                problem::UNAUTHORIZED,
                None,
            ),
            (not_found("no order 9"), 404, problem::NOT_FOUND, None),
            (method_not_allowed(), 405, problem::METHOD_NOT_ALLOWED, None),
            (request_timeout(), 408, problem::REQUEST_TIMEOUT, None),
            (internal_error(), 500, problem::INTERNAL, None),
            (
                bad_gateway("payco", 2),
                502,
                problem::BAD_GATEWAY,
                Some("2"),
            ),
            (unavailable(3), 503, problem::UNAVAILABLE, Some("3")),
        ] {
            assert_eq!(r.status, status);
            assert_eq!(r.header(RETRY_AFTER), retry, "{status}");
            let p = problem_of(&r);
            assert_eq!((p.kind.as_str(), p.status), (kind, status));
        }
        let missing = unauthorized(Challenge::TokenMissing, "no token");
        assert_eq!(problem_of(&missing).detail, "no token");
    }

    /// RFC 9110 §15.5.2: every 401 carries a challenge; RFC 6750 §3.1: an error code only
    /// when a token came and was refused.
    #[test]
    fn a_401_carries_its_bearer_challenge() {
        let missing = unauthorized(Challenge::TokenMissing, "no token");
        assert_eq!(
            missing.header(WWW_AUTHENTICATE),
            Some(r#"Bearer realm="idem""#)
        );
        let invalid = unauthorized(Challenge::TokenInvalid, "unknown token");
        assert_eq!(
            invalid.header(WWW_AUTHENTICATE),
            Some(r#"Bearer realm="idem", error="invalid_token""#)
        );
        assert_eq!(invalid.header(CONTENT_TYPE), Some(PROBLEM_JSON));
    }

    /// Relative references under `/problems/`, lowercase words and hyphens: the deployer's
    /// origin resolves them, and no outside domain is on the wire.
    #[test]
    fn problem_types_are_distinct_relative_references() {
        let all = [
            problem::KEY_MISSING,
            problem::KEY_INVALID,
            problem::SCOPE_INVALID,
            problem::BODY_TOO_LARGE,
            problem::INVALID_JSON,
            problem::KEY_REUSED,
            problem::IN_FLIGHT,
            problem::LEASE_LOST,
            problem::UNAUTHORIZED,
            problem::NOT_FOUND,
            problem::METHOD_NOT_ALLOWED,
            problem::REQUEST_TIMEOUT,
            problem::INTERNAL,
            problem::BAD_GATEWAY,
            problem::UNAVAILABLE,
        ];
        let mut sorted = all.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), all.len());
        for t in all {
            let name = t
                .strip_prefix("/problems/")
                .unwrap_or_else(|| panic!("{t}"));
            let word = |c: char| c.is_ascii_lowercase() || c == '-';
            assert!(!name.is_empty() && name.chars().all(word), "{t}");
        }
    }

    #[test]
    fn only_location_is_replayed() {
        assert!(is_replayed_header("Location"));
        assert!(!is_replayed_header("Set-Cookie"));
        assert!(!is_replayed_header("Content-Length"));
    }
}
