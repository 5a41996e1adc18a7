//! Leases: who holds an in-flight claim, since when.

use serde::{Deserialize, Serialize};

/// Proof of a claim. `token` comes from a store-wide monotonic counter
/// ([`crate::Table::next_token`]), so two claims made in the same millisecond still
/// differ; fenced writes compare the whole lease.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Lease {
    /// When the claim was made or taken over, in milliseconds.
    pub locked_at: u64,
    /// Fencing token, unique across the store.
    pub token: u64,
}

impl Lease {
    /// Whether the lease is still live at `now` under `lock_ms`.
    pub const fn is_live(&self, now: u64, lock_ms: u64) -> bool {
        now < self.locked_at.saturating_add(lock_ms)
    }

    /// The lease renewed at `now` by its holder: the same token (every fenced write of the
    /// holder still matches it), live for another `lock_ms` from `now`. A renewal is itself a
    /// fenced write ([`crate::Store::renew`], idem-axum's `Db::renew`): a holder whose lease
    /// was taken over renews nothing.
    pub const fn renewed(&self, now: u64) -> Lease {
        Lease {
            locked_at: now,
            token: self.token,
        }
    }

    /// Milliseconds until the lease goes stale at `now` (0 once stale).
    pub const fn time_left(&self, now: u64, lock_ms: u64) -> u64 {
        self.locked_at.saturating_add(lock_ms).saturating_sub(now)
    }
}
