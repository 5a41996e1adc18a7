//! One tab at a time per operation: the Web Locks API, where present.
//!
//! [`with_lock`] runs a future while holding an exclusive lock (the bindings name it after the
//! record's storage key, `<storagePrefix><name>`) through `navigator.locks.request`, so a second
//! tab submitting the same operation waits until the first is done, then reads the journal
//! afresh: a pending record resumes under its key, a settled entry re-sends under its key (the
//! server replays). The API is reached through `Reflect` because web-sys gates `LockManager`
//! behind unstable APIs.
//!
//! Fallback, where `navigator.locks` is missing (old browsers, some insecure contexts) or the
//! request is refused (an opaque origin): the future runs without a lock and is told so. Two tabs
//! resuming a journaled operation still send the same key, and the server's 409 / replay keeps
//! it single. Two tabs *creating* the same operation in the same instant can both read "nothing
//! here"; the bindings then write the minted key, wait for the other tab's write to arrive, and
//! confirm (`Operation::start_unlocked`): the key that stands in storage wins in both tabs. What
//! is left is a write slower to reach the other tab than that wait.
//!
//! A lock orders the tabs, not their storage: Chromium hands each tab's `localStorage` writes to
//! the other tabs asynchronously, so a tab granted the lock the instant another lets go could
//! read the journal before that tab's last writes arrive, see nothing, and mint a second key
//! (seen in CI: two tabs, one instant, two keys). So the holder keeps the lock `hold_after_ms`
//! after its work is done (its answer is not delayed: the lock is let go in the background);
//! whichever tab is granted it next, waiting or not, reads a journal the writes have reached.

use std::future::Future;

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// Whether `navigator.locks` exists here.
pub fn available() -> bool {
    locks().is_some()
}

fn locks() -> Option<JsValue> {
    let navigator = web_sys::window()?.navigator();
    let locks = Reflect::get(&navigator, &JsValue::from_str("locks")).ok()?;
    let request = Reflect::get(&locks, &JsValue::from_str("request")).ok()?;
    request.is_function().then_some(locks)
}

/// Runs `work(held)` holding the exclusive Web Lock named `lock_name` (`held`: true), or without a
/// lock (`held`: false) if the API is missing or refuses the request. The lock is let go
/// `hold_after_ms` after `work` is done, in the background; `work`'s output is returned at once.
pub async fn with_lock<T, W: Future<Output = T>>(
    lock_name: &str,
    hold_after_ms: u64,
    work: impl FnOnce(bool) -> W,
) -> T {
    let Some(locks) = locks() else {
        return work(false).await;
    };
    let mut acquired_resolve: Option<Function> = None;
    let acquired = Promise::new(&mut |resolve, _| acquired_resolve = Some(resolve));
    let mut release_resolve: Option<Function> = None;
    let release = Promise::new(&mut |resolve, _| release_resolve = Some(resolve));
    let (Some(acquired_resolve), Some(release_resolve)) = (acquired_resolve, release_resolve)
    else {
        // Promise executors run synchronously, so both are set; if not, do without the lock.
        return work(false).await;
    };
    // Called once the lock is granted; the lock is held until `release` settles.
    let callback = Closure::once_into_js(move |_lock: JsValue| -> JsValue {
        let _ = acquired_resolve.call0(&JsValue::UNDEFINED);
        release.into()
    });
    let request = Reflect::get(&locks, &JsValue::from_str("request"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok());
    let granted = request.and_then(|request| {
        request
            .call2(&locks, &JsValue::from_str(lock_name), &callback)
            .ok()
    });
    let Some(granted) = granted else {
        return work(false).await;
    };
    let _ = JsFuture::from(acquired).await;
    let out = work(true).await;
    let release = async move {
        super::timer::sleep_until(super::now_ms().saturating_add(hold_after_ms)).await;
        let _ = release_resolve.call0(&JsValue::UNDEFINED);
        if let Ok(granted) = granted.dyn_into::<Promise>() {
            let _ = JsFuture::from(granted).await;
        }
    };
    wasm_bindgen_futures::spawn_local(release);
    out
}
