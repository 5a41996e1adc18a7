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
//! the other tabs asynchronously, and a lock granted the moment the first tab lets go can reach
//! the second before the first tab's record does (seen once: two tabs, one instant, two keys).
//! So a tab that had to wait for the lock is told so ([`Lock::AfterAnother`]), and the bindings
//! give the other tab's writes the same settle time before reading the journal.

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

/// How the work runs: under the lock, first or after another holder, or without one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lock {
    /// Under the lock, which no other tab held or awaited when this one asked.
    Alone,
    /// Under the lock, which another tab held or awaited when this one asked: its last writes
    /// may not have reached this tab's storage yet.
    AfterAnother,
    /// Without a lock (no Web Locks here, or the request was refused).
    None,
}

/// Runs `work(lock)` holding the exclusive Web Lock named `lock_name`, or without a lock if
/// the API is missing or refuses the request.
pub async fn with_lock<T, W: Future<Output = T>>(
    lock_name: &str,
    work: impl FnOnce(Lock) -> W,
) -> T {
    let Some(locks) = locks() else {
        return work(Lock::None).await;
    };
    let contended = contended(&locks, lock_name).await;
    let mut acquired_resolve: Option<Function> = None;
    let acquired = Promise::new(&mut |resolve, _| acquired_resolve = Some(resolve));
    let mut release_resolve: Option<Function> = None;
    let release = Promise::new(&mut |resolve, _| release_resolve = Some(resolve));
    let (Some(acquired_resolve), Some(release_resolve)) = (acquired_resolve, release_resolve)
    else {
        // Promise executors run synchronously, so both are set; if not, do without the lock.
        return work(Lock::None).await;
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
        return work(Lock::None).await;
    };
    let _ = JsFuture::from(acquired).await;
    let out = work(if contended {
        Lock::AfterAnother
    } else {
        Lock::Alone
    })
    .await;
    let _ = release_resolve.call0(&JsValue::UNDEFINED);
    if let Ok(granted) = granted.dyn_into::<Promise>() {
        let _ = JsFuture::from(granted).await;
    }
    out
}

/// Whether another holder had, or waited for, `lock_name` a moment ago (`navigator.locks.query`,
/// a snapshot; false when the query is missing or fails).
async fn contended(locks: &JsValue, lock_name: &str) -> bool {
    let query = Reflect::get(locks, &JsValue::from_str("query"))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok());
    let Some(snapshot) = query.and_then(|query| query.call0(locks).ok()) else {
        return false;
    };
    let Ok(snapshot) = snapshot.dyn_into::<Promise>() else {
        return false;
    };
    let Ok(snapshot) = JsFuture::from(snapshot).await else {
        return false;
    };
    let name = JsValue::from_str(lock_name);
    ["held", "pending"].into_iter().any(|list| {
        let Ok(list) = Reflect::get(&snapshot, &JsValue::from_str(list)) else {
            return false;
        };
        js_sys::Array::from(&list)
            .iter()
            .any(|lock| Reflect::get(&lock, &JsValue::from_str("name")).is_ok_and(|n| n == name))
    })
}
