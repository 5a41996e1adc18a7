//! What a request's decision asks of its caller ([`Begin`]): run the work under a lease, or answer
//! without it. Its own module so that the rules, which produce it, and the store, which
//! returns it, both depend on it and not on each other.

use crate::{Lease, RecordId, RequestError, SavedResponse};

/// What to do with a request, decided by [`Store::begin`](crate::Store::begin) (and a SQL table driving the same rules).
#[must_use]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Begin {
    /// The key is ours: run the work, then [`Store::commit`](crate::Store::commit) (or [`Store::save`](crate::Store::save) /
    /// [`Store::fail`](crate::Store::fail)) under `lease`.
    Execute {
        /// The record's identity, for the fenced writes.
        id: RecordId,
        /// Our claim; every later write is fenced by it.
        lease: Lease,
        /// Whether we took over a stale claim (an earlier worker may have done part of
        /// the work: the downstream call needs its own idempotency key). `false` for a
        /// first claim and for a claim again after a release, though after a release an
        /// earlier worker did part of the work too: resume its recovery point either way.
        taken_over: bool,
    },
    /// The route's key is optional and the request has none: run the work without
    /// idempotency protection. Nothing was recorded.
    Unkeyed,
    /// The operation already finished: answer with this response, byte for byte, marked
    /// as a replay. The work must not run.
    Replay(SavedResponse),
    /// Another worker holds a live claim on the key: answer 409 and let the client retry
    /// after `retry_after_ms`. Nothing was saved.
    InFlight {
        /// Time left on the live lease, in milliseconds (at least 1).
        retry_after_ms: u64,
    },
    /// The key was first used with a different request body (its claim in flight,
    /// released or done): answer 422. The work must not run and nothing is replayed.
    Mismatch,
    /// The request is malformed: answer [`RequestError::status`] (400 or 413).
    Invalid(RequestError),
    /// No record of the key, and the request was first sent longer ago than its route's
    /// retention (the expired-key guard, [`crate::first_sent`]): answer 412. It may have run
    /// under a record since pruned, so it does not run again. Nothing was recorded.
    KeyExpired,
}
