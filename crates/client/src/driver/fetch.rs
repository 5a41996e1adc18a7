//! Sending attempts with `fetch`, and the loop that drives an operation to its outcome.

use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortController, Headers, RequestInit, Response};

use super::timer::{first, sleep_until, First};
use super::{now_ms, MathRandom};
use crate::journal::Journal;
use crate::operation::{Action, Attempt, Operation};
use crate::outcome::Outcome;
use crate::reply::{Reply, FIRST_SENT_HEADER, IDEMPOTENCY_KEY_HEADER};

/// Where and how attempts are sent.
#[derive(Clone, Debug, Default)]
pub struct Endpoint {
    /// The URL every attempt goes to.
    pub url: String,
    /// Extra request headers (e.g. authorization), sent on every attempt.
    pub headers: Vec<(String, String)>,
    /// Whether keyed attempts carry `Repeatability-First-Sent` (the server's expired-key guard
    /// reads it). Off only for a cross-origin server whose CORS does not allow the header: its
    /// preflight would refuse every attempt.
    pub first_sent: bool,
}

/// How one attempt ended without a reply.
enum Lost {
    /// Aborted at its deadline.
    TimedOut,
    /// `fetch` rejected (network error, CORS, ...).
    Network(String),
}

/// What [`run_with`] reports as it drives an operation, each with the time it happened (ms,
/// `Date.now()`): what the page sent and what it got back, attempt by attempt.
#[derive(Debug)]
pub enum Exchange<'a> {
    /// This attempt leaves now (`fetch` is called right after).
    Sent(&'a Attempt),
    /// The reply to the attempt that is out, whatever its status (`Retry-After` and
    /// `Idempotent-Replayed` as [`Reply::from_http`] read them).
    Answered(&'a Reply),
    /// The attempt that is out was aborted at its deadline.
    TimedOut,
    /// `fetch` rejected (the connection closed unanswered, CORS, ...): the browser's message.
    Failed(&'a str),
    /// Nothing to send before this time (a backoff or a `Retry-After`).
    Waiting(u64),
}

/// Drives `op` until it finishes: sends each attempt to `endpoint`, sleeps through waits and
/// reports replies, timeouts and network errors back. Never returns early: the outcome is the
/// operation's.
pub async fn run(op: &mut Operation, endpoint: &Endpoint, journal: &mut dyn Journal) -> Outcome {
    run_with(op, endpoint, journal, &mut |_, _| {}).await
}

/// [`run`], telling `observe` each step (see [`Exchange`]) as it happens: the one loop, for a
/// page that shows its attempts.
pub async fn run_with(
    op: &mut Operation,
    endpoint: &Endpoint,
    journal: &mut dyn Journal,
    observe: &mut dyn FnMut(u64, Exchange<'_>),
) -> Outcome {
    let mut rng = MathRandom;
    loop {
        let now = now_ms();
        match op.poll(now, journal, &mut rng) {
            Action::Finished(outcome) => return outcome,
            Action::WaitUntil(at) => {
                observe(now, Exchange::Waiting(at));
                sleep_until(at).await
            }
            Action::Send(attempt) => {
                observe(now, Exchange::Sent(&attempt));
                let result = send(endpoint, &attempt).await;
                let at = now_ms();
                match result {
                    Ok(reply) => {
                        observe(at, Exchange::Answered(&reply));
                        op.handle_reply(at, reply)
                    }
                    Err(Lost::TimedOut) => {
                        observe(at, Exchange::TimedOut);
                        op.handle_timeout(at)
                    }
                    Err(Lost::Network(message)) => {
                        observe(at, Exchange::Failed(&message));
                        op.handle_network_error(at, message)
                    }
                }
            }
        }
    }
}

/// Sends one attempt, aborting it (request and body read) at its deadline.
async fn send(endpoint: &Endpoint, attempt: &Attempt) -> Result<Reply, Lost> {
    let request = || -> Result<RequestInit, JsValue> {
        let (init, headers) = request_init(attempt.method.as_str(), &endpoint.headers)?;
        if let Some(key) = attempt.key {
            let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
            headers.set(
                IDEMPOTENCY_KEY_HEADER,
                key.hyphenated().encode_lower(&mut buf),
            )?;
        }
        if let Some(first_sent) = attempt.first_sent_header().filter(|_| endpoint.first_sent) {
            headers.set(FIRST_SENT_HEADER, &first_sent)?;
        }
        if attempt.method.has_body() {
            headers.set("Content-Type", "application/json")?;
            // The canonical bytes are UTF-8 JSON text (a `CanonicalPayload` is a `String`), so
            // sending them as a string keeps them exact (a lossy conversion would add code, never
            // change a byte).
            let body = core::str::from_utf8(&attempt.body).unwrap_or_default();
            init.set_body(&JsValue::from_str(body));
        }
        Ok(init)
    };
    let init = request().map_err(lost)?;
    exchange(&endpoint.url, init, attempt.deadline).await
}

/// One `GET url` with `headers` (a key-state question), aborted at `deadline`: its reply, or
/// why there was none, in words.
pub async fn get(url: &str, headers: &[(String, String)], deadline: u64) -> Result<Reply, String> {
    request("GET", url, headers, None, deadline).await
}

/// One request without an idempotency key (a question, or a switch such as demo mode's
/// `PUT /api/demo/faults`) with `headers` and, if given, a JSON `body`, aborted at `deadline`:
/// its reply, or why there was none, in words.
pub async fn request(
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: Option<&str>,
    deadline: u64,
) -> Result<Reply, String> {
    let (init, all) = request_init(method, headers).map_err(text)?;
    if let Some(body) = body {
        all.set("Content-Type", "application/json").map_err(text)?;
        init.set_body(&JsValue::from_str(body));
    }
    match exchange(url, init, deadline).await {
        Ok(reply) => Ok(reply),
        Err(Lost::TimedOut) => Err("timed out".into()),
        Err(Lost::Network(message)) => Err(["network error: ", &message].concat()),
    }
}

/// A request with `method` and the endpoint's extra `headers`, and its `Headers` (the request
/// holds the object itself, so headers set on it later are sent too).
fn request_init(
    method: &str,
    headers: &[(String, String)],
) -> Result<(RequestInit, Headers), JsValue> {
    let all = Headers::new()?;
    for (name, value) in headers {
        all.append(name, value)?;
    }
    let init = RequestInit::new();
    init.set_method(method);
    init.set_headers(&all);
    Ok((init, all))
}

/// Sends `init` to `url`, aborting it (request and body read) at `deadline`.
async fn exchange(url: &str, init: RequestInit, deadline: u64) -> Result<Reply, Lost> {
    let window = web_sys::window().ok_or_else(|| Lost::Network("no window".into()))?;
    let controller = AbortController::new().map_err(lost)?;
    init.set_signal(Some(&controller.signal()));
    match first(fetch(&window, url, &init), sleep_until(deadline)).await {
        First::Left(Ok(reply)) => Ok(reply),
        First::Left(Err(e)) => Err(lost(e)),
        First::Right(()) => {
            // Cancels the request, or the body still being read.
            controller.abort();
            Err(Lost::TimedOut)
        }
    }
}

async fn fetch(window: &web_sys::Window, url: &str, init: &RequestInit) -> Result<Reply, JsValue> {
    let response: Response = JsFuture::from(window.fetch_with_str_and_init(url, init))
        .await?
        .dyn_into()?;
    let headers = response.headers();
    // An HTTP-date `Retry-After` is read against this page's clock when the headers came: the
    // core gets a duration.
    let headers_at = now_ms();
    let buffer = JsFuture::from(response.array_buffer()?).await?;
    let body = js_sys::Uint8Array::new(&buffer).to_vec();
    // `Headers.get` throws only for a name that is not a valid header name; ours are constants.
    let header = |name: &str| headers.get(name).ok().flatten();
    Ok(Reply::from_http(
        response.status(),
        header,
        body,
        headers_at,
    ))
}

fn text(error: JsValue) -> String {
    if error.is_instance_of::<js_sys::Error>() {
        return crate::journal::local_storage::text_member(&error, "message");
    }
    error.as_string().unwrap_or_else(|| "fetch failed".into())
}

/// A failed fetch (or request setup) as [`Lost::Network`] with [`text`]: one function the
/// `map_err` calls share, where a closure each was a copy each.
fn lost(error: JsValue) -> Lost {
    Lost::Network(text(error))
}
