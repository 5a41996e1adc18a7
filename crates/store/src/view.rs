//! A read-only snapshot of the table, for display.

use serde::Serialize;

use crate::{ErrorPolicy, IdRef, Record, Status};

/// Where a row stands, as the claim table shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RowState {
    /// In flight under a live lease: retries get 409.
    InFlight,
    /// In flight under a stale lease: the next retry takes it over.
    Stale,
    /// Released after a failure that saved no answer: the same request's retry claims it
    /// again and resumes; another request under the key is 422.
    Released,
    /// Done: retries replay the saved response.
    Done,
}

/// One row of the claim table at a given `now`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct RowView {
    /// The scope (tenant).
    pub scope: String,
    /// The idempotency key.
    pub key: String,
    /// The request fingerprint, short hex.
    pub fingerprint: String,
    /// In flight, stale, released or done.
    pub state: RowState,
    /// The claiming route's error policy.
    pub on_error: ErrorPolicy,
    /// The saved response's status, when done.
    pub response_status: Option<u16>,
    /// A one-line summary of the saved response, e.g. `201 application/json, 12 B`.
    pub response: Option<String>,
    /// When the lease was taken, while in flight; for a released row, the lease that
    /// released it.
    pub locked_at: Option<u64>,
    /// The lease's token, while in flight; for a released row, the lease that released it.
    pub token: Option<u64>,
    /// Milliseconds left on the lease, while in flight (0 once stale).
    pub lease_left_ms: Option<u64>,
    /// When the key was first claimed.
    pub created_at: u64,
    /// When retention ends.
    pub expires_at: u64,
    /// The row's retention after each write, fixed by the claiming route.
    pub retention_ms: u64,
    /// Past retention: counts as absent and will be pruned.
    pub expired: bool,
}

impl RowView {
    /// The view of row `r` of `id` at `now` under `lock_ms`.
    pub fn new(id: IdRef<'_>, r: &Record, now: u64, lock_ms: u64) -> Self {
        let (state, response_status, response, lease, left) = match &r.status {
            Status::InFlight { lease } => {
                let state = if lease.is_live(now, lock_ms) {
                    RowState::InFlight
                } else {
                    RowState::Stale
                };
                let left = lease.time_left(now, lock_ms);
                (state, None, None, Some(lease), Some(left))
            }
            Status::Released { lease } => (RowState::Released, None, None, Some(lease), None),
            Status::Done { response } => (
                RowState::Done,
                Some(response.status),
                Some(format!(
                    "{} {}, {} B",
                    response.status,
                    response.content_type,
                    response.body.len()
                )),
                None,
                None,
            ),
        };
        Self {
            scope: id.scope.to_owned(),
            key: id.key.to_owned(),
            fingerprint: r.fingerprint.short_hex(),
            state,
            on_error: r.on_error,
            response_status,
            response,
            locked_at: lease.map(|l| l.locked_at),
            token: lease.map(|l| l.token),
            lease_left_ms: left,
            created_at: r.created_at,
            expires_at: r.expires_at,
            retention_ms: r.retention_ms,
            expired: r.is_expired(now, lock_ms),
        }
    }
}
