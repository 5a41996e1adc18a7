//! An in-memory journal for native code, tests and the simulator; it keeps settled entries.

use std::collections::BTreeMap;

use super::{
    decode_entry, encode, encode_settled, Entry, Journal, JournalError, Record, SettledRecord,
};

/// A [`Journal`] in a `BTreeMap` of encoded text (so it reads back exactly like localStorage
/// does, corrupt values included). Survives a simulated reload if the simulator keeps it.
///
/// Write failures can be switched on ([`MemoryJournal::fail_writes`]) to simulate a full or
/// blocked storage.
#[derive(Clone, Debug, Default)]
pub struct MemoryJournal {
    entries: BTreeMap<String, String>,
    failing: Option<JournalError>,
}

impl MemoryJournal {
    /// An empty journal whose writes succeed.
    pub fn new() -> Self {
        Self::default()
    }

    /// From now on, every `save` and `remove` fails with `error` (or succeeds again with `None`).
    pub fn fail_writes(&mut self, error: Option<JournalError>) {
        self.failing = error;
    }

    /// Stores raw text under `name`, bypassing encoding (to plant corrupt or old records).
    pub fn insert_raw(&mut self, name: impl Into<String>, text: impl Into<String>) {
        self.entries.insert(name.into(), text.into());
    }

    fn write(&mut self, name: &str, text: String) -> Result<(), JournalError> {
        if let Some(error) = &self.failing {
            return Err(error.clone());
        }
        self.entries.insert(name.to_owned(), text);
        Ok(())
    }

    /// The raw text stored under `name`.
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.entries.get(name).map(String::as_str)
    }
}

impl Journal for MemoryJournal {
    fn load(&self, name: &str) -> Result<Option<Record>, JournalError> {
        Ok(match self.load_entry(name)? {
            Some(Entry::Open(record)) => Some(record),
            Some(Entry::Settled(_)) | None => None,
        })
    }

    fn save(&mut self, record: &Record) -> Result<(), JournalError> {
        self.write(&record.name, encode(record))
    }

    fn remove(&mut self, name: &str) -> Result<(), JournalError> {
        if let Some(error) = &self.failing {
            return Err(error.clone());
        }
        self.entries.remove(name);
        Ok(())
    }

    fn names(&self) -> Result<Vec<String>, JournalError> {
        Ok(self.entries.keys().cloned().collect())
    }

    fn load_entry(&self, name: &str) -> Result<Option<Entry>, JournalError> {
        self.entries
            .get(name)
            .map(|text| decode_entry(name, text))
            .transpose()
    }

    fn save_settled(&mut self, settled: &SettledRecord) -> Result<(), JournalError> {
        self.write(&settled.name, encode_settled(settled))
    }
}
