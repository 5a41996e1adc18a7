//! An in-memory journal for native code, tests and the simulator.

use std::collections::BTreeMap;

use super::{decode, encode, Journal, JournalError, Record};

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

    /// The raw text stored under `name`.
    pub fn raw(&self, name: &str) -> Option<&str> {
        self.entries.get(name).map(String::as_str)
    }
}

impl Journal for MemoryJournal {
    fn load(&self, name: &str) -> Result<Option<Record>, JournalError> {
        self.entries
            .get(name)
            .map(|text| decode(name, text))
            .transpose()
    }

    fn save(&mut self, record: &Record) -> Result<(), JournalError> {
        if let Some(error) = &self.failing {
            return Err(error.clone());
        }
        self.entries.insert(record.name.clone(), encode(record));
        Ok(())
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
}
