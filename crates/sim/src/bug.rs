//! The classic idempotency bugs, as simulator-side toggles: their names and descriptions, in
//! one list ([`Bug::ALL`]) that serves parsing, `idem-lab --help` ([`help`]) and the error for
//! an unknown name ([`names`]). What each bug does is one named function in
//! `world/bugs.rs`, on top of idem-store's public table primitives; the store's production
//! path never changes.

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
    /// A release deletes the key's record (the lease and the key go together): another payload
    /// claims the released key and runs, and the first payload's retry is told 422, "never
    /// ran", for work that ran (and may have moved money).
    ReleaseForgetsTheKey,
    /// PayCo's timeout is treated as the work's failure: under `save-response` the answer that
    /// says the outcome is unknown (502) is saved, every retry replays it, and the checkout
    /// can never learn that PayCo charged. idem-server releases the claim instead.
    SaveUnknownOutcome,
    /// The outbox's consumer applies every delivery (no `process_once`): the relay delivers at
    /// least once, so a redelivered `order.paid` sends the customer a second receipt.
    ConsumerWithoutDedupe,
}

impl Bug {
    /// Every bug, for listings and mutation tests.
    pub const ALL: [Bug; 12] = [
        Bug::NewKeyPerAttempt,
        Bug::SelectThenInsert,
        Bug::UnfencedWrites,
        Bug::KeyOnlyAtTopHop,
        Bug::NoFingerprintCheck,
        Bug::ShortRetention,
        Bug::TwoStepWrite,
        Bug::DeclineBeforeLookup,
        Bug::FreshOrderAfterRelease,
        Bug::ReleaseForgetsTheKey,
        Bug::SaveUnknownOutcome,
        Bug::ConsumerWithoutDedupe,
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
            Bug::ReleaseForgetsTheKey => "release-forgets-the-key",
            Bug::SaveUnknownOutcome => "save-unknown-outcome",
            Bug::ConsumerWithoutDedupe => "consumer-without-dedupe",
        }
    }

    /// What it does, in a few words.
    pub fn about(self) -> &'static str {
        match self {
            Bug::NewKeyPerAttempt => "same-key pages mint a key per attempt",
            Bug::SelectThenInsert => "the claim reads, then inserts",
            Bug::UnfencedWrites => "a zombie's save overwrites the new owner's record",
            Bug::KeyOnlyAtTopHop => "PayCo is called without charge:<order>",
            Bug::NoFingerprintCheck => "another cart under a key replays the first answer",
            Bug::ShortRetention => "records pruned before clients stop retrying",
            Bug::TwoStepWrite => "the order is committed apart from the key's record",
            Bug::DeclineBeforeLookup => "the handler decides a decline before PayCo's key lookup",
            Bug::FreshOrderAfterRelease => "the recovery point does not survive a released claim",
            Bug::ReleaseForgetsTheKey => {
                "a release deletes the record: another payload takes the key"
            }
            Bug::SaveUnknownOutcome => "a PayCo timeout's 502 is saved and replayed for good",
            Bug::ConsumerWithoutDedupe => "the outbox's consumer sends a receipt per delivery",
        }
    }
}

/// The bugs' names, comma-separated, in [`Bug::ALL`] order.
pub fn names() -> String {
    let names: Vec<&str> = Bug::ALL.iter().map(|b| b.name()).collect();
    names.join(", ")
}

/// One line per bug, `name: what it does`, for `--help`.
pub fn help() -> String {
    let lines: Vec<String> = Bug::ALL
        .iter()
        .map(|b| format!("{}: {}", b.name(), b.about()))
        .collect();
    lines.join("\n")
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

    #[test]
    fn the_error_and_the_help_list_every_bug() {
        let error = "no-such-bug".parse::<Bug>().unwrap_err().to_string();
        let help = help();
        for b in Bug::ALL {
            assert!(error.contains(b.name()), "{error}");
            assert!(help.contains(&format!("{}: ", b.name())), "{help}");
        }
    }
}
