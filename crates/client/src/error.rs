//! The error returned when an operation cannot start.

use thiserror::Error;

use crate::journal::JournalError;

/// Why [`Operation::start`](crate::Operation::start) refused to start (or resume) an operation.
///
/// Failures *after* the start (network, timeouts, server errors) are not errors: they end in an
/// [`Outcome`](crate::Outcome).
#[derive(Debug, Error)]
pub enum StartError {
    /// The payload could not be turned into canonical JSON (RFC 8785), e.g. a non-finite number.
    #[error("payload is not canonicalizable JSON: {0}")]
    Payload(String),
    /// An operation with this name is pending with a different payload or method; resuming it
    /// under a new payload would trip the server's mismatch check, and a new key could charge
    /// twice. Finish, reconcile or discard the pending one first.
    #[error("operation {name} is pending with a different payload (key {key})")]
    PendingWithDifferentPayload {
        /// The operation's name.
        name: String,
        /// The key of the pending operation.
        key: String,
    },
    /// The key could not be persisted (storage blocked, full...), so it is not sent: it could be
    /// lost on reload. Opt into
    /// [`Persistence::AllowMemoryOnly`](crate::Persistence::AllowMemoryOnly) to send anyway.
    #[error("key not persisted, not sending: {0}")]
    NotPersisted(#[source] JournalError),
    /// The journal holds something under this name that cannot be resumed (corrupt, foreign, or
    /// written by a newer format). It is left untouched; discard it explicitly to start over.
    #[error("journal record unreadable: {0}")]
    Unreadable(#[source] JournalError),
}
