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
/// lock (`held`: false) if the API is missing or refuses the request.
pub async fn with_lock<T, W: Future<Output = T>>(
    lock_name: &str,
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
    let _ = release_resolve.call0(&JsValue::UNDEFINED);
    if let Ok(granted) = granted.dyn_into::<Promise>() {
        let _ = JsFuture::from(granted).await;
    }
    out
}
