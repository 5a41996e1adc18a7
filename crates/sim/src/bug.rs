//! The classic idempotency bugs, as simulator-side toggles. Each one is implemented in the
//! simulator's handler or client, on top of idem-store's public table primitives; the store's
//! production path never changes.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A classic bug the world can switch on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Bug {
    /// Same-key pages mint a new key on every attempt: retries are new requests.
    NewKeyPerAttempt,
    /// The claim reads, then inserts (no insert-if-absent): two concurrent first requests both
    /// see nothing, both insert, both run the work.
    SelectThenInsert,
    /// Save and release are not fenced: a zombie worker overwrites (or deletes) the record of
    /// the worker that took over.
    UnfencedWrites,
    /// The key stops at the top hop: PayCo is charged without `charge:<orderId>`, so a crash
    /// after the charge is charged again on takeover.
    KeyOnlyAtTopHop,
    /// No fingerprint check: the same key with different parameters replays the first answer.
    NoFingerprintCheck,
    /// Records are kept for less time than clients retry: a pruned key becomes a new charge.
    ShortRetention,
    /// The order is committed apart from the key's record: after a crash before the save, the
    /// retry creates (and charges) the order again.
    TwoStepWrite,
    /// The handler decides a decline itself before it calls PayCo, instead of letting PayCo
    /// decide after its key lookup: a worker that took over an order PayCo already charged can
    /// answer "declined" (402) for money that moved.
    DeclineBeforeLookup,
    /// The recovery point (the order of a key and payload) only outlives a takeover, not a
    /// released claim: after a release the next worker mints a new order, and so a new PayCo
    /// key, and charges again.
    FreshOrderAfterRelease,
}

impl Bug {
    /// Every bug, for listings and mutation tests.
    pub const ALL: [Bug; 9] = [
        Bug::NewKeyPerAttempt,
        Bug::SelectThenInsert,
        Bug::UnfencedWrites,
        Bug::KeyOnlyAtTopHop,
        Bug::NoFingerprintCheck,
        Bug::ShortRetention,
        Bug::TwoStepWrite,
        Bug::DeclineBeforeLookup,
        Bug::FreshOrderAfterRelease,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Bug::NewKeyPerAttempt => "new-key-per-attempt",
            Bug::SelectThenInsert => "select-then-insert",
            Bug::UnfencedWrites => "unfenced-writes",
            Bug::KeyOnlyAtTopHop => "key-only-at-top-hop",
            Bug::NoFingerprintCheck => "no-fingerprint-check",
            Bug::ShortRetention => "short-retention",
            Bug::TwoStepWrite => "two-step-write",
            Bug::DeclineBeforeLookup => "decline-before-lookup",
            Bug::FreshOrderAfterRelease => "fresh-order-after-release",
        }
    }
}

impl fmt::Display for Bug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Bug {
    type Err = crate::SimError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Bug::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .ok_or_else(|| crate::SimError::UnknownBug(s.to_owned()))
    }
}

/// The bugs of one world as flags, so the hot path tests a bool, not a list.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct BugFlags {
    pub new_key_per_attempt: bool,
    pub select_then_insert: bool,
    pub unfenced_writes: bool,
    pub key_only_at_top_hop: bool,
    pub no_fingerprint_check: bool,
    pub short_retention: bool,
    pub two_step_write: bool,
    pub decline_before_lookup: bool,
    pub fresh_order_after_release: bool,
}

impl BugFlags {
    pub fn from_list(bugs: &[Bug]) -> Self {
        let mut f = BugFlags::default();
        for b in bugs {
            match b {
                Bug::NewKeyPerAttempt => f.new_key_per_attempt = true,
                Bug::SelectThenInsert => f.select_then_insert = true,
                Bug::UnfencedWrites => f.unfenced_writes = true,
                Bug::KeyOnlyAtTopHop => f.key_only_at_top_hop = true,
                Bug::NoFingerprintCheck => f.no_fingerprint_check = true,
                Bug::ShortRetention => f.short_retention = true,
                Bug::TwoStepWrite => f.two_step_write = true,
                Bug::DeclineBeforeLookup => f.decline_before_lookup = true,
                Bug::FreshOrderAfterRelease => f.fresh_order_after_release = true,
            }
        }
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for b in Bug::ALL {
            assert_eq!(b.name().parse::<Bug>().unwrap(), b);
            let json = serde_json::to_string(&b).unwrap();
            assert_eq!(json, format!("\"{}\"", b.name()));
        }
        assert!("no-such-bug".parse::<Bug>().is_err());
    }
}
