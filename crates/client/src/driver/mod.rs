//! The real driver (wasm32 only): runs an [`Operation`](crate::Operation) over `fetch`.
//!
//! [`fetch::run`] loops over [`Operation::poll`](crate::Operation::poll): it sends attempts with
//! `fetch` (aborting each with an `AbortController` at its deadline), sleeps through backoffs
//! with `setTimeout` ([`timer`] keeps waits past `setTimeout`'s 24.8-day limit from firing at
//! once), and feeds replies back, `Retry-After` dates read against `Date.now()`
//! ([`fetch::run_with`] also reports each step, for a page that shows its attempts).
//! [`reconcile::reconcile`] asks the key-state endpoint about an open operation and settles it.
//! [`lock::with_lock`] keeps two tabs of the same origin from running the same operation at
//! once. Time is `Date.now()` (wall clock, since records
//! outlive the page); jitter comes from `Math.random()` ([`MathRandom`]), which is fine here:
//! nothing replays a browser run.

pub mod fetch;
pub mod lock;
pub mod reconcile;
pub mod timer;

/// Milliseconds since the epoch, from `Date.now()`.
pub fn now_ms() -> u64 {
    // Date.now() is a non-negative integer number of ms; `as` saturates on anything odd.
    js_sys::Date::now() as u64
}

/// A `rand_core::RngCore` over `Math.random()`, for backoff jitter in the browser.
#[derive(Clone, Copy, Debug, Default)]
pub struct MathRandom;

impl rand_core::RngCore for MathRandom {
    fn next_u32(&mut self) -> u32 {
        (js_sys::Math::random() * 4_294_967_296.0) as u32
    }

    fn next_u64(&mut self) -> u64 {
        (u64::from(self.next_u32()) << 32) | u64::from(self.next_u32())
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        rand_core::impls::fill_bytes_via_next(self, dst)
    }
}
