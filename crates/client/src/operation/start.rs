//! How an operation begins: what the journal already holds under its name decides whether it
//! mints a key, continues an open record or a settled entry, or is refused (the table on
//! [`Operation::start`]), and how a key minted without a lock is confirmed.

use uuid::Uuid;

use super::{key_string, IntoCanonical, Operation, OperationSpec, Persistence};
use crate::error::StartError;
use crate::journal::{Entry, Journal, JournalError, SettledRecord};
use crate::key::KeyMinter;
use crate::method::Method;
use crate::outcome::Durability;
use crate::payload::CanonicalPayload;
use crate::policy::RetryPolicy;

impl Operation {
    /// Starts the operation described by `spec` at `now`, continuing what the journal holds
    /// under its name when that is the same request (same method and payload fingerprint):
    ///
    /// | journal entry under the name | same request | other request |
    /// |---|---|---|
    /// | none, or settled past its window | mint a key, write it, then send | same |
    /// | open (pending or unknown) | resume: same key, bytes, attempts, creation time | [`StartError::PendingWithDifferentPayload`] |
    /// | settled, within its window | re-send under the settled key (the server replays its answer) | [`StartError::SettledWithDifferentPayload`] until the entry is removed |
    /// | unreadable | [`StartError::Unreadable`], left untouched | same |
    ///
    /// A new keyed operation gets a key from `keys` and is written to `journal` before this
    /// returns; if that write fails, this returns [`StartError::NotPersisted`] unless
    /// `spec.persistence` allows memory-only. Unkeyed operations (idempotent methods) do not
    /// touch the journal.
    ///
    /// The journal is read once: this is for callers that serialise starts of one name (one
    /// thread, or a Web Lock around it). Where another writer may mint a key for the same name
    /// at the same instant, use [`Operation::start_unlocked`].
    pub fn start<P: IntoCanonical>(
        spec: OperationSpec<P>,
        policy: RetryPolicy,
        now: u64,
        journal: &mut dyn Journal,
        keys: &mut dyn KeyMinter,
    ) -> Result<Operation, StartError> {
        Operation::open(spec.into_canonical()?, policy, now, journal, keys).map(|(op, _)| op)
    }

    /// [`Operation::start`] for a journal that other writers share without a lock (two tabs of
    /// a browser without Web Locks): two of them can both read "nothing here" and mint two keys.
    /// When this start minted the key, the returned [`Unconfirmed`] asks the caller to wait
    /// `settle_ms` (long enough for the other writer's record to become visible) and to
    /// [`confirm`](Unconfirmed::confirm): the journal is read again, and if another writer's
    /// record for the same request replaced ours, its key is adopted, so both send one key.
    pub fn start_unlocked<P: IntoCanonical>(
        spec: OperationSpec<P>,
        policy: RetryPolicy,
        now: u64,
        journal: &mut dyn Journal,
        keys: &mut dyn KeyMinter,
        settle_ms: u64,
    ) -> Result<Unconfirmed, StartError> {
        let (op, minted) = Operation::open(spec.into_canonical()?, policy, now, journal, keys)?;
        let confirm_at = (minted && op.durability == Durability::Journaled)
            .then(|| now.saturating_add(settle_ms));
        Ok(Unconfirmed { op, confirm_at })
    }

    /// The start, once the payload is canonical: the operation, and whether its key was minted
    /// here (rather than read from the journal).
    fn open(
        spec: OperationSpec<CanonicalPayload>,
        policy: RetryPolicy,
        now: u64,
        journal: &mut dyn Journal,
        keys: &mut dyn KeyMinter,
    ) -> Result<(Operation, bool), StartError> {
        let payload = spec.payload;
        if !spec.key_use.applies_to(spec.method) {
            let op = Operation::new(
                spec.name,
                None,
                spec.method,
                payload,
                now,
                policy,
                Durability::Unkeyed,
            );
            return Ok((op, false));
        }
        let memory_only = spec.persistence == Persistence::AllowMemoryOnly;
        let loaded = match journal.load_entry(&spec.name) {
            Ok(Some(entry)) => {
                let request = (spec.name.as_str(), spec.method, &payload);
                match continuation(entry, request, &policy, now, journal)? {
                    Some(op) => return Ok((op, false)),
                    None => Ok(()),
                }
            }
            Ok(None) => Ok(()),
            // Something is there that we cannot read: never mint a key over it.
            Err(error) if is_unreadable(&error) => return Err(StartError::Unreadable(error)),
            Err(error) => Err(error),
        };
        let op = Operation::new(
            spec.name,
            Some(keys.mint()),
            spec.method,
            payload,
            now,
            policy,
            Durability::Journaled,
        );
        // Persisted before any `Send` can exist, or not sent (unless memory-only is allowed).
        match loaded.and_then(|()| journal.save(&op.record())) {
            Ok(()) => Ok((op, true)),
            Err(_) if memory_only => Ok((op.in_memory_only(), true)),
            Err(error) => Err(StartError::NotPersisted(error)),
        }
    }

    /// Resumes the open operation journaled under `name` (e.g. after a reload, from a list of
    /// [`pending`](crate::journal::pending) records), with its key, bytes and attempt count.
    /// `Ok(None)` when no open record is journaled under that name (a settled operation is not
    /// resumed: [`start`](Self::start) it again with its payload to get the server's replay).
    pub fn resume(
        name: &str,
        policy: RetryPolicy,
        journal: &dyn Journal,
    ) -> Result<Option<Operation>, StartError> {
        match journal.load(name) {
            Ok(Some(record)) => Ok(Some(Operation::from_record(record, policy))),
            Ok(None) => Ok(None),
            Err(error) if is_unreadable(&error) => Err(StartError::Unreadable(error)),
            Err(error) => Err(StartError::NotPersisted(error)),
        }
    }
}

/// What the journal's `entry` means for a start of the request (name, method, payload) at
/// `now`: the operation to continue (`Some`), nothing to continue (`None`: mint a key), or a
/// refusal. The one place the start table of [`Operation::start`] is decided; confirmation
/// reuses it.
///
/// Continuing a settled entry writes an open record with the request's bytes (one resumed from
/// an open record is already there, and another tab may be updating it). A failure there is
/// tolerated: the settled entry still holds the key, so a reload re-sends under it too.
fn continuation(
    entry: Entry,
    (name, method, payload): (&str, Method, &CanonicalPayload),
    policy: &RetryPolicy,
    now: u64,
    journal: &mut dyn Journal,
) -> Result<Option<Operation>, StartError> {
    let same = entry.is_same_request(method, &payload.fingerprint);
    let key = key_string(entry.key());
    // A settled key is reused only while attempts may still be sent under it: until the entry
    // expires, and within this policy's window too (it may be shorter than the one it settled
    // under), or the re-send would end unknown without being sent.
    let reusable = |s: &SettledRecord| {
        s.is_live(now) && now < s.created_at.saturating_add(policy.retry_window_ms)
    };
    match entry {
        Entry::Settled(settled) if !reusable(&settled) => Ok(None),
        Entry::Open(record) if same => Ok(Some(Operation::from_record(record, policy.clone()))),
        Entry::Settled(settled) if same => {
            let op = Operation::from_settled(settled, payload.clone(), policy.clone());
            let _ = journal.save(&op.record());
            Ok(Some(op))
        }
        Entry::Open(_) => Err(StartError::PendingWithDifferentPayload {
            name: name.to_owned(),
            key,
        }),
        Entry::Settled(_) => Err(StartError::SettledWithDifferentPayload {
            name: name.to_owned(),
            key,
        }),
    }
}

/// An operation whose freshly minted key may still lose to another writer's (see
/// [`Operation::start_unlocked`]): it cannot send until [`confirm`](Unconfirmed::confirm)ed.
#[derive(Debug)]
#[must_use = "an unconfirmed operation sends nothing until it is confirmed"]
pub struct Unconfirmed {
    op: Operation,
    confirm_at: Option<u64>,
}

impl Unconfirmed {
    /// When to confirm (ms): `None` when the key was read from the journal, not minted, so
    /// there is nothing to confirm.
    pub fn confirm_at(&self) -> Option<u64> {
        self.confirm_at
    }

    /// The key as it stands before confirmation.
    pub fn key(&self) -> Option<Uuid> {
        self.op.key
    }

    /// Reads the journal again and returns the operation to run: ours if our record still
    /// stands (or the entry vanished, in which case it is written again), or the other writer's
    /// for the same request, whose key is adopted. Another writer's record for a *different*
    /// request now holds the name: the same refusal as [`Operation::start`] gives. A storage
    /// read failure is tolerated (our key was persisted at start).
    pub fn confirm(self, now: u64, journal: &mut dyn Journal) -> Result<Operation, StartError> {
        let Unconfirmed { op, confirm_at } = self;
        if confirm_at.is_none() {
            return Ok(op);
        }
        let ours = |op: Operation, journal: &mut dyn Journal| match journal.save(&op.record()) {
            Ok(()) => Ok(op),
            Err(error) => Err(StartError::NotPersisted(error)),
        };
        match journal.load_entry(&op.name) {
            Ok(Some(Entry::Open(record))) if Some(record.key) == op.key => Ok(op),
            Ok(Some(entry)) => {
                let request = (op.name.as_str(), op.method, &op.payload);
                match continuation(entry, request, &op.policy, now, journal)? {
                    Some(theirs) => Ok(theirs),
                    None => ours(op, journal),
                }
            }
            Ok(None) => ours(op, journal),
            Err(error) if is_unreadable(&error) => Err(StartError::Unreadable(error)),
            Err(_) => Ok(op),
        }
    }
}

/// Whether a journal read failed on what is stored (corrupt, foreign, another format version)
/// rather than on reaching the storage.
fn is_unreadable(error: &JournalError) -> bool {
    matches!(
        error,
        JournalError::Corrupt { .. }
            | JournalError::UnsupportedVersion { .. }
            | JournalError::Outdated { .. }
    )
}
