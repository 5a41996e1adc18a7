//! The error returned when an operation cannot start.

use crate::journal::JournalError;

/// Why [`Operation::start`](crate::Operation::start) refused to start (or resume) an operation.
///
/// Failures *after* the start (network, timeouts, server errors) are not errors: they end in an
/// [`Outcome`](crate::Outcome).
#[derive(Debug)]
pub enum StartError {
    /// The payload could not be turned into canonical JSON (RFC 8785), e.g. a non-finite number.
    Payload(String),
    /// An operation with this name is pending with a different payload or method; resuming it
    /// under a new payload would trip the server's mismatch check, and a new key could charge
    /// twice. Finish, reconcile or discard the pending one first.
    PendingWithDifferentPayload {
        /// The operation's name.
        name: String,
        /// The key of the pending operation.
        key: String,
    },
    /// The operation with this name already got its final answer, for a different payload or
    /// method, and its key is still kept (see [`SettledRecord`](crate::journal::SettledRecord)).
    /// Sending the new payload under that key would be a 422; under a new key it could be a
    /// second charge the caller did not mean. Discard the settled entry first (that is how a
    /// page pays again, say with another card: a new operation with a new key).
    SettledWithDifferentPayload {
        /// The operation's name.
        name: String,
        /// The key of the settled operation.
        key: String,
    },
    /// The key could not be persisted (storage blocked, full...), so it is not sent: it could be
    /// lost on reload. Opt into
    /// [`Persistence::AllowMemoryOnly`](crate::Persistence::AllowMemoryOnly) to send anyway.
    NotPersisted(JournalError),
    /// The journal holds something under this name that cannot be resumed (corrupt, foreign, or
    /// written by a newer format). It is left untouched; discard it explicitly to start over.
    Unreadable(JournalError),
}

impl StartError {
    /// The error in words (what `Display` writes; built without `core::fmt`, which the browser
    /// package avoids).
    pub fn message(&self) -> String {
        match self {
            StartError::Payload(why) => ["payload is not canonicalizable JSON: ", why].concat(),
            StartError::PendingWithDifferentPayload { name, key } => [
                "operation ",
                name,
                " is pending with a different payload (key ",
                key,
                ")",
            ]
            .concat(),
            StartError::SettledWithDifferentPayload { name, key } => [
                "operation ",
                name,
                " already settled with a different payload (key ",
                key,
                "); discard it to start a new one",
            ]
            .concat(),
            StartError::NotPersisted(e) => {
                ["key not persisted, not sending: ", &e.message()].concat()
            }
            StartError::Unreadable(e) => ["journal record unreadable: ", &e.message()].concat(),
        }
    }
}

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for StartError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            StartError::NotPersisted(e) | StartError::Unreadable(e) => Some(e),
            _ => None,
        }
    }
}
