//! Journal failures: storage that cannot be reached or written, and stored text that is not a
//! record this crate can read.

use crate::json::u64_string;

/// A journal failure. None of them is a panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JournalError {
    /// Storage cannot be reached at all (e.g. `SecurityError`: storage blocked, no window).
    Unavailable(String),
    /// The write did not fit (`QuotaExceededError`).
    QuotaExceeded,
    /// Any other write failure.
    Write(String),
    /// The value under this name is not a record of ours (corrupt, or written by someone else).
    Corrupt {
        /// The operation name.
        name: String,
    },
    /// The record has a format version this reader does not understand (written by a newer
    /// idem-client; or, for [`decode`](super::decode), which reads open records only, a
    /// settled entry).
    UnsupportedVersion {
        /// The operation name.
        name: String,
        /// The version found.
        found: u32,
    },
    /// The record has an older format version and lacks what a migration needs (key and body).
    Outdated {
        /// The operation name.
        name: String,
        /// The version found.
        found: u32,
    },
}

impl JournalError {
    /// The error in words (what `Display` writes; built without `core::fmt`, which the browser
    /// package avoids).
    pub fn message(&self) -> String {
        match self {
            JournalError::Unavailable(why) => ["storage unavailable: ", why].concat(),
            JournalError::QuotaExceeded => "storage quota exceeded".to_owned(),
            JournalError::Write(why) => ["storage write failed: ", why].concat(),
            JournalError::Corrupt { name } => ["record ", name, " is corrupt or foreign"].concat(),
            JournalError::UnsupportedVersion { name, found } => [
                "record ",
                name,
                " has format version ",
                &u64_string(u64::from(*found)),
                ", written by a newer idem-client than this reader",
            ]
            .concat(),
            JournalError::Outdated { name, found } => [
                "record ",
                name,
                " has old format version ",
                &u64_string(u64::from(*found)),
                " and cannot be migrated",
            ]
            .concat(),
        }
    }
}

impl std::fmt::Display for JournalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for JournalError {}
