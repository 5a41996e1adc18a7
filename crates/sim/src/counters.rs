//! What the lab table counts.

use serde::{Deserialize, Serialize};

/// Running totals of one world (or, summed with [`Counters::add`], of a sweep).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counters {
    /// Checkouts started.
    pub checkouts: u64,
    /// Requests clients sent (first tries and retries, other-cart requests included).
    pub attempts: u64,
    /// 409 answers (in flight, retry later).
    pub conflicts: u64,
    /// 422 answers (same key, different parameters).
    pub mismatches: u64,
    /// Those of the 422s whose key had been released (the key stays bound to its first
    /// payload after a release).
    #[serde(default)]
    pub released_mismatches: u64,
    /// 412 answers: the expired-key guard refused a request first sent longer ago than
    /// retention, whose key had no record left.
    #[serde(default)]
    pub key_expired: u64,
    /// Stale claims taken over.
    pub takeovers: u64,
    /// Writes refused because the writer's lease was gone (zombies stopped).
    pub fenced: u64,
    /// Checkouts whose page gave up with an unknown outcome.
    pub unknown: u64,
    /// Answers replayed from the table.
    pub replays: u64,
    /// Times the handler's work started.
    pub executions: u64,
    /// Workers that crashed after the charge, before the save.
    pub crashes: u64,
    /// Slow workers.
    pub slow_workers: u64,
    /// Tab reloads.
    pub reloads: u64,
    /// Checkouts paid (page showed a receipt).
    pub paid: u64,
    /// Checkouts refused for good.
    pub rejected: u64,
    /// Charges PayCo declined (the work failed).
    #[serde(default)]
    pub declines: u64,
    /// Calls PayCo answered from its key table (no money moved).
    #[serde(default)]
    pub deduped: u64,
    /// PayCo calls that timed out for the worker (PayCo may or may not have charged).
    #[serde(default)]
    pub payco_timeouts: u64,
    /// Attempts whose page timed out waiting for an answer.
    #[serde(default)]
    pub timeouts: u64,
    /// Receipts the outbox's consumer sent.
    #[serde(default)]
    pub receipts: u64,
    /// Times the relay died between the consumer's acknowledgement and its mark.
    #[serde(default)]
    pub relay_crashes: u64,
    /// Times the consumer died between its effect and its acknowledgement.
    #[serde(default)]
    pub consumer_crashes: u64,
    /// Relay deliveries that reached the consumer twice.
    #[serde(default)]
    pub deliveries_duplicated: u64,
    /// Relay deliveries held back (overtaken by later ones).
    #[serde(default)]
    pub deliveries_reordered: u64,
    /// Receipts sent for an order that had one already (a consumer without dedupe).
    #[serde(default)]
    pub duplicate_receipts: u64,
    /// Deliveries the consumer's `process_once` skipped: their message id was handled already.
    #[serde(default)]
    pub redeliveries_skipped: u64,
}

impl Counters {
    /// Add `other`'s totals to these (a sweep sums its worlds).
    pub fn add(&mut self, other: &Counters) {
        let Counters {
            checkouts,
            attempts,
            conflicts,
            mismatches,
            released_mismatches,
            key_expired,
            takeovers,
            fenced,
            unknown,
            replays,
            executions,
            crashes,
            slow_workers,
            reloads,
            paid,
            rejected,
            declines,
            deduped,
            payco_timeouts,
            timeouts,
            receipts,
            relay_crashes,
            consumer_crashes,
            deliveries_duplicated,
            deliveries_reordered,
            duplicate_receipts,
            redeliveries_skipped,
        } = *other;
        self.checkouts += checkouts;
        self.attempts += attempts;
        self.conflicts += conflicts;
        self.mismatches += mismatches;
        self.released_mismatches += released_mismatches;
        self.key_expired += key_expired;
        self.takeovers += takeovers;
        self.fenced += fenced;
        self.unknown += unknown;
        self.replays += replays;
        self.executions += executions;
        self.crashes += crashes;
        self.slow_workers += slow_workers;
        self.reloads += reloads;
        self.paid += paid;
        self.rejected += rejected;
        self.declines += declines;
        self.deduped += deduped;
        self.payco_timeouts += payco_timeouts;
        self.timeouts += timeouts;
        self.receipts += receipts;
        self.relay_crashes += relay_crashes;
        self.consumer_crashes += consumer_crashes;
        self.deliveries_duplicated += deliveries_duplicated;
        self.deliveries_reordered += deliveries_reordered;
        self.duplicate_receipts += duplicate_receipts;
        self.redeliveries_skipped += redeliveries_skipped;
    }
}
