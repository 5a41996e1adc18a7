//! Canonical payload bytes and their fingerprint.

use serde::{Deserialize, Serialize};

use crate::digest::sha256_hex;
use crate::error::StartError;

/// A payload in canonical JSON (RFC 8785: sorted keys, normalised numbers, no whitespace) and
/// the SHA-256 of those bytes in lowercase hex.
///
/// These exact bytes go on every attempt, so key order or whitespace in the caller's object can
/// never make a retry look like a different request to the server.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CanonicalPayload {
    /// The canonical JSON text.
    pub json: String,
    /// SHA-256 of `json`, lowercase hex (64 characters).
    pub fingerprint: String,
}

impl CanonicalPayload {
    /// Canonicalizes `payload`.
    pub fn new(payload: &serde_json::Value) -> Result<Self, StartError> {
        let json = serde_json_canonicalizer::to_string(payload)
            .map_err(|e| StartError::Payload(e.to_string()))?;
        Ok(Self::from_canonical(json))
    }

    /// Wraps text already in canonical form (e.g. read back from the journal) and fingerprints it.
    pub fn from_canonical(json: String) -> Self {
        let fingerprint = sha256_hex(json.as_bytes());
        CanonicalPayload { json, fingerprint }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_order_and_whitespace_do_not_change_bytes() {
        let a: serde_json::Value =
            serde_json::from_str(r#"{ "currency": "EUR", "amount": 1299 }"#).unwrap();
        let b: serde_json::Value =
            serde_json::from_str(r#"{"amount":1299,"currency":"EUR"}"#).unwrap();
        let (a, b) = (
            CanonicalPayload::new(&a).unwrap(),
            CanonicalPayload::new(&b).unwrap(),
        );
        assert_eq!(a, b);
        assert_eq!(a.json, r#"{"amount":1299,"currency":"EUR"}"#);
        assert_eq!(a.fingerprint.len(), 64);
    }

    #[test]
    fn numbers_are_normalised() {
        let a: serde_json::Value = serde_json::from_str(r#"{"x": 1.0e2}"#).unwrap();
        assert_eq!(CanonicalPayload::new(&a).unwrap().json, r#"{"x":100}"#);
    }
}
