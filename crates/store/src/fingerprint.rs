//! Request fingerprints: SHA-256 of the operation and the body's canonical JSON (RFC 8785).

use std::{fmt, io};

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use sha2::{Digest, Sha256};

use crate::RequestError;

/// SHA-256 of a request's operation and canonical JSON. Bodies that differ only in key
/// order, whitespace or number spelling (`1.0` vs `1`) share a fingerprint; the same body
/// sent to two operations (`POST /api/checkout`, `POST /api/refund`) does not.
///
/// The hashed bytes are the operation's length (4 bytes, big-endian), the operation, then
/// the canonical JSON: the length prefix keeps every (operation, body) pair apart, whatever
/// characters the operation holds.
///
/// Serialises as 64 lowercase hex digits.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Fingerprint(pub [u8; 32]);

/// Fingerprint a JSON request body sent to `operation` (the route's
/// [`RouteConfig::operation`](crate::RouteConfig::operation)). Invalid JSON is
/// [`RequestError::InvalidJson`] (a 400), never a panic; so are nesting deeper than 128 levels
/// and an object with the same member name twice (RFC 8785 takes I-JSON, RFC 7493, which
/// forbids duplicate names: the two readings of such a body would be two different requests).
pub fn fingerprint(operation: &str, body: &[u8]) -> Result<Fingerprint, RequestError> {
    let value = serde_json::from_slice::<Strict>(body).map_err(invalid)?.0;
    let mut hasher = HashWriter(operation_hasher(operation));
    // Writing into a hasher cannot fail, and a parsed Value always serialises.
    serde_json_canonicalizer::to_writer(&value, &mut hasher).map_err(invalid)?;
    Ok(Fingerprint(hasher.0.finalize().into()))
}

/// A JSON body as a value, refused as [`fingerprint`] refuses it.
pub(crate) fn parse(body: &[u8]) -> Result<serde_json::Value, RequestError> {
    Ok(serde_json::from_slice::<Strict>(body).map_err(invalid)?.0)
}

/// A JSON value's canonical bytes (RFC 8785).
pub(crate) fn canonical(value: &serde_json::Value) -> Result<Vec<u8>, RequestError> {
    serde_json_canonicalizer::to_vec(value).map_err(invalid)
}

/// The SHA-256 state after the operation's part of the fingerprint.
fn operation_hasher(operation: &str) -> Sha256 {
    let mut hasher = Sha256::new();
    hasher.update(operation_len(operation));
    hasher.update(operation.as_bytes());
    hasher
}

/// The operation's length prefix: 4 big-endian bytes. An operation longer than 4 GiB cannot
/// come from a route table; saturating keeps the prefix total instead of panicking.
fn operation_len(operation: &str) -> [u8; 4] {
    u32::try_from(operation.len())
        .unwrap_or(u32::MAX)
        .to_be_bytes()
}

/// SHA-256 of the concatenation of `parts`. Not inlined: a wasm build that hashes in two places
/// (the SDK's payload digest and [`Fingerprint::of_canonical`]) links one copy of sha2's
/// buffering, padding and finalisation instead of one per call site (about 0.5 KB gzip).
#[inline(never)]
pub fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().into()
}

fn invalid(e: serde_json::Error) -> RequestError {
    RequestError::InvalidJson {
        line: e.line(),
        column: e.column(),
    }
}

/// A JSON value whose objects have no duplicate member names.
struct Strict(serde_json::Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> serde::de::Visitor<'de> for StrictVisitor {
    type Value = serde_json::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Self::Value, E> {
        serde_json::Number::from_f64(v)
            .map(serde_json::Value::Number)
            .ok_or_else(|| E::custom("number out of range"))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(v.into())
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(serde_json::Value::Null)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(Strict(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(serde_json::Value::Array(items))
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = serde_json::Map::new();
        while let Some(name) = map.next_key::<String>()? {
            if members.contains_key(&name) {
                return Err(serde::de::Error::custom(format_args!(
                    "duplicate member name {name:?}"
                )));
            }
            let Strict(value) = map.next_value()?;
            members.insert(name, value);
        }
        Ok(serde_json::Value::Object(members))
    }
}

/// Feeds the canonical JSON into the hash without building the string.
struct HashWriter(Sha256);

impl io::Write for HashWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Fingerprint {
    /// The fingerprint of a body the caller knows to be canonical JSON already (RFC 8785,
    /// as the SDK's canonical payload is): [`fingerprint`] without parsing, so a caller
    /// that never sees other bodies (the simulator) links no JSON parser. For any other
    /// body, use [`fingerprint`]: a non-canonical spelling here gives another fingerprint.
    pub fn of_canonical(operation: &str, canonical_json: &[u8]) -> Self {
        let len = operation_len(operation);
        Self(sha256(&[&len, operation.as_bytes(), canonical_json]))
    }

    /// All 64 hex digits.
    pub fn to_hex(&self) -> String {
        let mut s = String::with_capacity(64);
        for b in self.0 {
            push_hex(&mut s, b);
        }
        s
    }

    /// The first 12 hex digits, for display.
    pub fn short_hex(&self) -> String {
        let mut s = String::with_capacity(12);
        for &b in &self.0[..6] {
            push_hex(&mut s, b);
        }
        s
    }

    /// Parse 64 hex digits.
    pub fn from_hex(hex: &str) -> Option<Self> {
        let bytes = hex.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (o, pair) in out.iter_mut().zip(bytes.chunks_exact(2)) {
            *o = (nibble(pair[0])? << 4) | nibble(pair[1])?;
        }
        Some(Self(out))
    }
}

fn push_hex(s: &mut String, b: u8) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    s.push(DIGITS[usize::from(b >> 4)] as char);
    s.push(DIGITS[usize::from(b & 0xf)] as char);
}

fn nibble(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for Fingerprint {
    /// The short form; `{:#}` prints all 64 digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if f.alternate() {
            f.write_str(&self.to_hex())
        } else {
            f.write_str(&self.short_hex())
        }
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({})", self.short_hex())
    }
}

impl Serialize for Fingerprint {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> Deserialize<'de> for Fingerprint {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let hex = String::deserialize(d)?;
        Self::from_hex(&hex).ok_or_else(|| serde::de::Error::custom("expected 64 hex digits"))
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    const OP: &str = "POST /api/checkout";

    fn fp(body: &str) -> Fingerprint {
        fingerprint(OP, body.as_bytes()).unwrap()
    }

    #[test]
    fn key_order_and_whitespace_do_not_matter() {
        let a = fp(r#"{"cart":"c-1","amount":4200,"items":[{"sku":"a","qty":1}]}"#);
        let b = fp("{\n  \"items\" : [ { \"qty\":1, \"sku\":\"a\" } ],\n\t\"amount\":4200 , \"cart\":\"c-1\"}\n");
        assert_eq!(a, b);
    }

    #[test]
    fn numbers_are_normalised() {
        assert_eq!(fp(r#"{"a":1.0}"#), fp(r#"{"a":1}"#));
        assert_eq!(fp(r#"{"a":1e2}"#), fp(r#"{"a":100}"#));
        assert_eq!(fp(r#"{"a":"\u0041"}"#), fp(r#"{"a":"A"}"#));
    }

    #[test]
    fn different_parameters_differ() {
        assert_ne!(fp(r#"{"amount":4200}"#), fp(r#"{"amount":4201}"#));
        assert_ne!(fp(r#"{"amount":4200}"#), fp(r#"{"amount":"4200"}"#));
        assert_ne!(fp(r#"[1,2]"#), fp(r#"[2,1]"#), "array order matters");
        assert_ne!(fp(r#"{"a":null}"#), fp(r#"{}"#));
    }

    #[test]
    fn is_sha256_of_the_operation_and_the_canonical_form() {
        // Canonical form of the body below is {"a":1,"b":[true,null]}; the operation is
        // 18 bytes long.
        let mut hashed = vec![0, 0, 0, 18];
        hashed.extend_from_slice(b"POST /api/checkout");
        hashed.extend_from_slice(br#"{"a":1,"b":[true,null]}"#);
        let expected = Sha256::digest(&hashed);
        assert_eq!(
            fp(r#"{ "b": [true, null], "a": 1.00 }"#).0,
            <[u8; 32]>::from(expected)
        );
        assert_eq!(
            Fingerprint::of_canonical(OP, br#"{"a":1,"b":[true,null]}"#),
            fp(r#"{ "b": [true, null], "a": 1.00 }"#)
        );
    }

    #[test]
    fn the_operation_is_part_of_the_fingerprint() {
        let body = br#"{"amount":4200}"#;
        let checkout = fingerprint("POST /api/checkout", body).unwrap();
        assert_ne!(checkout, fingerprint("POST /api/refund", body).unwrap());
        assert_ne!(checkout, fingerprint("PUT /api/checkout", body).unwrap());
        // Same length, other text.
        assert_ne!(checkout, fingerprint("POST /api/shipping", body).unwrap());
        // The length prefix keeps the boundary: "a" + "bc" is not "ab" + "c".
        assert_ne!(
            Fingerprint::of_canonical("a", b"bc"),
            Fingerprint::of_canonical("ab", b"c")
        );
    }

    #[test]
    fn invalid_json_is_an_error_not_a_panic() {
        let deep = "[".repeat(100_000);
        for body in [
            &b""[..],
            b"{",
            b"{\"a\":}",
            b"nul",
            b"{\"a\":1}}",
            b"\xff",
            b"1e999",
            deep.as_bytes(),
        ] {
            match fingerprint(OP, body) {
                Err(e @ RequestError::InvalidJson { .. }) => assert_eq!(e.status(), 400),
                other => panic!("{:?}: {other:?}", String::from_utf8_lossy(body)),
            }
        }
    }

    #[test]
    fn duplicate_member_names_are_invalid_json() {
        for (body, at) in [
            (r#"{"a":1,"a":1}"#, (1, 10)),
            (r#"{"a":1,"b":{"c":[{"d":0,"d":1}]}}"#, (1, 27)),
            ("{\"a\":1,\n\"\\u0061\":2}", (2, 8)),
        ] {
            match fingerprint(OP, body.as_bytes()) {
                Err(e @ RequestError::InvalidJson { line, column }) => {
                    assert_eq!(e.status(), 400);
                    assert_eq!((line, column), at, "{body}");
                }
                other => panic!("{body}: {other:?}"),
            }
        }
        // The same name in two different objects is fine.
        assert!(fingerprint(OP, br#"{"a":{"a":1},"b":[{"a":1},{"a":2}]}"#).is_ok());
    }

    #[test]
    fn hex_forms() {
        let f = fp("{}");
        let hex = f.to_hex();
        assert_eq!(hex.len(), 64);
        assert_eq!(f.short_hex(), hex[..12]);
        assert_eq!(f.to_string(), f.short_hex());
        assert_eq!(format!("{f:#}"), hex);
        assert_eq!(Fingerprint::from_hex(&hex), Some(f));
        assert_eq!(Fingerprint::from_hex(&hex[1..]), None);
        assert_eq!(Fingerprint::from_hex(&"g".repeat(64)), None);
        let json = serde_json::to_string(&f).unwrap();
        assert_eq!(json, format!("\"{hex}\""));
        assert_eq!(serde_json::from_str::<Fingerprint>(&json).unwrap(), f);
    }
}
