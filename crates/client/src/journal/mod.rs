//! Where an operation's key lives between attempts, across reloads, and after its answer.
//!
//! A [`Journal`] maps an operation name to one entry: an open [`Record`] (the key, the canonical
//! payload bytes and their fingerprint, the attempt count, the creation time) while the
//! operation is pending or unknown, then a [`SettledRecord`] (key and fingerprint, no body) once
//! it got its final answer, kept until the retry window that began at its creation closes.
//! Entries are stored as JSON text (see [`decode_entry`]), so every implementation reads back the same
//! way and meets the same failures: corrupt or foreign text, and entries of another format
//! version.

mod codec;
mod error;
mod memory;
mod record;

#[cfg(target_arch = "wasm32")]
pub mod local_storage;

pub use codec::{decode, decode_entry, encode, encode_settled};
pub use error::JournalError;
pub use memory::MemoryJournal;
pub use record::{
    Entry, Record, RecordState, SettledRecord, FORMAT_VERSION, KEY_EXPIRED_FORMAT_VERSION,
    SETTLED_FORMAT_VERSION,
};

/// Durable storage of operations, one entry per operation name.
///
/// Object-safe, so a caller (the simulator) can hold a `Box<dyn Journal>` per client.
/// Implementations must never panic: every storage failure is a [`JournalError`].
///
/// [`load`](Journal::load) answers "is there an open operation to resume under this name?",
/// so it never returns a settled entry; [`load_entry`](Journal::load_entry) returns both kinds.
/// A journal that implements only the four required methods keeps no settled entries: settling
/// removes the record, as this crate did before settled entries existed, and a later submit of
/// the same payload then mints a new key.
///
/// ```
/// use idem_client::{Journal, MemoryJournal, Operation, OperationSpec, RetryPolicy};
/// use serde_json::json;
///
/// let mut journal: Box<dyn Journal> = Box::new(MemoryJournal::new());
/// let spec = OperationSpec::post("checkout:cart-42", json!({ "amount": 1299 }));
/// let op = Operation::start(spec, RetryPolicy::default(), 0, journal.as_mut(), &mut uuid::Uuid::new_v4)
///     .expect("memory journal accepts writes");
/// let record = journal.load("checkout:cart-42").unwrap().expect("persisted at start");
/// assert_eq!(Some(record.key), op.key());
/// assert_eq!(record.body, r#"{"amount":1299}"#);
/// ```
pub trait Journal {
    /// The open record stored under `name`, if any (a settled entry is `None` here).
    fn load(&self, name: &str) -> Result<Option<Record>, JournalError>;
    /// Writes `record` under `record.name`, replacing what was there.
    fn save(&mut self, record: &Record) -> Result<(), JournalError>;
    /// Removes the entry under `name`, open or settled (absent is fine).
    fn remove(&mut self, name: &str) -> Result<(), JournalError>;
    /// The names of all entries (readable or not, open or settled), in a stable order.
    fn names(&self) -> Result<Vec<String>, JournalError>;

    /// The entry stored under `name`, open or settled. Default: the open record only.
    fn load_entry(&self, name: &str) -> Result<Option<Entry>, JournalError> {
        Ok(self.load(name)?.map(Entry::Open))
    }

    /// Replaces the open record of `settled.name` by its settled entry. Default: removes the
    /// record (a journal that keeps no settled entries).
    fn save_settled(&mut self, settled: &SettledRecord) -> Result<(), JournalError> {
        self.remove(&settled.name)
    }
}

/// Every open record in `journal` (pending or unknown; settled entries are left out), each read
/// on its own so one unreadable entry does not hide the others (it is listed as its error).
pub fn pending(journal: &dyn Journal) -> Result<Vec<Result<Record, JournalError>>, JournalError> {
    let names = journal.names()?;
    Ok(names
        .into_iter()
        .filter_map(|name| journal.load(&name).transpose())
        .collect())
}

/// Every settled entry in `journal` still live at `now`, in name order; unreadable entries are
/// left to [`pending`], which lists them.
pub fn settled(journal: &dyn Journal, now: u64) -> Result<Vec<SettledRecord>, JournalError> {
    // A loop, not `filter_map(..).collect()`: the last iterator adapter of its kind in the
    // package (−139 B gzip); the walk itself is shared with `prune_settled`.
    let mut live = Vec::new();
    each_settled(journal, &mut |_, s| {
        if s.is_live(now) {
            live.push(s);
        }
    })?;
    Ok(live)
}

/// Removes the settled entries whose key is no longer reused at `now` (past `expires_at`), so
/// storage does not grow with every operation ever settled. Returns how many were removed.
/// Open records, unreadable entries and live settled entries are left alone.
pub fn prune_settled(journal: &mut dyn Journal, now: u64) -> Result<usize, JournalError> {
    let mut expired = Vec::new();
    each_settled(journal, &mut |name, s| {
        if !s.is_live(now) {
            expired.push(name);
        }
    })?;
    for name in &expired {
        journal.remove(name)?;
    }
    Ok(expired.len())
}

/// Calls `f` with each readable settled entry and its name (one walk for `settled` and
/// `prune_settled`, which the package would otherwise carry twice).
fn each_settled(
    journal: &dyn Journal,
    f: &mut dyn FnMut(String, SettledRecord),
) -> Result<(), JournalError> {
    for name in journal.names()? {
        if let Ok(Some(Entry::Settled(s))) = journal.load_entry(&name) {
            f(name, s);
        }
    }
    Ok(())
}
