//! Live properties: the checker's invariants as six badges, each remembering the moment it
//! first broke. Tracked incrementally: O(1) per event for charges and answers (only the
//! checker's new violations are looked at); "stuck in flight" is one pass over the claim table,
//! done when asked ([`crate::World::properties`]), not per event.

use serde::{Deserialize, Serialize};

use crate::checker::Violation;

/// The moment a property first broke.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Breach {
    /// Virtual time, in milliseconds.
    pub at: u64,
    /// Events the world had run when the breach was seen (seek there to watch it happen).
    pub event: u64,
    /// What broke.
    pub violation: Violation,
}

/// One property: holds, or broke at a moment.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Property {
    /// The first breach, if any.
    pub broke: Option<Breach>,
}

impl Property {
    /// True while the property holds.
    pub fn ok(&self) -> bool {
        self.broke.is_none()
    }
}

/// The six live badges.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Properties {
    /// At most one charge per order.
    pub one_charge: Property,
    /// Every answer under a key equals the first one, and answers the parameters sent.
    pub replays_identical: Property,
    /// No record stays in flight once nobody can come back for it: its lease has been stale
    /// for a whole client retry window (or the end-of-run probe found it stuck).
    pub none_stuck: Property,
    /// The client's final answer agrees with PayCo: paid means charged exactly once, rejected
    /// means never charged, and what the page cannot know it reports as unknown.
    pub agrees_with_payco: Property,
    /// A 422 means that payload never ran under that key (a key stays bound to its first
    /// payload, released or not, so the payload that ran is never refused).
    #[serde(default)]
    pub mismatch_never_ran: Property,
    /// One receipt per paid order, none for an unpaid one: the outbox's consumer sends one
    /// however often the relay delivers `order.paid`.
    #[serde(default)]
    pub one_receipt: Property,
}

impl Properties {
    /// Names used by the demo's test hooks (`property-<name>`), in badge order.
    pub const NAMES: [&'static str; 6] = [
        "one-charge",
        "replays-identical",
        "none-stuck",
        "agrees-with-payco",
        "mismatch-never-ran",
        "one-receipt",
    ];

    /// The properties in [`Properties::NAMES`] order.
    pub fn all(&self) -> [&Property; 6] {
        [
            &self.one_charge,
            &self.replays_identical,
            &self.none_stuck,
            &self.agrees_with_payco,
            &self.mismatch_never_ran,
            &self.one_receipt,
        ]
    }

    /// The property called `name` (one of [`Properties::NAMES`]).
    pub fn by_name(&self, name: &str) -> Option<&Property> {
        let i = Self::NAMES.iter().position(|n| *n == name)?;
        Some(self.all()[i])
    }
}

/// The world's running record of first breaches.
#[derive(Clone, Debug, Default)]
pub(crate) struct Tracker {
    pub double: Option<Breach>,
    pub replay: Option<Breach>,
    pub stuck: Option<Breach>,
    pub disagrees: Option<Breach>,
    pub mismatch_ran: Option<Breach>,
    pub receipts: Option<Breach>,
    /// Checker violations already looked at.
    pub seen: usize,
}

impl Tracker {
    /// Look at the checker's violations from `seen` on.
    pub fn observe(&mut self, violations: &[Violation], at: u64, event: u64) {
        if violations.len() <= self.seen {
            return;
        }
        for v in &violations[self.seen..] {
            // One mapping from violations to properties: Violation::property. The double
            // charge is tracked from PayCo's ledger directly (see World::track_properties).
            let slot = match v.property() {
                Some("replays-identical") => &mut self.replay,
                Some("none-stuck") => &mut self.stuck,
                Some("agrees-with-payco") => &mut self.disagrees,
                Some("mismatch-never-ran") => &mut self.mismatch_ran,
                Some("one-receipt") => &mut self.receipts,
                _ => continue,
            };
            if slot.is_none() {
                *slot = Some(Breach {
                    at,
                    event,
                    violation: v.clone(),
                });
            }
        }
        self.seen = violations.len();
    }
}
