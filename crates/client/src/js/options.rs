//! `ClientOptions` read into a [`Config`], field by field with `Reflect` (no serde in the
//! package), each bad value a clear `invalidOptions` error at construction.

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use super::convert::error;
use crate::driver::fetch::Endpoint;
use crate::driver::timer::MAX_TIMER_MS;
use crate::journal::local_storage::{LocalStorageJournal, DEFAULT_PREFIX};
use crate::{KeyUse, Method, Persistence, RetryPolicy};

/// What each submit needs, read once from `ClientOptions`.
pub(super) struct Config {
    pub endpoint: Endpoint,
    pub method: Method,
    pub key_use: KeyUse,
    pub policy: RetryPolicy,
    /// The localStorage prefix, which also prefixes the Web Lock names.
    pub prefix: String,
    pub persistence: Persistence,
    /// Where Web Locks are missing: the wait before a minted key is confirmed.
    pub settle_without_locks_ms: u64,
    /// The key-state endpoint, split where `{key}` stands.
    pub key_state_url: (String, String),
}

/// idem-server's key-state route, the default under the endpoint's origin.
const KEY_STATE_PATH: &str = "/api/keys/{key}";

/// `settleWithoutLocksMs` when not given: a localStorage write reaches another tab of Chromium
/// within milliseconds (it goes through the browser process), yet 100 ms was once not enough
/// (two tabs without Web Locks, two keys, in a fresh-clone run on a loaded 2-core machine), so
/// 250 ms, at the cost of a quarter second on a new operation on browsers without Web Locks
/// (and on a tab that had to wait for another tab's lock).
const DEFAULT_SETTLE_WITHOUT_LOCKS_MS: u64 = 250;

impl Config {
    /// The journal in this origin's localStorage under the configured prefix.
    pub fn journal(&self) -> LocalStorageJournal {
        LocalStorageJournal::new(self.prefix.clone())
    }

    /// The Web Lock that serialises operation `name` across tabs: the storage key of its
    /// record, so two clients with different prefixes never wait on each other.
    pub fn lock_name(&self, name: &str) -> String {
        [self.prefix.as_str(), name].concat()
    }

    /// Where to ask for `key`'s state.
    pub fn key_state_url(&self, key: &str) -> String {
        let (before, after) = &self.key_state_url;
        [before.as_str(), key, after.as_str()].concat()
    }
}

/// The key's place in a `keyStateUrl`.
const KEY: &str = "{key}";

/// `template` split around its first `{key}`, `None` without one.
fn split_key(template: &str) -> Option<(String, String)> {
    // A byte scan rather than `str::find`, whose substring searcher costs the package KBs.
    let at = template
        .as_bytes()
        .windows(KEY.len())
        .position(|w| w == KEY.as_bytes())?;
    // `get`, not indexing: the panic path of a str slice brings `core::fmt`'s Debug along.
    let (before, after) = (template.get(..at)?, template.get(at + KEY.len()..)?);
    Some((before.to_owned(), after.to_owned()))
}

/// `scheme://authority` (or `//authority`) of `url`, or `""` for a path on the page's own
/// origin: where idem-server's key-state route lives next to the endpoint.
fn origin_of(url: &str) -> &str {
    let bytes = url.as_bytes();
    // The scheme: letters, digits and `+-.`, then `://` (byte scans, as in `split_key`).
    let scheme = bytes
        .iter()
        .position(|b| !(b.is_ascii_alphanumeric() || b"+-.".contains(b)))
        .filter(|&at| at > 0 && bytes[at..].starts_with(b"://"));
    let authority = match scheme {
        Some(at) => at + 3,
        None if bytes.starts_with(b"//") => 2,
        None => return "",
    };
    let end = bytes[authority..]
        .iter()
        .position(|b| matches!(b, b'/' | b'?' | b'#'))
        .map_or(url.len(), |at| authority + at);
    url.get(..end).unwrap_or("")
}

/// Reads `ClientOptions` as serde did (undefined members take their defaults; `null` too where
/// the TypeScript type allows it), field by field, without serde.
pub(super) fn read_options(options: &JsValue) -> Result<Config, JsValue> {
    if !options.is_object() {
        return Err(bad("options must be an object"));
    }
    let endpoint = member(options, "endpoint")
        .and_then(|v| v.as_string())
        .ok_or_else(|| bad("options.endpoint must be a string"))?;
    let method = match member(options, "method").filter(|v| !v.is_null()) {
        None => Method::Post,
        Some(v) => v
            .as_string()
            .and_then(|name| Method::from_name(&name))
            .ok_or_else(|| {
                bad("options.method must be one of POST, PATCH, PUT, DELETE, GET, HEAD")
            })?,
    };
    let always_key = boolean(options, "options.", "alwaysKey")?.unwrap_or(false);
    let allow_memory_only = boolean(options, "options.", "allowMemoryOnly")?.unwrap_or(false);
    let first_sent = boolean(options, "options.", "sendFirstSent")?.unwrap_or(true);
    let prefix = match member(options, "storagePrefix").filter(|v| !v.is_null()) {
        None => DEFAULT_PREFIX.to_owned(),
        Some(v) => v
            .as_string()
            .ok_or_else(|| bad("options.storagePrefix must be a string"))?,
    };
    let mut headers = Vec::new();
    if let Some(object) = member(options, "headers") {
        if !object.is_object() {
            return Err(bad("options.headers must be an object"));
        }
        for entry in Object::entries(object.unchecked_ref()).iter() {
            let entry: Array = entry.unchecked_into();
            let (Some(name), Some(value)) = (entry.get(0).as_string(), entry.get(1).as_string())
            else {
                return Err(bad("options.headers values must be strings"));
            };
            headers.push((name, value));
        }
        crate::json::sort_by(&mut headers, |a, b| a.0 < b.0);
    }
    let settle_without_locks_ms = match member(options, "settleWithoutLocksMs") {
        None => DEFAULT_SETTLE_WITHOUT_LOCKS_MS,
        Some(v) => integer(&v, MAX_TIMER_MS).ok_or_else(|| {
            bad("options.settleWithoutLocksMs must be an integer from 0 to 2147483647")
        })?,
    };
    let key_state_url = match member(options, "keyStateUrl").filter(|v| !v.is_null()) {
        None => split_key(&[origin_of(&endpoint), KEY_STATE_PATH].concat()),
        Some(v) => v.as_string().as_deref().and_then(split_key),
    }
    .ok_or_else(|| bad("options.keyStateUrl must be a string containing {key}"))?;
    let mut policy = RetryPolicy::default();
    if let Some(p) = member(options, "policy") {
        if !p.is_object() {
            return Err(bad("options.policy must be an object"));
        }
        let ms = |name: &str, default: u64| -> Result<u64, JsValue> {
            match member(&p, name) {
                None => Ok(default),
                Some(v) => integer(&v, u64::MAX).ok_or_else(|| {
                    bad(&["options.policy.", name, " must be a non-negative integer"].concat())
                }),
            }
        };
        policy.initial_backoff_ms = ms("initialBackoffMs", policy.initial_backoff_ms)?;
        policy.max_backoff_ms = ms("maxBackoffMs", policy.max_backoff_ms)?;
        policy.attempt_timeout_ms = ms("attemptTimeoutMs", policy.attempt_timeout_ms)?;
        policy.retry_window_ms = ms("retryWindowMs", policy.retry_window_ms)?;
        policy.jitter = boolean(&p, "options.policy.", "jitter")?.unwrap_or(policy.jitter);
        policy.max_attempts = match member(&p, "maxAttempts").filter(|v| !v.is_null()) {
            None => None,
            Some(v) => Some(
                integer(&v, u64::from(u32::MAX))
                    .and_then(|n| u32::try_from(n).ok())
                    .ok_or_else(|| {
                        bad("options.policy.maxAttempts must be a non-negative integer or null")
                    })?,
            ),
        };
    }
    Ok(Config {
        endpoint: Endpoint {
            url: endpoint,
            headers,
            first_sent,
        },
        method,
        key_use: if always_key {
            KeyUse::Always
        } else {
            KeyUse::Auto
        },
        policy,
        prefix,
        persistence: if allow_memory_only {
            Persistence::AllowMemoryOnly
        } else {
            Persistence::Required
        },
        settle_without_locks_ms,
        key_state_url,
    })
}

/// Checks that `fetch` can send to the endpoint and the key-state URL at all: URLs the
/// `Request` constructor parses and headers it accepts. Otherwise every attempt would fail the
/// same way, be reported as a network error and be retried until the window closes.
pub(super) fn check_endpoint(config: &Config) -> Result<(), JsValue> {
    let endpoint = &config.endpoint;
    let headers = web_sys::Headers::new().map_err(|_| bad("cannot build request headers"))?;
    for (name, value) in &endpoint.headers {
        headers.append(name, value).map_err(|_| {
            bad(&["options.headers has an invalid header: ", name.as_str()].concat())
        })?;
    }
    let init = web_sys::RequestInit::new();
    init.set_headers(&headers);
    web_sys::Request::new_with_str_and_init(&endpoint.url, &init)
        .map_err(|_| bad("options.endpoint is not a URL fetch accepts"))?;
    let sample = config.key_state_url("00000000-0000-4000-8000-000000000000");
    web_sys::Request::new_with_str_and_init(&sample, &init)
        .map_err(|_| bad("options.keyStateUrl is not a URL fetch accepts"))?;
    Ok(())
}

/// `object[name]`, `None` when it is `undefined` (or cannot be read).
fn member(object: &JsValue, name: &str) -> Option<JsValue> {
    Reflect::get(object, &JsValue::from_str(name))
        .ok()
        .filter(|v| !v.is_undefined())
}

/// An optional boolean member, `path` the object's own (`options.`) for the message.
fn boolean(object: &JsValue, path: &str, name: &str) -> Result<Option<bool>, JsValue> {
    match member(object, name) {
        None => Ok(None),
        Some(v) => v
            .as_bool()
            .map(Some)
            .ok_or_else(|| bad(&[path, name, " must be a boolean"].concat())),
    }
}

/// The `invalidOptions` error with `message`, built where the problem is found: no `String`
/// for a constant message carried back to the constructor.
#[inline(never)]
fn bad(message: &str) -> JsValue {
    error("invalidOptions", message)
}

/// A JS number that is an integer in `0..=max` (and a safe integer), as serde read a `u64`.
fn integer(value: &JsValue, max: u64) -> Option<u64> {
    let n = value.as_f64()?;
    let safe = (0.0..=9_007_199_254_740_991.0).contains(&n) && n.trunc() == n;
    // In range and integral: the cast is exact.
    (safe && n as u64 <= max).then_some(n as u64)
}

#[cfg(test)]
mod tests {
    use wasm_bindgen_test::wasm_bindgen_test as test;

    use super::{origin_of, split_key};

    #[test]
    fn key_state_templates_split_at_the_key() {
        let split = |t: &str| split_key(t).map(|(a, b)| [a, b]);
        let both = |a: &str, b: &str| Some([a.to_owned(), b.to_owned()]);
        assert_eq!(split("/api/keys/{key}"), both("/api/keys/", ""));
        assert_eq!(split("/k?id={key}&x=1"), both("/k?id=", "&x=1"));
        assert_eq!(split("/api/keys/"), None);
        assert_eq!(split("{ke"), None);
    }

    #[test]
    fn the_key_state_route_lives_at_the_endpoints_origin() {
        for (endpoint, origin) in [
            ("/api/checkout", ""),
            ("api/checkout", ""),
            (
                "http://127.0.0.1:8000/api/checkout",
                "http://127.0.0.1:8000",
            ),
            ("https://shop.example", "https://shop.example"),
            ("https://shop.example?x=1", "https://shop.example"),
            ("//api.shop.example/pay", "//api.shop.example"),
            ("/pay?next=http://elsewhere/x", ""),
        ] {
            assert_eq!(origin_of(endpoint), origin, "{endpoint}");
        }
    }
}
