//! Errors at the store's boundary.

use serde::Serialize;

/// Why a request was refused before any decision about its key (HTTP 400 or 413).
///
/// Every variant is decided before the table is read: a refused request leaves no row.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, thiserror::Error)]
pub enum RequestError {
    /// The route requires an `Idempotency-Key` and the request has none.
    #[error("idempotency key missing")]
    MissingKey,
    /// The key is the empty string.
    #[error("idempotency key is empty")]
    EmptyKey,
    /// The key is longer than [`crate::MAX_KEY_LEN`] characters.
    #[error("idempotency key is {len} characters long, the limit is 255")]
    KeyTooLong {
        /// Length of the key.
        len: usize,
    },
    /// The key holds a byte outside printable ASCII (0x20..=0x7E).
    #[error("idempotency key has a character that is not printable ascii at byte {index}")]
    KeyNotPrintable {
        /// Byte offset of the first offending character.
        index: usize,
    },
    /// The scope (tenant) is empty.
    #[error("scope is empty")]
    EmptyScope,
    /// The scope is longer than [`crate::MAX_SCOPE_LEN`] bytes.
    #[error("scope is {len} bytes long, the limit is 255")]
    ScopeTooLong {
        /// Length of the scope in bytes.
        len: usize,
    },
    /// The scope holds a byte outside visible ASCII (0x21..=0x7E): a space, a control
    /// character or a non-ASCII byte, which no tenant id is made of.
    #[error("scope has a character that is not visible ascii at byte {index}")]
    ScopeNotVisible {
        /// Byte offset of the first offending character.
        index: usize,
    },
    /// The `Idempotency-Key` header is neither a structured-field string nor a bare token.
    #[error("idempotency key header is malformed")]
    MalformedHeader,
    /// The `Repeatability-First-Sent` header is not an HTTP-date ([`crate::first_sent`]).
    #[error("repeatability-first-sent is not an http-date (\"sun, 06 nov 1994 08:49:37 gmt\")")]
    MalformedFirstSent,
    /// The body is larger than [`crate::StoreConfig::max_body_bytes`] (HTTP 413).
    #[error("request body is {len} bytes, the limit is {limit}")]
    BodyTooLarge {
        /// Body length in bytes.
        len: usize,
        /// The configured limit.
        limit: usize,
    },
    /// The body is not valid JSON, so it has no fingerprint.
    #[error("request body is not valid json (line {line}, column {column})")]
    InvalidJson {
        /// Line of the error, 1-based (0 at end of input).
        line: usize,
        /// Column of the error, 1-based.
        column: usize,
    },
}

impl RequestError {
    /// The HTTP status for this error: 413 for [`RequestError::BodyTooLarge`], else 400.
    pub const fn status(&self) -> u16 {
        match self {
            Self::BodyTooLarge { .. } => 413,
            _ => 400,
        }
    }
}

/// A fenced write found the record no longer in flight under the caller's lease: it was
/// taken over, released, saved or pruned. Nothing was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
#[error("lease lost: the claim was taken over or is gone")]
pub struct Fenced;
