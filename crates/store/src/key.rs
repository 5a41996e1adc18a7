//! Idempotency keys and record identity.

use std::{
    borrow::Borrow,
    fmt,
    hash::{Hash, Hasher},
    sync::Arc,
};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::RequestError;

/// Longest accepted key, in characters.
pub const MAX_KEY_LEN: usize = 255;

/// Longest accepted scope (tenant id), in bytes.
pub const MAX_SCOPE_LEN: usize = 255;

/// A validated idempotency key: 1 to 255 characters of printable ASCII (0x20..=0x7E,
/// the character set of a structured-field string). Cheap to clone (shared).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct IdempotencyKey(Arc<str>);

impl IdempotencyKey {
    /// Validate `key` and copy it.
    pub fn parse(key: &str) -> Result<Self, RequestError> {
        validate(key).map(|k| Self(k.into()))
    }

    /// A key the caller vouches for (validated earlier, or read back from a table).
    pub(crate) fn unchecked(key: &str) -> Self {
        debug_assert!(validate(key).is_ok(), "invalid key {key:?}");
        Self(key.into())
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
    if let Some(index) = first_outside(key, 0x20, 0x7e) {
        return Err(RequestError::KeyNotPrintable { index });
    }
    // Only ASCII is left, so bytes are characters.
    if key.len() > MAX_KEY_LEN {
        return Err(RequestError::KeyTooLong { len: key.len() });
    }
    Ok(key)
}

/// The offset of the first byte of `s` outside `lo..=hi`, if any. A branch-free pass
/// first (it vectorises); the culprit is looked for only on failure.
#[inline]
fn first_outside(s: &str, lo: u8, hi: u8) -> Option<usize> {
    let inside = |b: u8| (lo..=hi).contains(&b);
    if s.bytes().fold(true, |ok, b| ok & inside(b)) {
        return None;
    }
    s.bytes().position(|b| !inside(b))
}

/// Check a scope: 1 to [`MAX_SCOPE_LEN`] bytes of visible ASCII (0x21..=0x7E). A scope is
/// a tenant id the server derived (from a token, a header, a path), so it is checked like a
/// key, a little stricter: no spaces. One that fails could never name a real tenant; the
/// request is a 400 and leaves no row.
pub fn validate_scope(scope: &str) -> Result<&str, RequestError> {
    if scope.is_empty() {
        return Err(RequestError::EmptyScope);
    }
    if let Some(index) = first_outside(scope, 0x21, 0x7e) {
        return Err(RequestError::ScopeNotVisible { index });
    }
    if scope.len() > MAX_SCOPE_LEN {
        return Err(RequestError::ScopeTooLong { len: scope.len() });
    }
    Ok(scope)
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
        Ok(Self(key.into()))
    }
}

impl From<IdempotencyKey> for String {
    fn from(key: IdempotencyKey) -> Self {
        key.0.as_ref().to_owned()
    }
}

impl Borrow<str> for IdempotencyKey {
    fn borrow(&self) -> &str {
        &self.0
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
/// operations. Cheap to clone (shared strings).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct RecordId {
    scope: Arc<str>,
    key: IdempotencyKey,
}

impl RecordId {
    /// The identity of `key` in `scope`.
    pub fn new(scope: impl AsRef<str>, key: IdempotencyKey) -> Self {
        Self {
            scope: scope.as_ref().into(),
            key,
        }
    }

    /// The scope (tenant).
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// A record id from a shared scope and a key validated earlier.
    pub(crate) fn from_shared(scope: Arc<str>, key: &str) -> Self {
        Self {
            scope,
            key: IdempotencyKey::unchecked(key),
        }
    }

    pub(crate) fn into_parts(self) -> (Arc<str>, IdempotencyKey) {
        (self.scope, self.key)
    }

    pub(crate) fn scope_shared(&self) -> Arc<str> {
        Arc::clone(&self.scope)
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

impl fmt::Debug for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecordId")
            .field("scope", &self.scope())
            .field("key", &self.key)
            .finish()
    }
}

impl fmt::Display for RecordId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.scope, self.key)
    }
}

/// Hashes (scope, key) with the function the in-memory table also applies to a borrowed
/// [`IdRef`], so a map keyed by `RecordId` can be searched without allocating.
impl Hash for RecordId {
    fn hash<H: Hasher>(&self, h: &mut H) {
        hash_pair(self.pair(), h);
    }
}

/// The hash of an id is the hash of its key alone, one `write`; equality still compares
/// the scope too. This is the hot path: with the standard library's SipHash the scope's
/// bytes (and a length to keep ("ab", "c") apart from ("a", "bc")) cost about 15% of a
/// claim → save → replay cycle (`benches/cycle.rs`).
///
/// Leaving the scope out can only put the same key in different scopes into one bucket
/// chain, and a client chooses keys in its own scope only, so such a chain is at most as
/// long as the number of scopes holding that key. The map keeps the standard library's
/// randomly keyed SipHash, so a client cannot aim keys at one bucket either (HashDoS).
fn hash_pair<H: Hasher>((_scope, key): (&str, &str), h: &mut H) {
    h.write(key.as_bytes());
}

/// (scope, key) as borrowed strings: the common form of [`RecordId`] and [`IdRef`], so a
/// `HashMap<RecordId, _>` can be searched by `&dyn IdPair`.
pub(crate) trait IdPair {
    fn pair(&self) -> (&str, &str);
}

impl IdPair for RecordId {
    fn pair(&self) -> (&str, &str) {
        (&self.scope, self.key.as_str())
    }
}

impl IdPair for IdRef<'_> {
    fn pair(&self) -> (&str, &str) {
        (self.scope, self.key)
    }
}

impl<'a> Borrow<dyn IdPair + 'a> for RecordId {
    fn borrow(&self) -> &(dyn IdPair + 'a) {
        self
    }
}

impl Hash for dyn IdPair + '_ {
    fn hash<H: Hasher>(&self, h: &mut H) {
        hash_pair(self.pair(), h);
    }
}

impl PartialEq for dyn IdPair + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.pair() == other.pair()
    }
}

impl Eq for dyn IdPair + '_ {}

#[derive(Serialize, Deserialize)]
struct RecordIdWire<S> {
    scope: S,
    key: S,
}

impl Serialize for RecordId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (scope, key) = self.pair();
        RecordIdWire { scope, key }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for RecordId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = RecordIdWire::<String>::deserialize(d)?;
        let key = IdempotencyKey::try_from(wire.key).map_err(serde::de::Error::custom)?;
        Ok(Self::new(wire.scope, key))
    }
}

/// Hands out one shared copy of the scope most recently asked for: requests come in
/// runs of the same tenant, so most claims and events need no allocation for it.
#[derive(Debug, Clone, Default)]
pub(crate) struct ScopeCache(Option<Arc<str>>);

impl ScopeCache {
    pub(crate) fn get(&mut self, scope: &str) -> Arc<str> {
        match &self.0 {
            Some(last) if **last == *scope => Arc::clone(last),
            _ => Arc::clone(self.0.insert(scope.into())),
        }
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

    /// An owned [`RecordId`] for a key validated earlier.
    pub(crate) fn to_owned_unchecked(self) -> RecordId {
        RecordId::new(self.scope, IdempotencyKey::unchecked(self.key))
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
    fn scopes_are_visible_ascii_up_to_255_bytes() {
        for scope in ["t", "tenant-a", "acme:eu/1", &"s".repeat(MAX_SCOPE_LEN)] {
            assert_eq!(validate_scope(scope), Ok(scope));
        }
        assert_eq!(validate_scope(""), Err(RequestError::EmptyScope));
        assert_eq!(
            validate_scope(&"s".repeat(MAX_SCOPE_LEN + 1)),
            Err(RequestError::ScopeTooLong { len: 256 })
        );
        for (scope, index) in [
            (" ", 0),
            ("tenant a", 6),
            ("t\n", 1),
            ("t\u{0}", 1),
            ("tenant-\u{e9}", 7),
            ("t\u{7f}", 1),
        ] {
            assert_eq!(
                validate_scope(scope),
                Err(RequestError::ScopeNotVisible { index }),
                "{scope:?}"
            );
        }
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
