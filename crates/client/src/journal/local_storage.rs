//! The browser journal: `window.localStorage`, one entry per operation under a prefix.

use wasm_bindgen::{JsCast, JsValue};
use web_sys::{DomException, Storage, StorageEvent};

use super::{
    decode_entry, encode, encode_settled, Entry, Journal, JournalError, Record, SettledRecord,
};

/// The prefix under which records are stored when none is given: `idem:` + operation name.
pub const DEFAULT_PREFIX: &str = "idem:";

/// How the journal reaches storage: `window.localStorage` by default, injectable for tests.
type StorageGetter = Box<dyn Fn() -> Result<Option<Storage>, JsValue>>;

/// A [`Journal`] in `localStorage`, under `prefix + name`, settled entries included.
///
/// Storage is looked up on every call (as `window.localStorage`, or through an injected getter),
/// so a journal built while storage works keeps reporting errors honestly if it stops working.
/// Failures are values, never panics:
///
/// - `SecurityError` on access (storage blocked by settings or a sandboxed iframe), or no
///   window: [`JournalError::Unavailable`];
/// - `QuotaExceededError` on write: [`JournalError::QuotaExceeded`];
/// - a corrupt or foreign value under our prefix: [`JournalError::Corrupt`] (left untouched);
/// - an entry of another format version: migrated, or reported (see [`decode_entry`]).
pub struct LocalStorageJournal {
    prefix: String,
    storage: StorageGetter,
}

impl std::fmt::Debug for LocalStorageJournal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalStorageJournal")
            .field("prefix", &self.prefix)
            .finish_non_exhaustive()
    }
}

impl Default for LocalStorageJournal {
    fn default() -> Self {
        Self::new(DEFAULT_PREFIX)
    }
}

impl LocalStorageJournal {
    /// The journal in `window.localStorage` under `prefix`.
    pub fn new(prefix: impl Into<String>) -> Self {
        Self::with_storage(prefix, || match web_sys::window() {
            Some(window) => window.local_storage(),
            None => Ok(None),
        })
    }

    /// The journal under `prefix` in whatever `storage` returns, with the same contract as
    /// `Window::local_storage` (`Err` is what a blocked storage throws). Tests use it to
    /// simulate blocked storage.
    pub fn with_storage(
        prefix: impl Into<String>,
        storage: impl Fn() -> Result<Option<Storage>, JsValue> + 'static,
    ) -> Self {
        LocalStorageJournal {
            prefix: prefix.into(),
            storage: Box::new(storage),
        }
    }

    /// The prefix of this journal's entries.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// The localStorage key of the record named `name`.
    pub fn storage_key(&self, name: &str) -> String {
        [self.prefix.as_str(), name].concat()
    }

    /// The entry change another tab made, read from a `storage` event, if it concerns this
    /// journal: `(name, None)` when the entry was removed (discarded, or pruned), `(name,
    /// Some(..))` when it was written (an open record while the operation runs, a settled entry
    /// once it got its answer there). Hook it to `window`'s `storage` event to show another
    /// tab's progress.
    pub fn change_from_event(
        &self,
        event: &StorageEvent,
    ) -> Option<(String, Option<Result<Entry, JournalError>>)> {
        let name = event.key()?.strip_prefix(&self.prefix)?.to_owned();
        let entry = event.new_value().map(|text| decode_entry(&name, &text));
        Some((name, entry))
    }

    fn write(&mut self, name: &str, text: &str) -> Result<(), JournalError> {
        let storage = self.storage()?;
        storage
            .set_item(&self.storage_key(name), text)
            .map_err(write_error)
    }

    fn storage(&self) -> Result<Storage, JournalError> {
        match (self.storage)() {
            Ok(Some(storage)) => Ok(storage),
            Ok(None) => Err(JournalError::Unavailable(
                "localStorage is not available".into(),
            )),
            Err(error) => Err(JournalError::Unavailable(describe(&error))),
        }
    }
}

impl Journal for LocalStorageJournal {
    fn load(&self, name: &str) -> Result<Option<Record>, JournalError> {
        Ok(match self.load_entry(name)? {
            Some(Entry::Open(record)) => Some(record),
            Some(Entry::Settled(_)) | None => None,
        })
    }

    fn save(&mut self, record: &Record) -> Result<(), JournalError> {
        self.write(&record.name, &encode(record))
    }

    fn remove(&mut self, name: &str) -> Result<(), JournalError> {
        let storage = self.storage()?;
        storage
            .remove_item(&self.storage_key(name))
            .map_err(write_error)
    }

    fn names(&self) -> Result<Vec<String>, JournalError> {
        let storage = self.storage()?;
        let length = storage
            .length()
            .map_err(|e| JournalError::Unavailable(describe(&e)))?;
        // A loop, not `filter_map(..).collect()`: one iterator adapter instance less (−165 B gzip).
        let mut names = Vec::new();
        for i in 0..length {
            if let Some(key) = storage.key(i).ok().flatten() {
                if let Some(name) = key.strip_prefix(&self.prefix) {
                    names.push(name.to_owned());
                }
            }
        }
        crate::json::sort_by(&mut names, |a, b| a < b);
        Ok(names)
    }

    fn load_entry(&self, name: &str) -> Result<Option<Entry>, JournalError> {
        let storage = self.storage()?;
        let text = storage
            .get_item(&self.storage_key(name))
            .map_err(|e| JournalError::Unavailable(describe(&e)))?;
        text.map(|text| decode_entry(name, &text)).transpose()
    }

    fn save_settled(&mut self, settled: &SettledRecord) -> Result<(), JournalError> {
        self.write(&settled.name, &encode_settled(settled))
    }
}

/// Maps a failed write: quota errors by name (Chromium, WebKit) or Firefox's name, else
/// a generic write error.
fn write_error(error: JsValue) -> JournalError {
    let quota = error.is_instance_of::<DomException>()
        && matches!(
            text_member(&error, "name").as_str(),
            "QuotaExceededError" | "NS_ERROR_DOM_QUOTA_REACHED"
        );
    if quota {
        JournalError::QuotaExceeded
    } else {
        JournalError::Write(describe(&error))
    }
}

/// `"name: message"` for a DOMException or an Error, else the value's string form.
fn describe(error: &JsValue) -> String {
    // A DOMException is an Error in today's browsers, not in every older one: both checked.
    if error.is_instance_of::<DomException>() || error.is_instance_of::<js_sys::Error>() {
        return [
            text_member(error, "name").as_str(),
            ": ",
            text_member(error, "message").as_str(),
        ]
        .concat();
    }
    error.as_string().unwrap_or_else(|| "unknown error".into())
}

/// `object[name]` if it is a string, else `""`: an error's `name` and `message` read with
/// `Reflect` (already in the package) rather than through imports of their own for
/// `DOMException` and `Error` (the fetch driver reads a failed fetch's `message` with it too).
pub(crate) fn text_member(object: &JsValue, name: &str) -> String {
    js_sys::Reflect::get(object, &JsValue::from_str(name))
        .ok()
        .and_then(|v| v.as_string())
        .unwrap_or_default()
}
