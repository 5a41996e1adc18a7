//! The few browser APIs the page uses directly (idem-client owns localStorage). Every failure is
//! swallowed into `None` / `false`: a blocked sessionStorage only costs the reload resume.

/// sessionStorage item holding the run log.
pub const RUN_LOG_ITEM: &str = "idem-demo:run";

fn session() -> Option<web_sys::Storage> {
    web_sys::window()?.session_storage().ok().flatten()
}

/// The text under `item` in sessionStorage.
pub fn session_get(item: &str) -> Option<String> {
    session()?.get_item(item).ok().flatten()
}

/// Store `text` under `item` in sessionStorage; `false` when storage refused it.
pub fn session_set(item: &str, text: &str) -> bool {
    session().is_some_and(|s| s.set_item(item, text).is_ok())
}

/// Wall-clock milliseconds from `performance.now()` (the page's own pacing only; the world
/// never sees it).
pub fn wall_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// Run `f` in a task of its own once the next frame is painted (a frame callback, then a
/// zero-delay timer): start-up work the first frame does not need waits behind it, and work
/// that must not share a task with a render gets its own. Boxed: one copy in the bundle.
pub fn after_paint(f: Box<dyn FnOnce()>) {
    use wasm_bindgen::JsCast;
    let Some(w) = web_sys::window() else { return };
    let then = wasm_bindgen::closure::Closure::once_into_js(move || {
        gloo_timers::callback::Timeout::new(0, f).forget();
    });
    let _ = w.request_animation_frame(then.unchecked_ref());
}

/// The page's query string parameter `name` (e.g. `?seed=7`).
pub fn query_param(name: &str) -> Option<String> {
    let search = web_sys::window()?.location().search().ok()?;
    search
        .trim_start_matches('?')
        .split('&')
        .filter_map(|kv| kv.split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.to_string())
}

/// The `content` of the page's `<meta name="{name}">`, when it is there and not empty.
pub fn meta_content(name: &str) -> Option<String> {
    let selector = ["meta[name=\"", name, "\"]"].concat();
    let meta = web_sys::window()?
        .document()?
        .query_selector(&selector)
        .ok()??;
    meta.get_attribute("content").filter(|c| !c.is_empty())
}

/// sessionStorage item holding the URL hash the page last wrote (a reload keeps its own run;
/// a different hash is a link to open).
pub const HASH_ITEM: &str = "idem-demo:hash";

/// sessionStorage item holding the hash written before [`HASH_ITEM`]'s.
pub const PREV_HASH_ITEM: &str = "idem-demo:hash-prev";

/// The URL's hash without `#` (empty when there is none).
pub fn location_hash() -> String {
    let hash = web_sys::window()
        .and_then(|w| w.location().hash().ok())
        .unwrap_or_default();
    hash.strip_prefix('#').unwrap_or(&hash).to_string()
}

/// Replace the URL's hash without a new history entry or a `hashchange` event.
pub fn replace_hash(hash: &str) {
    let Some(w) = web_sys::window() else { return };
    if let Ok(history) = w.history() {
        let url = ["#", hash].concat();
        let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
    }
}

/// The page's address, hash included.
pub fn page_url() -> String {
    web_sys::window()
        .and_then(|w| w.location().href().ok())
        .unwrap_or_default()
}

/// Focus the first element matching `selector`; `false` when there is none.
pub fn focus(selector: &str) -> bool {
    use wasm_bindgen::JsCast;
    let found = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.query_selector(selector).ok().flatten())
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    found.is_some_and(|e| e.focus().is_ok())
}
