//! The event log: one entry per decision and per write, for the demo and the tests.

use std::{collections::VecDeque, sync::Arc};

use serde::{Serialize, Serializer};

use crate::{key::ScopeCache, IdempotencyKey, RecordId, RequestError};

/// Something the store decided or wrote.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Event {
    seq: u64,
    at: u64,
    // Shared with the record's id where one exists, so logging a claim or a save does
    // not allocate.
    #[serde(serialize_with = "serialize_str")]
    scope: Arc<str>,
    key: Option<IdempotencyKey>,
    kind: EventKind,
}

fn serialize_str<S: Serializer>(s: &Arc<str>, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(s)
}

impl Event {
    /// Position in the log: 0, 1, 2, … across the store's life, never reused. A gap
    /// means older events were dropped (the log is bounded).
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// When it happened, in milliseconds.
    pub fn at(&self) -> u64 {
        self.at
    }

    /// The request's scope.
    pub fn scope(&self) -> &str {
        &self.scope
    }

    /// The idempotency key; `None` when the request had no valid key.
    pub fn key(&self) -> Option<&str> {
        self.key.as_ref().map(IdempotencyKey::as_str)
    }

    /// What happened.
    pub fn kind(&self) -> &EventKind {
        &self.kind
    }
}

/// What happened, by kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventKind {
    /// A new claim: the worker holding `token` runs the work.
    Claimed {
        /// The new lease's token.
        token: u64,
    },
    /// A saved response was replayed.
    Replayed {
        /// The replayed HTTP status.
        status: u16,
    },
    /// The request was refused (400, 409, 413 or 422).
    Rejected {
        /// The HTTP status answered.
        status: u16,
        /// Why.
        reason: Rejection,
    },
    /// A stale claim was taken over by compare-and-set.
    TakenOver {
        /// The stale lease's token.
        old_token: u64,
        /// The new lease's token.
        new_token: u64,
    },
    /// A write under a lost lease was refused; nothing changed.
    Fenced {
        /// The lost lease's token.
        token: u64,
    },
    /// A response was saved; retries will replay it.
    Saved {
        /// The saving lease's token.
        token: u64,
        /// The saved HTTP status.
        status: u16,
    },
    /// A claim was released after a work error; a retry runs the work again.
    Released {
        /// The released lease's token.
        token: u64,
    },
    /// The record was pruned after retention.
    Pruned,
    /// Written by the caller through [`crate::Store::push_event`] (e.g. a simulated bug).
    Note {
        /// Free text.
        text: String,
    },
}

/// Why a request was refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rejection {
    /// Bad key or body (400 / 413).
    Invalid(RequestError),
    /// The key is in flight under a live lease (409).
    InFlight {
        /// Time left on the lease, in milliseconds.
        retry_after_ms: u64,
    },
    /// The key was used with a different payload (422).
    Mismatch,
    /// No row for the key, and the request was first sent longer ago than retention (412,
    /// the expired-key guard).
    KeyExpired,
}

/// A bounded log of events: the [`crate::Store`]'s own, and the one a table driven from
/// outside the store (a SQL table in a server) keeps, so both log the same events.
#[derive(Debug, Clone, Default)]
pub struct EventLog {
    events: VecDeque<Event>,
    capacity: usize,
    next_seq: u64,
    scopes: ScopeCache,
}

impl EventLog {
    /// Most events allocated ahead of use.
    const PREALLOCATED: usize = 4_096;

    /// An empty log keeping at most `capacity` events (0: off).
    pub fn new(capacity: usize) -> Self {
        Self {
            // Sized up front (up to a point): growing a deque of events reallocates and
            // copies it a dozen times on the way to the default capacity.
            events: VecDeque::with_capacity(capacity.min(Self::PREALLOCATED)),
            capacity,
            next_seq: 0,
            scopes: ScopeCache::default(),
        }
    }

    /// Append an event about a request whose key, if any, is not known to be valid: an
    /// invalid key is logged as no key.
    pub fn push_unchecked_key(&mut self, at: u64, scope: &str, key: Option<&str>, kind: EventKind) {
        let key = key.and_then(|k| crate::key::validate(k).ok());
        self.push(at, scope, key, kind);
    }

    /// Append an event about a request that may have no valid key. Allocates only when
    /// the log is on.
    pub(crate) fn push(&mut self, at: u64, scope: &str, key: Option<&str>, kind: EventKind) {
        if self.is_on() {
            // Keys passed here were validated by the store.
            let key = key.map(IdempotencyKey::unchecked);
            let scope = self.scopes.get(scope);
            self.append(at, scope, key, kind);
        }
    }

    /// Append an event about a record; shares the id's strings.
    pub fn push_id(&mut self, at: u64, id: &RecordId, kind: EventKind) {
        if self.is_on() {
            self.append(at, id.scope_shared(), Some(id.key().clone()), kind);
        }
    }

    /// Append an event about a record, taking the id's shared strings.
    pub(crate) fn push_owned(&mut self, at: u64, id: RecordId, kind: EventKind) {
        if self.is_on() {
            let (scope, key) = id.into_parts();
            self.append(at, scope, Some(key), kind);
        }
    }

    fn append(&mut self, at: u64, scope: Arc<str>, key: Option<IdempotencyKey>, kind: EventKind) {
        if self.events.len() == self.capacity {
            self.events.pop_front();
        }
        self.events.push_back(Event {
            seq: self.next_seq,
            at,
            scope,
            key,
            kind,
        });
        self.next_seq += 1;
    }

    /// Keep at most `capacity` events from now on, dropping the oldest beyond it. Sequence
    /// numbers carry on.
    pub fn set_capacity(&mut self, capacity: usize) {
        let excess = self.events.len().saturating_sub(capacity);
        self.events.drain(..excess);
        self.events.reserve(
            capacity
                .min(Self::PREALLOCATED)
                .saturating_sub(self.events.len()),
        );
        self.capacity = capacity;
    }

    /// Whether the log keeps events (capacity above 0).
    pub fn is_on(&self) -> bool {
        self.capacity > 0
    }

    /// The held events, oldest first.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Event> + '_ {
        self.events.iter()
    }

    /// The held events with [`Event::seq`] at least `seq`.
    pub fn since(&self, seq: u64) -> impl Iterator<Item = &Event> + '_ {
        // Events are stored in seq order, so skip the prefix by arithmetic.
        let first = self.events.front().map_or(self.next_seq, |e| e.seq);
        let skip = usize::try_from(seq.saturating_sub(first)).unwrap_or(usize::MAX);
        self.events.iter().skip(skip)
    }

    /// Remove and return every held event, oldest first.
    pub fn drain(&mut self) -> impl Iterator<Item = Event> + '_ {
        self.events.drain(..)
    }

    /// The seq the next event will get.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }
}
