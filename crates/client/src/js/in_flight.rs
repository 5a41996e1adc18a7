//! The calls of one client that have not finished yet, by operation name, so that concurrent
//! calls in one page (a double click, `Promise.all([submit(n, p), submit(n, p)])`) share one
//! operation and one promise instead of racing each other for the journal and the lock.

use js_sys::Promise;

/// One unfinished call.
struct Call {
    /// Tells this call from a later one under the same name.
    id: u64,
    name: String,
    /// The fingerprint of the payload it runs.
    fingerprint: String,
    promise: Promise,
}

/// What a new call finds under its name.
pub(super) enum Found {
    /// Nothing running: start one.
    Nothing,
    /// The same request is running: its promise is the answer.
    Same(Promise),
    /// Another payload is running under this name.
    Other,
}

/// The unfinished calls of one `IdempotentClient`.
#[derive(Default)]
pub(super) struct InFlight {
    calls: Vec<Call>,
    next_id: u64,
}

impl InFlight {
    /// What a call for `name` with payload `fingerprint` (`None`: a resume, which joins
    /// whatever runs) finds.
    pub fn find(&self, name: &str, fingerprint: Option<&str>) -> Found {
        let Some(call) = self.calls.iter().find(|c| c.name == name) else {
            return Found::Nothing;
        };
        match fingerprint {
            Some(f) if call.fingerprint != f => Found::Other,
            _ => Found::Same(call.promise.clone()),
        }
    }

    /// A fresh id for the next call.
    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Records the running call `id` (its promise is what later calls join).
    pub fn insert(&mut self, id: u64, name: String, fingerprint: String, promise: Promise) {
        self.calls.push(Call {
            id,
            name,
            fingerprint,
            promise,
        });
    }

    /// Forgets call `id` once it has finished.
    pub fn remove(&mut self, id: u64) {
        self.calls.retain(|c| c.id != id);
    }
}
