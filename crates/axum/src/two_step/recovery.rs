//! The phases pattern through the layer: a handler whose work calls another system between
//! two steps records how far it got ([`Recovery::save`]) before the call, and the next worker
//! of the same request (after a crash and a takeover, or a 5xx that released the claim)
//! resumes from it ([`Recovery::get`]) instead of starting over: typically the downstream
//! idempotency key, so the other system is asked the same question again and answers what
//! it did. The point is any serde value, stored as JSON and bound to the request (scope, key,
//! fingerprint): another request under the key never sees it.
//!
//! Two-step mode only: in atomic mode the route's writes and its answer commit together, so
//! there is nothing between two steps to record.

use std::sync::Arc;

use axum::{extract::FromRequestParts, response::Response};
use http::request::Parts;
use serde::{de::DeserializeOwned, Serialize};

use super::phases::from_layer;
use crate::{
    db::{Claim, Db, DbError},
    sql::now_ms,
};

/// This request's recovery point (an extractor on a route behind the layer in two-step mode).
#[derive(Clone)]
pub struct Recovery(Arc<Inner>);

struct Inner {
    db: Db,
    /// `None` for a request without a key (an optional-key route): nothing to resume.
    claim: Option<Claim>,
    /// What the last worker of this request saved, as read at the claim.
    found: Option<Vec<u8>>,
}

/// Why [`Recovery`] could not read or save the point.
#[derive(Debug, thiserror::Error)]
pub enum RecoveryError {
    /// The stored point is not a `T` (a route whose point type changed): start over, or
    /// read it as the older type.
    #[error("the recovery point is not what this route reads: {0}")]
    Unreadable(serde_json::Error),
    /// The point cannot be written as JSON (a map with non-string keys, say).
    #[error("the recovery point cannot be written as JSON: {0}")]
    Unwritable(serde_json::Error),
    /// The claim is no longer this worker's (taken over, released): stop, write nothing more.
    #[error("the claim was lost: another worker owns this request now")]
    Lost,
    /// The database.
    #[error(transparent)]
    Storage(DbError),
}

impl Recovery {
    pub(super) fn new(db: Db, claim: Option<Claim>, found: Option<Vec<u8>>) -> Self {
        Self(Arc::new(Inner { db, claim, found }))
    }

    /// The point an earlier worker of this same request saved, if any.
    pub fn get<T: DeserializeOwned>(&self) -> Result<Option<T>, RecoveryError> {
        match &self.0.found {
            None => Ok(None),
            Some(bytes) => serde_json::from_slice(bytes)
                .map(Some)
                .map_err(RecoveryError::Unreadable),
        }
    }

    /// Save `point`, durably and fenced ([`Db::save_recovery`]), before the call it guards.
    /// A request without a key (an optional-key route) saves nothing: no retry of it can be
    /// told from a new request, so there is nothing to resume.
    pub async fn save<T: Serialize>(&self, point: &T) -> Result<(), RecoveryError> {
        let bytes = serde_json::to_vec(point).map_err(RecoveryError::Unwritable)?;
        let Some(claim) = &self.0.claim else {
            return Ok(());
        };
        match self.0.db.save_recovery(now_ms(), claim, &bytes).await {
            Ok(()) => Ok(()),
            Err(DbError::Fenced) => Err(RecoveryError::Lost),
            Err(e) => Err(RecoveryError::Storage(e)),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Recovery {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Response> {
        from_layer(
            parts,
            "`Recovery` used on a route not behind the layer in two-step mode",
        )
    }
}
