//! Real-server mode: the page against idem-server on 127.0.0.1 (SQLite), in real time.
//!
//! [`Real`] is the controller, beside the simulated session (neither uses the other). While real
//! mode is on it owns what the panels show: Pay runs idem-client's `fetch` driver against
//! idem-server's `/api/checkout` on the server's own origin (cross-origin, with CORS; never
//! through trunk's proxy, which would turn a dropped connection into a 5xx of its own), keeps
//! the key in the real `localStorage`, and reconciles an unknown outcome through the key-state
//! endpoint (`checkout.rs`); the claim table, the event feed and the PayCo ledger are rebuilt
//! from the tenant's event stream, its claim table (`GET /api/claims`) and demo mode's ledger
//! relay (`stream.rs`, `tables.rs`, `parse.rs`); the page's fault controls arm the server's demo
//! faults (`faults.rs`). What the page saw (the stream's events, its own attempts) is kept in
//! sessionStorage (`seen.rs`), so a reload or an idem-server restart (whose new process's stream
//! starts empty) shows the same picture.
//!
//! Each page session (a tab, across reloads: sessionStorage) is a tenant of its own,
//! `demo-<uuid>`, so whatever the database held before never shows. The mode, the tenant and
//! the checkout counter live in sessionStorage, so a reload comes back in real mode with the
//! same tenant and resumes a pending checkout from its localStorage record, with its key.
//!
//! It does not touch the simulated world, its run log or its `idem:` records; switching back
//! to the simulated mode shows that world as it was.

mod checkout;
pub mod faults;
mod hook;
pub mod parse;
mod project;
mod seen;
mod stream;
pub mod tables;
pub mod trace;
mod wire;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use gloo_timers::callback::{Interval, Timeout};
use idem_client::RetryPolicy;
use yew::platform::spawn_local;
use yew::prelude::*;

use crate::browser;
use crate::model::real::{Link, RealCheckout, ServerEvent, ServerEventKind};
use crate::model::view::{LedgerRow, View, ViewAction};
use faults::{OneShot, Standing};
use project::Projected;
use tables::Tables;

pub use hook::use_real;

/// Where idem-server runs when neither the URL nor the page says (`make serve`'s default port).
pub const DEFAULT_SERVER: &str = "http://127.0.0.1:8000";

/// sessionStorage: `real` while the page is in real mode.
const MODE_ITEM: &str = "idem-demo:mode";
/// sessionStorage: `<tenant> <t0> <checkouts started>` of this page session.
const TENANT_ITEM: &str = "idem-demo:tenant";

/// Real mode's retry policy: the SDK's, with a 5 s attempt timeout and a 20 s retry window, so a
/// class sees a timeout, and an unknown outcome reconciled, within a minute.
pub fn policy() -> RetryPolicy {
    RetryPolicy {
        max_backoff_ms: 2_000,
        attempt_timeout_ms: 5_000,
        retry_window_ms: 20_000,
        ..RetryPolicy::default()
    }
}

/// How long a question to the server (not an attempt) may take.
const ASK_MS: u64 = 5_000;

/// A keyless request's reply, or why there was none.
type Answer = Result<idem_client::Reply, String>;

/// What to do with a keyless request's answer.
type Then = Box<dyn FnOnce(&Real, Answer)>;

/// Wall-clock ms between refreshes while a lease counts down or a checkout is out.
const TICK_MS: u32 = 250;

/// How long the event stream may stay down before the page says the server is (the page
/// opens a new stream every second meanwhile).
const GRACE_MS: u64 = 4_000;

/// How long after a stream dropped the page opens a new one (before the browser's own
/// reconnection, after about 3 s, which would send `Last-Event-ID`).
const REOPEN_MS: u32 = 1_000;

/// Shared handle to the real-mode controller (equal when it is the same one).
#[derive(Clone)]
pub struct Real(Rc<Inner>);

impl PartialEq for Real {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.0, &other.0)
    }
}

struct Inner {
    view: UseReducerDispatcher<View>,
    state: RefCell<State>,
    stream: RefCell<Option<stream::Stream>>,
    /// A stream that dropped is closed and opened again by the page (see `open_stream`).
    reopen: RefCell<Option<Timeout>>,
    ticker: RefCell<Option<Interval>>,
    refresh: RefCell<Option<Timeout>>,
    refresh_pending: Cell<bool>,
}

/// Everything real mode knows.
struct State {
    on: bool,
    /// Bumped on every enter and leave: answers to an older connection are dropped.
    epoch: u32,
    server: String,
    tenant: String,
    t0: u64,
    started: u32,
    link: Link,
    /// When the stream dropped (while `link` is `Reconnecting`).
    lost_at: u64,
    lock_ms: Option<u64>,
    notice: Option<String>,
    tables: Tables,
    events: Rc<Vec<ServerEvent>>,
    /// The stream's `data` texts of `events`, as kept in sessionStorage.
    event_texts: Vec<String>,
    /// Whether the log kept in sessionStorage has been read back (once per page load).
    restored: bool,
    /// `events` or `exchanges` changed since they were last kept.
    unsaved: bool,
    exchanges: Rc<Vec<crate::model::real::Exchange>>,
    /// Attempts of the checkouts restored from the journal after a reload, as the journal
    /// counted them (the page's own `exchanges` count only what this page load sent).
    attempts_restored: u32,
    ledger: Vec<LedgerRow>,
    checkouts: Vec<RealCheckout>,
    standing: Standing,
    pending: Vec<OneShot>,
    decline_next: bool,
    shown: Projected,
}

impl Real {
    /// The controller, off. idem-server's origin: `?server=` in the URL, else the page's
    /// `<meta name="idem-server">` (which `make serve` fills in with the server it started,
    /// whatever its port), else [`DEFAULT_SERVER`].
    pub fn boot(view: UseReducerDispatcher<View>) -> Real {
        let mut notice = None;
        let asked = browser::query_param("server")
            .and_then(|s| js_sys::decode_uri_component(&s).ok())
            .and_then(|s| s.as_string())
            .map(|s| (s, "?server="))
            .or_else(|| {
                browser::meta_content("idem-server").map(|s| (s, "the page's idem-server"))
            });
        let server = match asked {
            Some((s, _)) if s.starts_with("http://") || s.starts_with("https://") => {
                s.trim_end_matches('/').to_owned()
            }
            Some((_, from)) => {
                notice = Some([from, " is not an http(s) address: using the default"].concat());
                DEFAULT_SERVER.to_owned()
            }
            None => DEFAULT_SERVER.to_owned(),
        };
        Real(Rc::new(Inner {
            view,
            state: RefCell::new(State {
                on: false,
                epoch: 0,
                server,
                tenant: String::new(),
                t0: 0,
                started: 0,
                link: Link::Connecting,
                lost_at: 0,
                lock_ms: None,
                notice,
                tables: Tables::default(),
                events: Rc::default(),
                event_texts: Vec::new(),
                restored: false,
                unsaved: false,
                exchanges: Rc::default(),
                attempts_restored: 0,
                ledger: Vec::new(),
                checkouts: Vec::new(),
                standing: Standing::default(),
                pending: Vec::new(),
                decline_next: false,
                shown: Projected::default(),
            }),
            stream: RefCell::new(None),
            reopen: RefCell::new(None),
            ticker: RefCell::new(None),
            refresh: RefCell::new(None),
            refresh_pending: Cell::new(false),
        }))
    }

    /// Whether this page session was in real mode (a reload comes back to it).
    pub fn was_on() -> bool {
        browser::session_get(MODE_ITEM).as_deref() == Some("real")
    }

    /// Switch to real mode: this session's tenant (made up on first use), then the server.
    pub fn enter(&self) {
        let epoch = {
            let mut st = self.0.state.borrow_mut();
            st.on = true;
            st.epoch += 1;
            browser::session_set(MODE_ITEM, "real");
            if st.tenant.is_empty() {
                st.load_tenant();
            }
            st.link = Link::Connecting;
            st.epoch
        };
        let real = self.clone();
        *self.0.ticker.borrow_mut() = Some(Interval::new(TICK_MS, move || real.tick()));
        self.refresh();
        self.ask(
            "GET",
            "/api/demo",
            None,
            Box::new(move |real, answer| real.connect(epoch, answer)),
        );
    }

    /// Back to the simulated mode: the stream closes and real mode's panels go. A checkout
    /// still running carries on in the background (its requests are real).
    pub fn leave(&self) {
        {
            let mut st = self.0.state.borrow_mut();
            st.on = false;
            st.epoch += 1;
        }
        browser::session_set(MODE_ITEM, "");
        *self.0.stream.borrow_mut() = None;
        *self.0.reopen.borrow_mut() = None;
        *self.0.ticker.borrow_mut() = None;
        *self.0.refresh.borrow_mut() = None;
        self.0.refresh_pending.set(false);
        self.0
            .view
            .dispatch(ViewAction::Refresh(Rc::new(View::default())));
    }

    /// The standing faults follow the page's controls (sent when they change in real mode).
    pub fn set_standing(&self, standing: Standing) {
        let changed = {
            let mut st = self.0.state.borrow_mut();
            std::mem::replace(&mut st.standing, standing) != standing
        };
        if changed {
            self.send_faults();
        }
    }

    /// Arm a fault for the next checkout that reaches its point.
    pub fn one_shot(&self, fault: OneShot) {
        self.0.state.borrow_mut().pending.push(fault);
        self.send_faults();
    }

    /// The next checkout pays with PayCo's declining test card (`tok_decline`).
    pub fn decline_next(&self) {
        self.0.state.borrow_mut().decline_next = true;
        self.refresh();
    }

    /// idem-server said who it is (`GET /api/demo`): open the tenant's stream, arm the faults,
    /// read the ledger and resume this session's pending checkouts.
    fn connect(&self, epoch: u32, answer: Answer) {
        let (ok, tenant, server) = {
            let st = self.0.state.borrow();
            (st.epoch == epoch, st.tenant.clone(), st.server.clone())
        };
        if !ok {
            return;
        }
        let lock_ms = match answer {
            Ok(reply) => match parse::demo(text(&reply.body), &tenant) {
                Some(ms) if reply.status == 200 => Ok(ms),
                _ => Err([&server, " is not idem-server in demo mode"].concat()),
            },
            Err(why) => Err([
                "idem-server does not answer at ",
                &server,
                " (",
                &why,
                "). Start it: make serve.",
            ]
            .concat()),
        };
        match lock_ms {
            Ok(ms) => {
                let mut st = self.0.state.borrow_mut();
                st.lock_ms = Some(ms);
                st.link = Link::Up;
                // What this page session saw before a reload; the stream then sends the
                // tenant's history again, and what the page holds already is skipped.
                if !st.restored {
                    st.restore();
                }
            }
            Err(why) => {
                self.0.state.borrow_mut().link = Link::Down(why);
                self.refresh();
                return;
            }
        }
        self.open_stream(&server, &tenant);
        self.send_faults();
        self.read_ledger();
        self.read_claims();
        self.resume_pending();
        self.refresh();
    }

    /// The tenant's event stream. When it drops, the page closes it and opens a new one a
    /// second later (until the grace runs out, see `tick`), rather than let the browser
    /// reconnect by itself: the browser's reconnection sends `Last-Event-ID`, and a restarted
    /// idem-server numbers its events from the start again, so it would skip every new event
    /// up to the old number. A new stream gets the whole history of the process it reaches;
    /// what the page holds already is skipped (`State::take_event`).
    fn open_stream(&self, server: &str, tenant: &str) {
        let url = [server, "/api/events?access_token=", tenant].concat();
        let (data, link) = (self.clone(), self.clone());
        let again = (server.to_owned(), tenant.to_owned());
        let stream = stream::Stream::open(
            &url,
            move |text| data.on_event(&text),
            move |up| {
                let mut st = link.0.state.borrow_mut();
                if st.link == Link::Up && !up {
                    st.lost_at = wire::now_ms();
                }
                if matches!(st.link, Link::Up | Link::Reconnecting) {
                    st.link = if up { Link::Up } else { Link::Reconnecting };
                    drop(st);
                    if !up {
                        link.reopen_stream(&again.0, &again.1);
                    }
                    link.refresh_soon();
                }
            },
        );
        *self.0.stream.borrow_mut() = stream;
    }

    /// Close the dropped stream and open a new one in a second (not from inside the stream's
    /// own callback, which closing it would free).
    fn reopen_stream(&self, server: &str, tenant: &str) {
        let (real, server, tenant) = (self.clone(), server.to_owned(), tenant.to_owned());
        *self.0.reopen.borrow_mut() = Some(Timeout::new(REOPEN_MS, move || {
            *real.0.stream.borrow_mut() = None;
            let on = {
                let st = real.0.state.borrow();
                st.on && st.link == Link::Reconnecting
            };
            if on {
                real.open_stream(&server, &tenant);
            }
        }));
    }

    /// One event of the stream.
    fn on_event(&self, data: &str) {
        let mut st = self.0.state.borrow_mut();
        if !st.on {
            return;
        }
        let Some(event) = parse::event(data) else {
            st.notice = Some("idem-server sent an event this page cannot read; skipped".into());
            drop(st);
            self.refresh_soon();
            return;
        };
        let (ledger, fired) = match &event.kind {
            ServerEventKind::Note(text) => (
                text.starts_with("payco:"),
                parse::fired_fault(text).map(str::to_owned),
            ),
            _ => (false, None),
        };
        if !st.take_event(event, data) {
            // The stream's history after a reconnect: held already.
            return;
        }
        if let Some(fault) = fired {
            faults::use_up(&mut st.pending, &fault);
        }
        st.unsaved = true;
        drop(st);
        if ledger {
            self.read_ledger();
        }
        self.refresh_soon();
    }

    /// Sends the whole fault set (standing and pending one-shots); a refusal is shown.
    fn send_faults(&self) {
        let body = {
            let st = self.0.state.borrow();
            // Kept until the server answers: `connect` sends the set then.
            if !st.on || st.link != Link::Up {
                return;
            }
            let hold = faults::hold_ms(policy().attempt_timeout_ms);
            faults::fault_set(st.standing, &st.pending, st.lock_ms.unwrap_or(10_000), hold)
        };
        let then = |real: &Real, answer: Answer| {
            let notice = match answer {
                Ok(r) if r.status == 200 => None,
                Ok(r) => Some(["faults refused: ", &r.status.to_string()].concat()),
                Err(why) => Some(["faults not sent: ", &why].concat()),
            };
            real.0.state.borrow_mut().notice = notice;
            real.refresh_soon();
        };
        self.ask("PUT", "/api/demo/faults", Some(body), Box::new(then));
    }

    /// Reads PayCo's ledger of this tenant's orders (demo mode relays it).
    fn read_ledger(&self) {
        let then = |real: &Real, answer: Answer| {
            let rows = match &answer {
                Ok(r) if r.status == 200 => parse::ledger(text(&r.body)),
                _ => None,
            };
            let mut st = real.0.state.borrow_mut();
            match rows {
                Some(rows) => st.ledger = rows,
                None => st.notice = Some("PayCo's ledger could not be read".into()),
            }
            drop(st);
            real.refresh_soon();
        };
        self.ask("GET", "/api/demo/ledger", None, Box::new(then));
    }

    /// Seeds the claim table from the server's own (`GET /api/claims`): rows no event of the
    /// stream built, as after an idem-server restart.
    fn read_claims(&self) {
        let then = |real: &Real, answer: Answer| {
            let rows = match &answer {
                Ok(r) if r.status == 200 => parse::claims(text(&r.body)),
                _ => None,
            };
            let mut st = real.0.state.borrow_mut();
            let (t0, lock_ms) = (st.t0, st.lock_ms.unwrap_or(0));
            match rows {
                Some(rows) => st.tables.seed(rows, t0, lock_ms),
                None => st.notice = Some("the server's claim table could not be read".into()),
            }
            drop(st);
            real.refresh_soon();
        };
        self.ask("GET", "/api/claims", None, Box::new(then));
    }

    /// One keyless request to idem-server as this tenant; `then` gets the answer. (Callbacks
    /// rather than one `async fn` per caller: each future is a state machine of its own in the
    /// bundle.)
    fn ask(&self, method: &'static str, path: &'static str, body: Option<String>, then: Then) {
        let (url, headers) = {
            let st = self.0.state.borrow();
            ([st.server.as_str(), path].concat(), st.headers())
        };
        let real = self.clone();
        spawn_local(async move {
            let deadline = wire::now_ms() + ASK_MS;
            let answer = wire::request(method, &url, &headers, body.as_deref(), deadline).await;
            then(&real, answer);
        });
    }

    /// While a lease counts down or a checkout is out, time moves on screen. A stream down
    /// past the grace is a server gone: said as plainly as at the start, with the way out.
    fn tick(&self) {
        let (busy, gone) = {
            let st = self.0.state.borrow();
            let busy = st.tables.in_flight() > 0
                || st.checkouts.iter().any(|c| c.state.value() == "pending");
            let gone = st.link == Link::Reconnecting && wire::now_ms() >= st.lost_at + GRACE_MS;
            (busy, gone.then(|| st.server.clone()))
        };
        if let Some(server) = &gone {
            // "Try again" opens a fresh stream.
            *self.0.stream.borrow_mut() = None;
            *self.0.reopen.borrow_mut() = None;
            self.0.state.borrow_mut().link = Link::Down(
                [
                    "idem-server stopped answering at ",
                    server,
                    " (its event stream is down). Start it again (make serve) and try again.",
                ]
                .concat(),
            );
        }
        if busy || gone.is_some() {
            self.refresh_soon();
        }
    }

    /// Refresh in a task of its own; several changes before it runs cost one render.
    fn refresh_soon(&self) {
        if self.0.refresh_pending.replace(true) {
            return;
        }
        let real = self.clone();
        *self.0.refresh.borrow_mut() = Some(Timeout::new(0, move || {
            real.0.refresh_pending.set(false);
            real.refresh();
        }));
    }

    /// Hand the panels real mode's view (nothing while off), and keep what changed.
    fn refresh(&self) {
        let view = {
            let mut st = self.0.state.borrow_mut();
            if !st.on {
                return;
            }
            if std::mem::take(&mut st.unsaved)
                && !seen::save(&st.tenant, &st.event_texts, &st.exchanges)
            {
                st.notice = Some(
                    "this page's log could not be kept in sessionStorage: a reload will not show it"
                        .into(),
                );
            }
            st.view()
        };
        self.0.view.dispatch(ViewAction::Refresh(Rc::new(view)));
    }
}

impl State {
    /// This session's tenant from sessionStorage, or a new one (`demo-<uuid>`, as demo mode
    /// reads it), written back at once.
    fn load_tenant(&mut self) {
        let stored = browser::session_get(TENANT_ITEM).unwrap_or_default();
        let mut parts = stored.split(' ');
        let (tenant, t0, started) = (parts.next(), parts.next(), parts.next());
        let t0 = t0.and_then(|t| t.parse().ok());
        let started = started.and_then(|n| n.parse().ok());
        match (tenant, t0, started) {
            (Some(t), Some(t0), Some(n)) if t.starts_with("demo-") => {
                self.tenant = t.to_owned();
                self.t0 = t0;
                self.started = n;
            }
            _ => {
                use idem_client::KeyMinter;
                let uuid = idem_client::RandomKeys.mint();
                self.tenant = ["demo-", &key_text(uuid)].concat();
                self.t0 = wire::now_ms();
                self.started = 0;
                self.save_tenant();
            }
        }
    }

    fn save_tenant(&self) {
        let text = [
            self.tenant.as_str(),
            " ",
            &self.t0.to_string(),
            " ",
            &self.started.to_string(),
        ]
        .concat();
        browser::session_set(TENANT_ITEM, &text);
    }

    /// One event of the stream into the tables, unless it is one held already (the same server
    /// number at the same time: a process numbers its events once; a restarted one numbers
    /// from the start again, at later times). `data`: its text, as kept.
    fn take_event(&mut self, event: ServerEvent, data: &str) -> bool {
        if self
            .events
            .iter()
            .any(|e| e.seq == event.seq && e.at == event.at)
        {
            return false;
        }
        let lock_ms = self.lock_ms.unwrap_or(0);
        self.tables.apply(&event, &self.tenant, self.t0, lock_ms);
        Rc::make_mut(&mut self.events).push(event);
        self.event_texts.push(data.to_owned());
        true
    }

    /// What this page session saw before the page was loaded again (`seen.rs`).
    fn restore(&mut self) {
        self.restored = true;
        let (texts, exchanges) = seen::load(&self.tenant, wire::now_ms());
        for text in &texts {
            if let Some(event) = parse::event(text) {
                self.take_event(event, text);
            }
        }
        // Attempts this page load made before reading the log (none: Pay waits for the
        // server) come after the kept ones.
        let mine = std::mem::take(Rc::make_mut(&mut self.exchanges));
        let all = Rc::make_mut(&mut self.exchanges);
        all.extend(exchanges);
        all.extend(mine);
    }

    /// The headers every request carries: the tenant's bearer token.
    fn headers(&self) -> Vec<(String, String)> {
        vec![(
            "Authorization".to_owned(),
            ["Bearer ", &self.tenant].concat(),
        )]
    }
}

/// A UUID as idem writes keys: lowercase, hyphenated (without `core::fmt`).
pub fn key_text(key: uuid::Uuid) -> String {
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    key.hyphenated().encode_lower(&mut buf).to_owned()
}

/// A body as text; one that is not UTF-8 reads as empty (the server's are JSON, so UTF-8), which
/// no parser here accepts.
fn text(body: &[u8]) -> &str {
    std::str::from_utf8(body).unwrap_or_default()
}
