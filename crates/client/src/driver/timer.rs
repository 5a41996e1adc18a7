//! Waiting in the browser: `setTimeout` takes its delay as a signed 32-bit count of
//! milliseconds, and a longer one (over 24.8 days: a far `Retry-After` date, a long retry
//! window) overflows and fires at once, which would turn a long wait into a tight loop. Every
//! wait here is cut into delays of at most [`MAX_TIMER_MS`] and re-armed until its deadline.
//!
//! One wait is a [`Timeout`]: a promise resolved by `setTimeout`, awaited as a `JsFuture`, and
//! cleared when dropped (a lost race in [`first`]). gloo-timers' `TimeoutFuture` did the same
//! through a `futures-channel` oneshot and a closure type of its own, which cost the package
//! about 0.6 KB gzip; `JsFuture` and the promise executor's closure are in it anyway.

use core::future::{poll_fn, Future};
use core::pin::{pin, Pin};
use core::task::{Context, Poll};

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

use super::now_ms;

#[wasm_bindgen]
extern "C" {
    /// The global `setTimeout` (a window's or a worker's), as gloo-timers called it.
    #[wasm_bindgen(js_name = setTimeout)]
    fn set_timeout(handler: &Function, ms: i32) -> JsValue;
    /// The global `clearTimeout`; a no-op for a timer that has fired.
    #[wasm_bindgen(js_name = clearTimeout)]
    fn clear_timeout(id: &JsValue);
}

/// A `setTimeout` of `ms` as a future; dropping it clears the timer.
pub struct Timeout {
    id: JsValue,
    fired: JsFuture,
}

impl Timeout {
    /// Arms a timer of `ms` milliseconds (at most [`MAX_TIMER_MS`], see [`clamp_delay`]).
    pub fn new(ms: u32) -> Self {
        let mut id = JsValue::UNDEFINED;
        // The executor runs synchronously, so `id` is set when `new` returns.
        let promise = Promise::new(&mut |resolve, _| id = set_timeout(&resolve, ms as i32));
        Timeout {
            id,
            fired: JsFuture::from(promise),
        }
    }
}

impl Future for Timeout {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // The promise only resolves (with `undefined`).
        Pin::new(&mut self.fired).poll(cx).map(|_| ())
    }
}

impl Drop for Timeout {
    fn drop(&mut self) {
        clear_timeout(&self.id);
    }
}

/// The longest delay `setTimeout` honours: 2^31 − 1 ms (about 24.8 days).
pub const MAX_TIMER_MS: u64 = 2_147_483_647;

/// `ms` as a `setTimeout` delay: at most [`MAX_TIMER_MS`], never one that overflows.
pub fn clamp_delay(ms: u64) -> u32 {
    // At most 2^31 - 1, so it fits.
    ms.min(MAX_TIMER_MS) as u32
}

/// Sleeps until `at` (ms since the epoch, `Date.now()`'s clock), however far away.
pub async fn sleep_until(at: u64) {
    loop {
        let now = now_ms();
        if now >= at {
            return;
        }
        Timeout::new(clamp_delay(at - now)).await;
    }
}

/// Which of two futures finished first.
pub enum First<A, B> {
    /// The first one.
    Left(A),
    /// The second one.
    Right(B),
}

/// Runs `left` and `right` together and returns the output of whichever finishes first (the
/// other is dropped, which cancels a timer or a `fetch` future).
pub async fn first<A: Future, B: Future>(left: A, right: B) -> First<A::Output, B::Output> {
    let mut left = pin!(left);
    let mut right = pin!(right);
    poll_fn(|cx| {
        if let Poll::Ready(out) = left.as_mut().poll(cx) {
            return Poll::Ready(First::Left(out));
        }
        if let Poll::Ready(out) = right.as_mut().poll(cx) {
            return Poll::Ready(First::Right(out));
        }
        Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::{wasm_bindgen_test as test, wasm_bindgen_test_configure};

    use super::*;

    wasm_bindgen_test_configure!(run_in_browser);

    #[test]
    fn delays_are_clamped_to_what_set_timeout_honours() {
        assert_eq!(clamp_delay(0), 0);
        assert_eq!(clamp_delay(1_000), 1_000);
        assert_eq!(clamp_delay(MAX_TIMER_MS), 2_147_483_647);
        assert_eq!(clamp_delay(MAX_TIMER_MS + 1), 2_147_483_647);
        assert_eq!(clamp_delay(u64::MAX), 2_147_483_647);
    }

    /// The browser really fires an overflowing delay at once (so the clamp is needed), and a
    /// sleep past the limit does not.
    #[test]
    async fn a_sleep_longer_than_the_limit_does_not_fire_at_once() {
        let overflowing = Timeout::new((MAX_TIMER_MS + 1_000) as u32);
        let beat = Timeout::new(300);
        assert!(
            matches!(first(overflowing, beat).await, First::Left(())),
            "this browser no longer fires overflowing delays at once; the clamp is moot"
        );
        let started = now_ms();
        let far = sleep_until(started + MAX_TIMER_MS + 1_000);
        let beat = Timeout::new(300);
        assert!(matches!(first(far, beat).await, First::Right(())));
        assert!(now_ms() - started >= 290);
    }

    #[test]
    async fn a_short_sleep_ends_at_its_deadline() {
        let started = now_ms();
        sleep_until(started + 50).await;
        assert!(now_ms() >= started + 50);
    }
}
