//! What a caller asks for: one operation's name, method, payload and persistence rule.

use crate::error::StartError;
use crate::method::{KeyUse, Method};
use crate::payload::CanonicalPayload;

/// What the caller wants done: one logical operation.
///
/// `P` is the payload: a `serde_json::Value` (the default), canonicalized by
/// [`Operation::start`](crate::Operation::start), or a [`CanonicalPayload`] already in canonical form (the browser
/// bindings canonicalize with the browser's own JSON and hand the bytes over this way). Either
/// way the same state machine runs.
#[derive(Clone, Debug, PartialEq)]
pub struct OperationSpec<P = serde_json::Value> {
    /// A stable name for the logical operation, e.g. `checkout:cart-42`; the journal's key.
    pub name: String,
    /// The HTTP method.
    pub method: Method,
    /// The JSON payload (canonicalized before anything is stored or sent).
    pub payload: P,
    /// Whether to send an `Idempotency-Key` (default: on POST and PATCH).
    pub key_use: KeyUse,
    /// What to do when the key cannot be persisted (default: refuse to send).
    pub persistence: Persistence,
}

impl OperationSpec {
    /// A POST of `payload` named `name`, keyed, with a persisted key required.
    pub fn post(name: impl Into<String>, payload: serde_json::Value) -> Self {
        OperationSpec::with_payload(name, payload)
    }
}

impl OperationSpec<CanonicalPayload> {
    /// A POST of the canonical `payload` named `name`, keyed, with a persisted key required.
    pub fn post_canonical(name: impl Into<String>, payload: CanonicalPayload) -> Self {
        OperationSpec::with_payload(name, payload)
    }
}

impl<P: IntoCanonical> OperationSpec<P> {
    /// The same spec with its payload in canonical form.
    pub(super) fn into_canonical(self) -> Result<OperationSpec<CanonicalPayload>, StartError> {
        Ok(OperationSpec {
            name: self.name,
            method: self.method,
            payload: self.payload.into_canonical()?,
            key_use: self.key_use,
            persistence: self.persistence,
        })
    }
}

impl<P> OperationSpec<P> {
    fn with_payload(name: impl Into<String>, payload: P) -> Self {
        OperationSpec {
            name: name.into(),
            method: Method::Post,
            payload,
            key_use: KeyUse::Auto,
            persistence: Persistence::Required,
        }
    }

    /// The same operation with another method.
    pub fn with_method(mut self, method: Method) -> Self {
        self.method = method;
        self
    }

    /// The same operation with another key choice.
    pub fn with_key_use(mut self, key_use: KeyUse) -> Self {
        self.key_use = key_use;
        self
    }

    /// The same operation with another persistence requirement.
    pub fn with_persistence(mut self, persistence: Persistence) -> Self {
        self.persistence = persistence;
        self
    }
}

/// A payload [`Operation::start`](crate::Operation::start) can turn into canonical bytes: a `serde_json::Value`
/// (canonicalized, RFC 8785) or a [`CanonicalPayload`] (taken as is).
pub trait IntoCanonical {
    /// The canonical bytes and their fingerprint.
    fn into_canonical(self) -> Result<CanonicalPayload, StartError>;
}

impl IntoCanonical for serde_json::Value {
    fn into_canonical(self) -> Result<CanonicalPayload, StartError> {
        CanonicalPayload::new(&self)
    }
}

impl IntoCanonical for CanonicalPayload {
    fn into_canonical(self) -> Result<CanonicalPayload, StartError> {
        Ok(self)
    }
}

/// Whether an operation may run with a key that is not in the journal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Persistence {
    /// The key must be in the journal before the first send; otherwise
    /// [`StartError::NotPersisted`] and nothing is sent.
    #[default]
    Required,
    /// If the journal fails, keep the key in memory and send anyway; the outcome says
    /// [`Durability::MemoryOnly`](crate::Durability::MemoryOnly). A reload then loses the key (and a retry after it would
    /// carry a new one): an explicit choice for pages that prefer that to not paying at all.
    AllowMemoryOnly,
}
