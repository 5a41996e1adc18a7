//! The sequence diagram's data and its layout, whatever the source: a [`Trace`] is one
//! checkout's messages (with what became of them) and the marks each party left on its lane;
//! [`layout()`] places them on five lanes, Browser, Network, Server, PayCo and the receipts
//! consumer the server's outbox relay delivers to, one row per happening, time running down,
//! every label on a row of its own ([`label`]). The consumer's lane shows at-least-once
//! delivery: a message the relay sends again after a crash, and what the consumer does with it.
//!
//! Nothing here knows the simulator. `projection/sequence.rs` builds a trace from the
//! simulated world's history; a page talking to a real server can build one from what it sent
//! and received (its fetch driver) and what the server's event stream reported, and draw it
//! with the same layout and component: a response the page never got is then a request whose
//! server marks say "saved 201" and a browser mark that says it timed out.
//!
//! Rows are ordinal, not to scale: every send, arrival and mark gets a row in causal order
//! (a retry's 1 s of backoff takes one row, as a 5 ms hop does), and the time is written beside
//! it. Two things that happen in the same millisecond still get two rows (a double click's two
//! requests are two arrows, their two claims two marks). An arrow runs from its send's row to
//! its arrival's, so a late message crosses the ones sent after it that arrived before.

mod label;
mod layout;

pub use label::Label;
pub use layout::{layout, says, Arrow, Fate, Layout, WIDTH};

/// A lane of the diagram, left to right.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// The page and its `localStorage`.
    Browser,
    /// Between browser and server: where messages are lost.
    Network,
    /// The server: the store's decisions and the handler's work.
    Server,
    /// The payment provider.
    PayCo,
    /// The consumer the outbox's relay delivers `order.paid` to: it sends the receipt.
    Receipts,
}

impl Lane {
    /// Left to right.
    pub const ALL: [Lane; 5] = [
        Lane::Browser,
        Lane::Network,
        Lane::Server,
        Lane::PayCo,
        Lane::Receipts,
    ];

    /// The `data-lane` value.
    pub fn name(self) -> &'static str {
        match self {
            Lane::Browser => "browser",
            Lane::Network => "network",
            Lane::Server => "server",
            Lane::PayCo => "payco",
            Lane::Receipts => "receipts",
        }
    }

    /// The lane's heading.
    pub fn label(self) -> &'static str {
        match self {
            Lane::Browser => "Browser · localStorage",
            Lane::Network => "Network",
            Lane::Server => "Server · store",
            Lane::PayCo => "PayCo",
            Lane::Receipts => "Consumer · receipts",
        }
    }

    /// Where its line is drawn, in the diagram's units (see [`WIDTH`]).
    pub fn x(self) -> i32 {
        match self {
            Lane::Browser => 90,
            Lane::Network => 228,
            Lane::Server => 366,
            Lane::PayCo => 516,
            Lane::Receipts => 646,
        }
    }
}

/// What a message carries; its lanes and its place in an instant follow from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hop {
    /// Browser → server.
    Request,
    /// Server → browser.
    Response,
    /// Server → PayCo: the charge call.
    Call,
    /// PayCo → server: its answer.
    Answer,
    /// Server → consumer: the outbox's relay delivers a message.
    Delivery,
    /// Consumer → server: its 2xx, after which the relay marks the message sent.
    Ack,
}

impl Hop {
    /// The `data-hop` value.
    pub fn name(self) -> &'static str {
        match self {
            Hop::Request => "request",
            Hop::Response => "response",
            Hop::Call => "call",
            Hop::Answer => "answer",
            Hop::Delivery => "delivery",
            Hop::Ack => "ack",
        }
    }

    /// Sender and receiver.
    pub fn ends(self) -> (Lane, Lane) {
        match self {
            Hop::Request => (Lane::Browser, Lane::Server),
            Hop::Response => (Lane::Server, Lane::Browser),
            Hop::Call => (Lane::Server, Lane::PayCo),
            Hop::Answer => (Lane::PayCo, Lane::Server),
            Hop::Delivery => (Lane::Server, Lane::Receipts),
            Hop::Ack => (Lane::Receipts, Lane::Server),
        }
    }

    /// Order of its send and arrival within one millisecond (below 16): a request is sent,
    /// arrives and is decided; the work calls PayCo, which decides and answers; the work ends
    /// and the response goes back (see [`Mark`]'s ranks in between). The relay's calls come
    /// after all of that: it reads what a save committed.
    fn ranks(self) -> (u8, u8) {
        match self {
            Hop::Request => (1, 2),
            Hop::Call => (4, 5),
            Hop::Answer => (7, 8),
            Hop::Response => (10, 11),
            Hop::Delivery | Hop::Ack => (14, 14),
        }
    }

    /// Drawn left to right (its label then starts at the sender and runs towards the receiver).
    fn rightwards(self) -> bool {
        matches!(self, Hop::Request | Hop::Call | Hop::Delivery)
    }
}

/// One message and what became of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Msg {
    /// What it carries.
    pub hop: Hop,
    /// When it was sent.
    pub sent_at: u64,
    /// When it arrived (two times when the network duplicated it). An arrival later than the
    /// trace's `now` is still on its way.
    pub arrivals: Vec<u64>,
    /// The network lost it (drawn cut). No arrival and not lost: nobody knows yet where it is
    /// (a page that never heard back).
    pub lost: bool,
    /// It arrived after its receiver had stopped waiting for it.
    pub late: bool,
    /// Short text on the arrow.
    pub label: String,
    /// What it carried, as HTTP text: the start line (`POST /api/checkout`, `HTTP 201`), one
    /// `Name: value` line per header, a blank line, the body.
    pub wire: String,
}

/// A mark on one lane at one instant: a decision, a write, a timeout.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// Virtual time.
    pub at: u64,
    /// Whose.
    pub lane: Lane,
    /// The `data-kind` value (`journal`, `claimed`, `409`, `replayed`, `charged`, …).
    pub kind: &'static str,
    /// What it says.
    pub text: String,
    /// The message whose arrival it answers (a store's decision: the request; PayCo's: the
    /// call; the page's outcome: the response), by index in [`Trace::msgs`]: it is drawn on
    /// that arrival's row, at the arrowhead. `None`: a row of its own.
    pub on: Option<usize>,
}

/// Server marks that end a work (placed after the PayCo exchange in an instant); the outbox
/// message is written by the save.
const WORK_ENDS: [&str; 7] = [
    "saved", "released", "fenced", "answered", "crashed", "declined", "outbox",
];

/// Server marks of the outbox's relay (placed with its calls, after everything else).
const RELAY_MARKS: [&str; 2] = ["marked-sent", "relay-died"];

impl Mark {
    /// Its place within one millisecond when it has a row of its own (see [`Hop`]'s).
    fn rank(&self) -> u8 {
        match (self.lane, self.kind) {
            (Lane::Browser, "journal" | "click") => 0,
            (Lane::Browser, "settled") => 13,
            (Lane::Browser | Lane::Network, _) => 12,
            (Lane::PayCo, _) => 6,
            (Lane::Receipts, _) => 14,
            (Lane::Server, k) if RELAY_MARKS.contains(&k) => 14,
            (Lane::Server, k) if WORK_ENDS.contains(&k) => 9,
            (Lane::Server, _) => 3,
        }
    }
}

/// One checkout's exchange, as of `now`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trace {
    /// Messages in the order sent.
    pub msgs: Vec<Msg>,
    /// Marks, in any order.
    pub marks: Vec<Mark>,
    /// The moment drawn.
    pub now: u64,
    /// The source cannot see the outbox's relay and consumer (real mode: the server's event
    /// stream carries the store's decisions, not the relay's calls), so their lane is not drawn
    /// rather than drawn empty.
    pub outbox_unseen: bool,
}

impl Trace {
    /// The lanes drawn, left to right.
    pub fn lanes(&self) -> impl Iterator<Item = Lane> {
        let n = if self.outbox_unseen { 4 } else { 5 };
        Lane::ALL.into_iter().take(n)
    }
}

/// What the page knew when message `i` left it (a request) or reached it (a response; lost,
/// by now): everything its own lane saw up to then, oldest first. The server's and PayCo's
/// lanes are the ground truth the page never sees.
pub fn knew(trace: &Trace, i: usize) -> Vec<String> {
    let Some(m) = trace.msgs.get(i) else {
        return Vec::new();
    };
    let until = match m.hop {
        Hop::Response => m
            .arrivals
            .first()
            .copied()
            .unwrap_or(trace.now)
            .min(trace.now),
        _ => m.sent_at,
    };
    // Each line as (time, then answers before marks, then index) in one number, sorted.
    let mut lines: Vec<(u64, String)> = Vec::new();
    for r in trace.msgs.iter().filter(|r| r.hop == Hop::Response) {
        if let Some(&at) = r.arrivals.first().filter(|&&at| at <= until) {
            // A response's label names its request: `#2 ← 201` is "got #2's answer: 201". (A
            // char, not a `&str` pattern: its searcher would cost the bundle 1.6 KB.)
            let line = match r.label.split_once('←') {
                Some((request, said)) => [
                    "got ",
                    request.strip_suffix(' ').unwrap_or(request),
                    "'s answer:",
                    said,
                ]
                .concat(),
                None => ["got ", &r.label].concat(),
            };
            lines.push((at << 1, line));
        }
    }
    for k in &trace.marks {
        if k.lane == Lane::Browser && k.at <= until {
            lines.push(((k.at << 1) | 1, k.text.clone()));
        }
    }
    let mut order: Vec<u64> = (0..lines.len() as u64)
        .map(|i| (lines[i as usize].0 << 16) | i)
        .collect();
    sort(&mut order);
    let mut out: Vec<String> = order
        .iter()
        .map(|o| {
            let (key, text) = &lines[(o & 0xffff) as usize];
            [&(key >> 1).to_string(), " ms: ", text].concat()
        })
        .collect();
    out.push(
        match (m.hop, m.arrivals.is_empty(), m.late) {
            (Hop::Call | Hop::Answer, ..) => "The page never sees PayCo.",
            (Hop::Delivery | Hop::Ack, ..) => "The page never sees the outbox.",
            (Hop::Response, true, _) => "This answer never reached the page.",
            (Hop::Response, false, true) => "The page had stopped waiting for this answer.",
            (Hop::Response, ..) if until < m.arrivals[0] => "Still waiting for this answer.",
            _ => "",
        }
        .to_string(),
    );
    out.retain(|l| !l.is_empty());
    out
}

/// Sort nearly sorted numbers (messages come in send order, marks in time order) in place. An
/// insertion sort: a few hundred rows take one pass, and the standard library's sort would
/// add 3 KB of wasm for this one element type.
fn sort(v: &mut [u64]) {
    for i in 1..v.len() {
        let mut j = i;
        while j > 0 && v[j - 1] > v[j] {
            v.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// The first two labels of `l` whose boxes overlap, or one outside the diagram (the tests'
/// check of a layout).
#[cfg(test)]
pub(crate) fn clash(l: &Layout) -> Option<String> {
    let all: Vec<&Label> = l.labels().collect();
    for (n, a) in all.iter().enumerate() {
        let (left, top, right, _) = a.bounds();
        if left < 0 || right > WIDTH || top < 0 {
            return Some(format!("{a:?} leaves the diagram"));
        }
        if let Some(b) = all[n + 1..].iter().find(|b| a.overlaps(b)) {
            return Some(format!("{a:?} overlaps {b:?}"));
        }
    }
    None
}

/// Traces by hand, for this module's tests and the layout's.
#[cfg(test)]
mod fixtures {
    use super::*;

    /// A message with no label, lost when it has no arrival.
    pub(super) fn msg(hop: Hop, sent_at: u64, arrivals: &[u64]) -> Msg {
        Msg {
            hop,
            sent_at,
            arrivals: arrivals.to_vec(),
            lost: arrivals.is_empty(),
            late: false,
            label: String::new(),
            wire: String::new(),
        }
    }

    /// A mark with no text, on a row of its own.
    pub(super) fn mark(at: u64, lane: Lane, kind: &'static str) -> Mark {
        Mark {
            at,
            lane,
            kind,
            text: String::new(),
            on: None,
        }
    }

    /// `m`, answering message `i`'s arrival.
    pub(super) fn on(i: usize, m: Mark) -> Mark {
        Mark { on: Some(i), ..m }
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::{mark, msg};
    use super::*;

    #[test]
    fn the_page_knew_its_own_lane_up_to_then() {
        let mut lost = msg(Hop::Response, 10, &[]);
        lost.label = "201".into();
        let mut replay = msg(Hop::Response, 1_600, &[1_620]);
        replay.label = "#2 ← 201 replayed".into();
        let b = |at, kind, text: &str| {
            let mut m = mark(at, Lane::Browser, kind);
            m.text = text.into();
            m
        };
        let t = Trace {
            msgs: vec![
                msg(Hop::Request, 0, &[10]),
                lost,
                msg(Hop::Request, 1_500, &[1_520]),
                replay,
            ],
            marks: vec![
                b(0, "journal", "key k"),
                b(1_000, "timeout", "#1 timed out"),
                b(1_620, "paid", "paid"),
                mark(10, Lane::Server, "claimed"),
            ],
            now: 2_000,
            outbox_unseen: false,
        };
        assert_eq!(knew(&t, 0), ["0 ms: key k"]);
        assert_eq!(
            knew(&t, 1),
            [
                "0 ms: key k",
                "1000 ms: #1 timed out",
                "1620 ms: got #2's answer: 201 replayed",
                "1620 ms: paid",
                "This answer never reached the page."
            ]
        );
        assert_eq!(
            knew(&t, 2),
            ["0 ms: key k", "1000 ms: #1 timed out"],
            "the server's claim is not the page's"
        );
        assert!(knew(&t, 3).contains(&"1620 ms: got #2's answer: 201 replayed".to_string()));
    }

    #[test]
    fn the_points_sort() {
        let mut v = vec![5, 1, 4, 1, 9, 0, 3];
        sort(&mut v);
        assert_eq!(v, [0, 1, 1, 3, 4, 5, 9]);
    }
}
