//! The journal the page's checkout uses: idem-client's `LocalStorageJournal` (the browser's
//! real localStorage), with a memory overlay switched on while a reload replays the run.
//!
//! Why the overlay: after a real page reload the world is rebuilt by replaying the run log. The
//! replayed checkout must see the journal as the original run saw it (empty at its first Pay),
//! or it would resume instead of start and the replay would diverge. So during the replay reads
//! and writes go to a scratch memory journal; afterwards the page reloads the tab inside the
//! world and the pending checkout resumes from the real localStorage record, with its key.

use std::cell::RefCell;
use std::rc::Rc;

use idem_client::{Entry, Journal, JournalError, MemoryJournal, Record, SettledRecord};

/// Where records go on this target: localStorage in the browser, memory natively (tests).
#[cfg(target_arch = "wasm32")]
type Real = idem_client::journal::local_storage::LocalStorageJournal;
#[cfg(not(target_arch = "wasm32"))]
type Real = MemoryJournal;

/// The localStorage prefix of the demo's records.
pub const PREFIX: &str = "idem:";

/// A shared handle: the world holds a boxed clone per checkout, the adapter keeps one to read.
#[derive(Clone)]
pub struct PageJournal {
    real: Rc<RefCell<Real>>,
    overlay: Rc<RefCell<Option<MemoryJournal>>>,
}

impl PageJournal {
    /// The page's journal under [`PREFIX`].
    pub fn new() -> Self {
        #[cfg(target_arch = "wasm32")]
        let real = Real::new(PREFIX);
        #[cfg(not(target_arch = "wasm32"))]
        let real = Real::new();
        Self {
            real: Rc::new(RefCell::new(real)),
            overlay: Rc::new(RefCell::new(None)),
        }
    }

    /// Route reads and writes to a fresh scratch journal (`true`) or to the real one (`false`).
    pub fn set_replaying(&self, replaying: bool) {
        *self.overlay.borrow_mut() = replaying.then(MemoryJournal::new);
    }

    /// The storage item name of operation `name`.
    pub fn storage_key(&self, name: &str) -> String {
        format!("{PREFIX}{name}")
    }

    /// The raw text stored for operation `name` in the real journal.
    pub fn raw(&self, name: &str) -> Option<String> {
        #[cfg(target_arch = "wasm32")]
        {
            let storage = web_sys::window()?.local_storage().ok().flatten()?;
            storage.get_item(&self.storage_key(name)).ok().flatten()
        }
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.real.borrow().raw(name).map(str::to_owned)
        }
    }

    /// Remove every record of ours from the real journal (a new run: its server is new too).
    pub fn clear(&self) {
        let mut real = self.real.borrow_mut();
        if let Ok(names) = real.names() {
            for name in names {
                let _ = real.remove(&name);
            }
        }
    }
}

impl Journal for PageJournal {
    fn load(&self, name: &str) -> Result<Option<Record>, JournalError> {
        match self.overlay.borrow().as_ref() {
            Some(m) => m.load(name),
            None => self.real.borrow().load(name),
        }
    }

    fn save(&mut self, record: &Record) -> Result<(), JournalError> {
        match self.overlay.borrow_mut().as_mut() {
            Some(m) => m.save(record),
            None => self.real.borrow_mut().save(record),
        }
    }

    fn remove(&mut self, name: &str) -> Result<(), JournalError> {
        match self.overlay.borrow_mut().as_mut() {
            Some(m) => m.remove(name),
            None => self.real.borrow_mut().remove(name),
        }
    }

    fn names(&self) -> Result<Vec<String>, JournalError> {
        match self.overlay.borrow().as_ref() {
            Some(m) => m.names(),
            None => self.real.borrow().names(),
        }
    }

    // Both journals keep settled entries (key and status, no payload): so does the page's.
    fn load_entry(&self, name: &str) -> Result<Option<Entry>, JournalError> {
        match self.overlay.borrow().as_ref() {
            Some(m) => m.load_entry(name),
            None => self.real.borrow().load_entry(name),
        }
    }

    fn save_settled(&mut self, settled: &SettledRecord) -> Result<(), JournalError> {
        match self.overlay.borrow_mut().as_mut() {
            Some(m) => m.save_settled(settled),
            None => self.real.borrow_mut().save_settled(settled),
        }
    }
}
