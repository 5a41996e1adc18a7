//! Reconciling an unknown outcome: the state of one key of one tenant, for a client whose
//! retry window closed without an answer ("did my charge happen?").
//!
//! [`key_state`] reads the row in one round trip and says: in flight (with the lease's
//! age: the work may still commit, ask again later), released (the work failed without an
//! answer to save: nothing is committed, and a retry of the same request under the same key
//! runs it again), or done (the saved status, headers and body, exactly what a retry would
//! replay). A key that was never claimed, is past
//! retention, or belongs to another tenant is `None` (404): there is no way to learn
//! anything about another tenant's keys. `GET /api/keys/{key}` serves it ([`route`]).
//!
//! Every state names the request that holds the key: its fingerprint (and, over HTTP, the
//! operation the endpoint answers for), so a client checks the answer is its own request's
//! before taking it: a key reused with another body keeps the first body's answer, which is
//! never the second body's.

pub mod route;

use base64::Engine as _;
use idem_store::{Fingerprint, IdRef, IdempotencyKey, Status};
use serde::Serialize;

use crate::db::{Db, DbError};

/// One key's state, as `GET /api/keys/{key}` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum KeyState {
    /// Claimed, not finished: a worker holds (or held) the lease.
    InFlight {
        /// The key.
        key: String,
        /// The fingerprint of the request that holds the key (its first): only that request's
        /// retries are answered by this state; any other is refused (422).
        fingerprint: Fingerprint,
        /// How long ago the current lease was taken, in ms.
        lease_age_ms: u64,
        /// Time left before a retry may take the claim over, in ms (0: stale, the next
        /// retry takes it over and resumes the work).
        lease_left_ms: u64,
        /// When the key was first claimed (ms since the epoch).
        created_at: u64,
    },
    /// Given back after a failure that saved no answer (a declined charge under the
    /// `release-claim` policy, or a charge whose outcome the worker could not learn):
    /// nothing is committed under the key. It stays bound to its first request until
    /// `expires_at`: a retry with the same request (same key, same body) claims it again
    /// and resumes the work where it stopped (the same order, the same downstream key);
    /// another request under it is 422.
    Released {
        /// The key.
        key: String,
        /// The fingerprint of the request that holds the key (its first): only that request's
        /// retries are answered by this state; any other is refused (422).
        fingerprint: Fingerprint,
        /// When the key was first claimed (ms since the epoch).
        created_at: u64,
        /// When retention ends and the key is forgotten (ms since the epoch).
        expires_at: u64,
    },
    /// Finished: a retry with the same request replays this response.
    Done {
        /// The key.
        key: String,
        /// The fingerprint of the request that holds the key (its first): only that request's
        /// retries are answered by this state; any other is refused (422).
        fingerprint: Fingerprint,
        /// The saved HTTP status.
        status: u16,
        /// Its content type.
        content_type: String,
        /// The replayed headers (e.g. `Location`).
        headers: Vec<(String, String)>,
        /// The body, when it is UTF-8 text (JSON bodies are).
        #[serde(skip_serializing_if = "Option::is_none")]
        body: Option<String>,
        /// The body in standard base64, when it is not UTF-8.
        #[serde(skip_serializing_if = "Option::is_none")]
        body_base64: Option<String>,
        /// When the key was first claimed (ms since the epoch).
        created_at: u64,
        /// When retention ends and the key is forgotten (ms since the epoch).
        expires_at: u64,
    },
}

/// Why a key-state question has no answer.
#[derive(Debug, thiserror::Error)]
pub enum KeyStateError {
    /// The key is not a valid idempotency key (400).
    #[error(transparent)]
    InvalidKey(#[from] idem_store::RequestError),
    /// The database failed.
    #[error(transparent)]
    Db(#[from] DbError),
}

/// The state of (`scope`, `key`) at `now` (or on the database's clock, when the db measures
/// leases there), `None` when there is no live row.
pub async fn key_state(
    db: &Db,
    now: u64,
    scope: &str,
    key: &str,
) -> Result<Option<KeyState>, KeyStateError> {
    let key = IdempotencyKey::parse(key)?;
    let (record, now) = db
        .read(
            now,
            IdRef {
                scope,
                key: key.as_str(),
            },
        )
        .await?;
    let lock_ms = db.config().lock_ms;
    let Some(record) = record.filter(|r| !r.is_expired(now, lock_ms)) else {
        return Ok(None);
    };
    let key = key.as_str().to_owned();
    let fingerprint = record.fingerprint;
    Ok(Some(match record.status {
        Status::InFlight { lease } => {
            let age = now.saturating_sub(lease.locked_at);
            KeyState::InFlight {
                key,
                fingerprint,
                lease_age_ms: age,
                lease_left_ms: lock_ms.saturating_sub(age),
                created_at: record.created_at,
            }
        }
        Status::Released { .. } => KeyState::Released {
            key,
            fingerprint,
            created_at: record.created_at,
            expires_at: record.expires_at,
        },
        Status::Done { response } => {
            let (body, body_base64) = match String::from_utf8(response.body) {
                Ok(text) => (Some(text), None),
                Err(e) => (
                    None,
                    Some(base64::engine::general_purpose::STANDARD.encode(e.as_bytes())),
                ),
            };
            KeyState::Done {
                key,
                fingerprint,
                status: response.status,
                content_type: response.content_type,
                headers: response.headers,
                body,
                body_base64,
                created_at: record.created_at,
                expires_at: record.expires_at,
            }
        }
    }))
}
