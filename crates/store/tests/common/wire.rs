//! The wire contract between `idem-store` and `idem-client`, as literal responses.
//!
//! The two crates do not depend on each other (ARCHITECTURE.md, "Layers"): they agree on status codes,
//! headers and problem bodies. This table pins that agreement in one place.
//! `crates/store/tests/wire.rs` checks that the store's `http` module writes exactly these
//! responses; `crates/client/tests/wire.rs` (which includes this file by path) checks that
//! the client reads each one as intended. A change on either side turns one of them red.

/// One response the store writes, and what the client must read from it.
pub struct WireCase {
    /// What the store decided.
    pub name: &'static str,
    /// HTTP status.
    pub status: u16,
    /// Headers, in the order the store writes them.
    pub headers: &'static [(&'static str, &'static str)],
    /// The body, byte for byte.
    pub body: &'static str,
    /// `Retry-After` as the client converts it, in milliseconds.
    pub retry_after_ms: Option<u64>,
    /// Whether the client sees a replay.
    pub replayed: bool,
    /// The problem `type` the client reads from the body.
    pub problem_type: Option<&'static str>,
}

pub const CASES: &[WireCase] = &[
    WireCase {
        name: "in flight, 1 500 ms left",
        status: 409,
        headers: &[
            ("Content-Type", "application/problem+json"),
            ("Retry-After", "2"),
        ],
        body: r#"{"type":"/problems/request-in-flight","title":"Request in flight","status":409,"detail":"a request with this idempotency key is still being processed"}"#,
        retry_after_ms: Some(2_000),
        replayed: false,
        problem_type: Some("/problems/request-in-flight"),
    },
    WireCase {
        name: "lease lost",
        status: 409,
        headers: &[
            ("Content-Type", "application/problem+json"),
            ("Retry-After", "1"),
        ],
        body: r#"{"type":"/problems/lease-lost","title":"Claim taken over","status":409,"detail":"this request's claim on the idempotency key was taken over; retry to get the result"}"#,
        retry_after_ms: Some(1_000),
        replayed: false,
        problem_type: Some("/problems/lease-lost"),
    },
    WireCase {
        name: "mismatch",
        status: 422,
        headers: &[("Content-Type", "application/problem+json")],
        body: r#"{"type":"/problems/key-reused-with-different-payload","title":"Idempotency key reused with a different payload","status":422,"detail":"this key was first used with a different request body; use a new key for a new operation"}"#,
        retry_after_ms: None,
        replayed: false,
        problem_type: Some("/problems/key-reused-with-different-payload"),
    },
    WireCase {
        name: "key expired",
        status: 412,
        headers: &[("Content-Type", "application/problem+json")],
        body: r#"{"type":"/problems/key-expired","title":"Key expired: reconcile before paying again","status":412,"detail":"this request was first sent longer ago than the server keeps idempotency keys, and no record of its key is left: it may have run already, so it was not run again; find out what became of it before sending it under a new key"}"#,
        retry_after_ms: None,
        replayed: false,
        problem_type: Some("/problems/key-expired"),
    },
    WireCase {
        name: "missing key",
        status: 400,
        headers: &[("Content-Type", "application/problem+json")],
        body: r#"{"type":"/problems/idempotency-key-missing","title":"Idempotency key missing","status":400,"detail":"idempotency key missing"}"#,
        retry_after_ms: None,
        replayed: false,
        problem_type: Some("/problems/idempotency-key-missing"),
    },
    WireCase {
        name: "body too large",
        status: 413,
        headers: &[("Content-Type", "application/problem+json")],
        body: r#"{"type":"/problems/request-body-too-large","title":"Request body too large","status":413,"detail":"request body is 70000 bytes, the limit is 65536"}"#,
        retry_after_ms: None,
        replayed: false,
        problem_type: Some("/problems/request-body-too-large"),
    },
    WireCase {
        name: "no token",
        status: 401,
        headers: &[
            ("Content-Type", "application/problem+json"),
            ("WWW-Authenticate", r#"Bearer realm="idem""#),
        ],
        body: r#"{"type":"/problems/unauthorized","title":"Unauthorized","status":401,"detail":"missing bearer token"}"#,
        retry_after_ms: None,
        replayed: false,
        problem_type: Some("/problems/unauthorized"),
    },
    WireCase {
        name: "unknown token",
        status: 401,
        headers: &[
            ("Content-Type", "application/problem+json"),
            (
                "WWW-Authenticate",
                r#"Bearer realm="idem", error="invalid_token""#,
            ),
        ],
        body: r#"{"type":"/problems/unauthorized","title":"Unauthorized","status":401,"detail":"unknown bearer token"}"#,
        retry_after_ms: None,
        replayed: false,
        problem_type: Some("/problems/unauthorized"),
    },
    WireCase {
        name: "replay",
        status: 201,
        headers: &[
            ("Content-Type", "application/json"),
            ("Idempotent-Replayed", "true"),
        ],
        body: r#"{"order":17}"#,
        retry_after_ms: None,
        replayed: true,
        problem_type: None,
    },
];
