//! Idempotency keys and record identity.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::RequestError;

/// Longest accepted key, in characters.
pub const MAX_KEY_LEN: usize = 255;

/// A validated idempotency key: 1 to 255 characters of printable ASCII (0x20..=0x7E,
/// the character set of a structured-field string).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct IdempotencyKey(String);

impl IdempotencyKey {
    /// Validate `key` and copy it.
    pub fn parse(key: &str) -> Result<Self, RequestError> {
        validate(key).map(|k| Self(k.to_owned()))
    }

    /// A key the caller vouches for (validated earlier, or read back from a table).
    pub(crate) fn unchecked(key: &str) -> Self {
        debug_assert!(validate(key).is_ok(), "invalid key {key:?}");
        Self(key.to_owned())
    }

    /// The key as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Check `key` against the rules of [`IdempotencyKey`] without copying it.
pub(crate) fn validate(key: &str) -> Result<&str, RequestError> {
    if key.is_empty() {
        return Err(RequestError::EmptyKey);
    }
    if let Some(index) = key.bytes().position(|b| !(0x20..=0x7e).contains(&b)) {
        return Err(RequestError::KeyNotPrintable { index });
    }
    // Only ASCII is left, so bytes are characters.
    if key.len() > MAX_KEY_LEN {
        return Err(RequestError::KeyTooLong { len: key.len() });
    }
    Ok(key)
}

impl TryFrom<&str> for IdempotencyKey {
    type Error = RequestError;

    fn try_from(key: &str) -> Result<Self, Self::Error> {
        Self::parse(key)
    }
}

impl TryFrom<String> for IdempotencyKey {
    type Error = RequestError;

    fn try_from(key: String) -> Result<Self, Self::Error> {
        validate(&key)?;
        Ok(Self(key))
    }
}

impl From<IdempotencyKey> for String {
    fn from(key: IdempotencyKey) -> Self {
        key.0
    }
}

impl AsRef<str> for IdempotencyKey {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for IdempotencyKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

/// The identity of a record: (scope, key). The same key in two scopes (tenants) is two
/// operations.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct RecordId {
    scope: String,
    key: IdempotencyKey,
}

impl RecordId {
    /// The identity of `key` in `scope`.
    pub fn new(scope: impl Into<String>, key: IdempotencyKey) -> Self {
        Self {
            scope: scope.into(),
            key,
        }
    }

    /// The scope (tenant).
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The key.
    pub fn key(&self) -> &IdempotencyKey {
        &self.key
    }

    /// A borrowed view, as [`crate::Table`] methods take it.
    pub fn as_ref(&self) -> IdRef<'_> {
        IdRef {
            scope: &self.scope,
            key: self.key.as_str(),
        }
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.scope, self.key)
    }
}

/// A borrowed record identity, so lookups need not allocate. A SQL table binds the two
/// strings as parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IdRef<'a> {
    /// The scope (tenant).
    pub scope: &'a str,
    /// The key, already validated by whoever made the [`RecordId`] or called the store.
    pub key: &'a str,
}

impl<'a> IdRef<'a> {
    /// An owned [`RecordId`], validating the key.
    pub fn to_owned(self) -> Result<RecordId, RequestError> {
        Ok(RecordId::new(self.scope, IdempotencyKey::parse(self.key)?))
    }
}

impl<'a> From<&'a RecordId> for IdRef<'a> {
    fn from(id: &'a RecordId) -> Self {
        id.as_ref()
    }
}

#[cfg(test)]
mod tests {
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::*;

    #[test]
    fn accepts_printable_ascii_up_to_255() {
        for key in [
            "a",
            " ",
            "~",
            "550e8400-e29b-41d4-a716-446655440000",
            "a b\"c\\d",
        ] {
            assert_eq!(IdempotencyKey::parse(key).unwrap().as_str(), key);
        }
        let longest = "x".repeat(MAX_KEY_LEN);
        assert_eq!(
            IdempotencyKey::try_from(longest.as_str()).unwrap().as_str(),
            longest
        );
    }

    #[test]
    fn rejects_empty() {
        assert_eq!(IdempotencyKey::parse(""), Err(RequestError::EmptyKey));
    }

    #[test]
    fn rejects_over_255() {
        let key = "x".repeat(MAX_KEY_LEN + 1);
        assert_eq!(
            IdempotencyKey::parse(&key),
            Err(RequestError::KeyTooLong { len: 256 })
        );
    }

    #[test]
    fn rejects_control_and_non_ascii() {
        for (key, index) in [
            ("\u{1f}", 0),
            ("a\u{7f}", 1),
            ("ab\r\n", 2),
            ("é", 0),
            ("key-\u{1F600}", 4),
        ] {
            assert_eq!(
                IdempotencyKey::parse(key),
                Err(RequestError::KeyNotPrintable { index }),
                "{key:?}"
            );
        }
    }

    #[test]
    fn deserialising_validates() {
        let ok: IdempotencyKey = serde_json::from_str("\"k-1\"").unwrap();
        assert_eq!(ok.as_str(), "k-1");
        assert!(serde_json::from_str::<IdempotencyKey>("\"\"").is_err());
        assert!(serde_json::from_str::<IdempotencyKey>("\"\\n\"").is_err());
    }

    #[test]
    fn record_ids_differ_by_scope() {
        let key = IdempotencyKey::parse("k").unwrap();
        let a = RecordId::new("a", key.clone());
        let b = RecordId::new("b", key);
        assert_ne!(a, b);
        assert_eq!(a.to_string(), "a/k");
        assert_eq!(a.as_ref().to_owned(), Ok(a.clone()));
    }
}
