//! Real mode's way out of the page: idem-client's `fetch` driver (the attempts, their waits and
//! the key-state question: `idem_client::driver`), a keyless request for demo mode's views and
//! switches, the real `localStorage` journal, and the browser's clock.
//!
//! The driver and the localStorage journal exist on wasm32 only. Native builds (the page's unit
//! tests) never run real mode, so there these answer "no browser" and keep records in memory:
//! the rest of `real/` compiles and is tested the same on both.

use idem_client::{Operation, Outcome};

pub use self::imp::*;

/// Where real mode keeps its records: `idem-real:<tenant>:`, apart from the simulated run's
/// `idem:` records (which a new simulated run clears) and from other tabs' sessions.
pub fn prefix(tenant: &str) -> String {
    ["idem-real:", tenant, ":"].concat()
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use idem_client::driver::{fetch, reconcile as key_state};
    use idem_client::journal::local_storage::LocalStorageJournal;

    use super::*;

    /// The journal: the browser's real localStorage.
    pub type PageJournal = LocalStorageJournal;

    /// The journal under `prefix`.
    pub fn journal(prefix: &str) -> PageJournal {
        LocalStorageJournal::new(prefix)
    }

    /// `Date.now()`: records and the server's times are wall-clock milliseconds.
    pub fn now_ms() -> u64 {
        idem_client::driver::now_ms()
    }

    /// The raw localStorage text under `item`.
    pub fn stored(item: &str) -> Option<String> {
        let storage = web_sys::window()?.local_storage().ok().flatten()?;
        storage.get_item(item).ok().flatten()
    }

    /// Runs `op` to its outcome against `url` with `headers`, telling `observe` every step.
    pub async fn run(
        op: &mut Operation,
        url: &str,
        headers: &[(String, String)],
        journal: &mut PageJournal,
        observe: &mut dyn FnMut(u64, fetch::Exchange<'_>),
    ) -> Outcome {
        let endpoint = fetch::Endpoint {
            url: url.to_owned(),
            headers: headers.to_vec(),
            // idem-server, whose CORS allows it.
            first_sent: true,
        };
        fetch::run_with(op, &endpoint, journal, observe).await
    }

    // The key-state question that settles an operation, and one keyless request (demo mode's
    // views, its fault switch): the driver's own, with the signatures the native stubs copy.
    pub use idem_client::driver::fetch::request;
    pub use key_state::reconcile;

    pub use fetch::Exchange as Step;
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use idem_client::{KeyState, MemoryJournal, OutcomeKind, Reply};

    use super::*;

    /// The journal: memory (no browser here).
    pub type PageJournal = MemoryJournal;

    /// A fresh memory journal.
    pub fn journal(_prefix: &str) -> PageJournal {
        MemoryJournal::new()
    }

    /// No browser clock natively: 0.
    pub fn now_ms() -> u64 {
        0
    }

    /// No localStorage natively.
    pub fn stored(_item: &str) -> Option<String> {
        None
    }

    /// No `fetch` natively: the operation ends unknown without an attempt.
    pub async fn run(
        op: &mut Operation,
        _url: &str,
        _headers: &[(String, String)],
        _journal: &mut PageJournal,
        _observe: &mut dyn FnMut(u64, Step<'_>),
    ) -> Outcome {
        Outcome {
            name: op.name().to_owned(),
            kind: OutcomeKind::Unknown { last_error: None },
            key: None,
            attempts: 0,
            durability: op.durability(),
        }
    }

    /// No `fetch` natively.
    pub async fn reconcile(
        _op: &mut Operation,
        _url: &str,
        _headers: &[(String, String)],
        _journal: &mut PageJournal,
        _deadline: u64,
    ) -> Result<KeyState, String> {
        Err(NO_BROWSER.into())
    }

    /// No `fetch` natively.
    pub async fn request(
        _method: &str,
        _url: &str,
        _headers: &[(String, String)],
        _body: Option<&str>,
        _deadline: u64,
    ) -> Result<Reply, String> {
        Err(NO_BROWSER.into())
    }

    const NO_BROWSER: &str = "real mode runs in a browser only";

    /// The driver's steps, as `idem_client::driver::fetch::Exchange` has them on wasm32.
    #[allow(dead_code)]
    pub enum Step<'a> {
        /// An attempt leaves.
        Sent(&'a idem_client::Attempt),
        /// Its reply.
        Answered(&'a Reply),
        /// Aborted at its deadline.
        TimedOut,
        /// `fetch` rejected.
        Failed(&'a str),
        /// Waiting until then.
        Waiting(u64),
    }
}
