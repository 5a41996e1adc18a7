//! The sequence diagram's data and its layout, whatever the source: a [`Trace`] is one
//! checkout's messages (with what became of them) and the marks each party left on its lane;
//! [`layout`] places them on four lanes, Browser, Network, Server and PayCo, one row per
//! instant that matters, time running down.
//!
//! Nothing here knows the simulator. `projection/sequence.rs` builds a trace from the
//! simulated world's history; a page talking to a real server can build one from what it sent
//! and received (its fetch driver) and what the server's event stream reported, and draw it
//! with the same layout and component: a response the page never got is then a request whose
//! server marks say "saved 201" and a browser mark that says it timed out.
//!
//! Rows are ordinal, not to scale: every send, arrival and mark gets a row in causal order
//! (a retry's 1 s of backoff takes one row, as a 5 ms hop does), and the time is written beside
//! it. An arrow runs from its send's row to its arrival's, so a late message crosses the ones
//! sent after it that arrived before.

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
}

impl Lane {
    /// Left to right.
    pub const ALL: [Lane; 4] = [Lane::Browser, Lane::Network, Lane::Server, Lane::PayCo];

    /// The `data-lane` value.
    pub fn name(self) -> &'static str {
        match self {
            Lane::Browser => "browser",
            Lane::Network => "network",
            Lane::Server => "server",
            Lane::PayCo => "payco",
        }
    }

    /// The lane's heading.
    pub fn label(self) -> &'static str {
        match self {
            Lane::Browser => "Browser · localStorage",
            Lane::Network => "Network",
            Lane::Server => "Server · store",
            Lane::PayCo => "PayCo",
        }
    }

    /// Where its line is drawn, in the diagram's units (see [`WIDTH`]).
    pub fn x(self) -> i32 {
        match self {
            Lane::Browser => 92,
            Lane::Network => 236,
            Lane::Server => 380,
            Lane::PayCo => 540,
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
}

impl Hop {
    /// The `data-hop` value.
    pub fn name(self) -> &'static str {
        match self {
            Hop::Request => "request",
            Hop::Response => "response",
            Hop::Call => "call",
            Hop::Answer => "answer",
        }
    }

    /// Sender and receiver.
    pub fn ends(self) -> (Lane, Lane) {
        match self {
            Hop::Request => (Lane::Browser, Lane::Server),
            Hop::Response => (Lane::Server, Lane::Browser),
            Hop::Call => (Lane::Server, Lane::PayCo),
            Hop::Answer => (Lane::PayCo, Lane::Server),
        }
    }

    /// Order within one millisecond (below 16): a request is sent, arrives and is decided; the work calls
    /// PayCo, which decides and answers; the work ends and the response goes back.
    fn ranks(self) -> (u8, u8) {
        match self {
            Hop::Request => (1, 2),
            Hop::Call => (3, 4),
            Hop::Answer => (5, 6),
            Hop::Response => (7, 8),
        }
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
}

/// Server marks that end a work (placed after the PayCo exchange in an instant).
const WORK_ENDS: [&str; 6] = [
    "saved", "released", "fenced", "answered", "crashed", "declined",
];

impl Mark {
    /// Its place within one millisecond (see [`Hop`]'s).
    fn rank(&self) -> u8 {
        match (self.lane, self.kind) {
            (Lane::Browser, "journal" | "click") => 0,
            (Lane::Browser, "settled") => 9,
            (Lane::Browser | Lane::Network, _) => 8,
            (Lane::PayCo, _) => 4,
            (Lane::Server, k) if WORK_ENDS.contains(&k) => 7,
            (Lane::Server, _) => 2,
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
            lines.push((at << 1, ["got ", &r.label].concat()));
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

/// Width of the diagram, in its units (the SVG's `viewBox`).
pub const WIDTH: i32 = 720;
/// Height of one row.
pub const ROW: i32 = 24;
/// The first row's line.
pub const TOP: i32 = 16;

/// What an arrow shows of its message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Arrived while awaited.
    Delivered,
    /// Arrived after its receiver stopped waiting.
    Late,
    /// The network's second copy.
    Duplicate,
    /// Lost on the way: cut.
    Lost,
    /// Sent, not arrived yet.
    OnItsWay,
    /// Sent; whether it arrived is not known.
    Unanswered,
}

impl Fate {
    /// The `data-fate` value and CSS class.
    pub fn name(self) -> &'static str {
        match self {
            Fate::Delivered => "delivered",
            Fate::Late => "late",
            Fate::Duplicate => "duplicate",
            Fate::Lost => "lost",
            Fate::OnItsWay => "on-its-way",
            Fate::Unanswered => "unanswered",
        }
    }
}

/// One drawn arrow (a duplicated message has two).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arrow {
    /// Index in [`Trace::msgs`].
    pub msg: usize,
    /// How it is drawn.
    pub fate: Fate,
    /// Start.
    pub from: (i32, i32),
    /// End (at the cut for a lost message).
    pub to: (i32, i32),
}

/// The trace placed on the lanes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Time labels: the time and the row's line, where the time changes.
    pub times: Vec<(u64, i32)>,
    /// Arrows, in message order.
    pub arrows: Vec<Arrow>,
    /// Each mark's index in [`Trace::marks`] and where its dot goes.
    pub marks: Vec<(usize, i32, i32)>,
    /// The line of `now`.
    pub now_y: i32,
    /// Total height.
    pub height: i32,
}

/// Sort nearly sorted points (messages come in send order, marks in time order) in place. An
/// insertion sort: a few hundred points take one pass, and the standard library's sort would
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

/// Place `trace`: rows for every instant (time, then order within the millisecond), arrows from
/// send to arrival, lost ones cut at the network (or between server and PayCo), ones still on
/// their way ending at `now`'s line.
pub fn layout(trace: &Trace) -> Layout {
    let now = trace.now;
    // An instant as one number, time then rank (ranks are below 16), so the rows sort as numbers.
    let point = |t: u64, rank: u8| (t << 4) | u64::from(rank);
    let mut points: Vec<u64> = Vec::new();
    for m in &trace.msgs {
        let (send, arrive) = m.hop.ranks();
        points.push(point(m.sent_at, send));
        points.extend(
            m.arrivals
                .iter()
                .filter(|&&a| a <= now)
                .map(|&a| point(a, arrive)),
        );
    }
    points.extend(trace.marks.iter().map(|m| point(m.at, m.rank())));
    points.retain(|&p| p >> 4 <= now);
    points.push(point(now, 15));
    sort(&mut points);
    points.dedup();
    let y = |t: u64, rank: u8| {
        let row = points.binary_search(&point(t, rank)).unwrap_or_else(|i| i);
        TOP + row as i32 * ROW
    };
    let now_y = y(now, 15);
    let mut arrows = Vec::new();
    for (i, m) in trace.msgs.iter().enumerate() {
        let (from, to) = m.hop.ends();
        let (send, arrive) = m.hop.ranks();
        let start = (from.x(), y(m.sent_at, send));
        let mut arrow = |fate, end| {
            arrows.push(Arrow {
                msg: i,
                fate,
                from: start,
                to: end,
            })
        };
        if m.arrivals.is_empty() {
            // Cut where it was lost: in the network, or between the server and PayCo.
            let x = match m.hop {
                Hop::Request | Hop::Response => Lane::Network.x(),
                Hop::Call | Hop::Answer => (Lane::Server.x() + Lane::PayCo.x()) / 2,
            };
            let fate = if m.lost { Fate::Lost } else { Fate::Unanswered };
            arrow(fate, (x, start.1 + ROW / 2));
            continue;
        }
        for (copy, &at) in m.arrivals.iter().enumerate() {
            if at > now {
                // Still on its way: as far across as its time in flight allows.
                // (At least a stub, so a message sent this very millisecond shows its way.)
                let span = (at - m.sent_at).max(1);
                let done = now.saturating_sub(m.sent_at).min(span);
                let full = to.x() - from.x();
                let dx = (i64::from(full) * done as i64 / span as i64) as i32;
                let dx = if dx.abs() < 30 {
                    30 * full.signum()
                } else {
                    dx
                };
                arrow(Fate::OnItsWay, (from.x() + dx, now_y));
                continue;
            }
            let fate = match (copy, m.late) {
                (1, _) => Fate::Duplicate,
                (_, true) => Fate::Late,
                _ => Fate::Delivered,
            };
            arrow(fate, (to.x(), y(at, arrive)));
        }
    }
    let marks = trace
        .marks
        .iter()
        .enumerate()
        .map(|(i, m)| (i, m.lane.x(), y(m.at, m.rank())))
        .collect();
    let mut times: Vec<(u64, i32)> = Vec::new();
    for (row, p) in points.iter().enumerate() {
        if times.last().is_none_or(|t| t.0 != p >> 4) {
            times.push((p >> 4, TOP + row as i32 * ROW));
        }
    }
    Layout {
        times,
        arrows,
        marks,
        now_y,
        height: now_y + ROW,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(hop: Hop, sent_at: u64, arrivals: &[u64]) -> Msg {
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

    fn mark(at: u64, lane: Lane, kind: &'static str) -> Mark {
        Mark {
            at,
            lane,
            kind,
            text: String::new(),
        }
    }

    /// Whether two segments cross (strictly).
    fn cross(a: &Arrow, b: &Arrow) -> bool {
        let side = |p: (i32, i32), q: (i32, i32), r: (i32, i32)| {
            i64::from(q.0 - p.0) * i64::from(r.1 - p.1)
                - i64::from(q.1 - p.1) * i64::from(r.0 - p.0)
        };
        let d1 = side(a.from, a.to, b.from);
        let d2 = side(a.from, a.to, b.to);
        let d3 = side(b.from, b.to, a.from);
        let d4 = side(b.from, b.to, a.to);
        d1.signum() * d2.signum() < 0 && d3.signum() * d4.signum() < 0
    }

    #[test]
    fn one_instant_reads_in_causal_order() {
        // Everything at one millisecond: journal, send, arrival and claim, PayCo, save, answer.
        let t = Trace {
            msgs: vec![
                msg(Hop::Request, 0, &[0]),
                msg(Hop::Call, 0, &[0]),
                msg(Hop::Answer, 0, &[0]),
                msg(Hop::Response, 0, &[0]),
            ],
            marks: vec![
                mark(0, Lane::Server, "saved"),
                mark(0, Lane::PayCo, "charged"),
                mark(0, Lane::Server, "claimed"),
                mark(0, Lane::Browser, "journal"),
            ],
            now: 0,
        };
        let l = layout(&t);
        let ys: Vec<i32> = l.marks.iter().map(|m| m.2).collect();
        let (saved, charged, claimed, journal) = (ys[0], ys[1], ys[2], ys[3]);
        assert!(
            journal < l.arrows[0].from.1,
            "written before the first send"
        );
        assert_eq!(claimed, l.arrows[0].to.1, "decided at the arrival");
        assert!(claimed < l.arrows[1].from.1 && l.arrows[1].to.1 == charged);
        assert!(charged < l.arrows[2].to.1 && l.arrows[2].to.1 < saved);
        assert_eq!(saved, l.arrows[3].from.1, "the answer leaves once saved");
        assert!(l.arrows.iter().all(|a| a.to.1 > a.from.1), "time runs down");
        assert_eq!(l.times.len(), 1, "one time label for one millisecond");
    }

    #[test]
    fn a_lost_message_is_cut_a_duplicate_drawn_twice_and_a_late_one_crosses() {
        let mut late = msg(Hop::Request, 0, &[900]);
        late.late = true;
        let t = Trace {
            msgs: vec![
                late,
                msg(Hop::Request, 500, &[520, 610]),
                msg(Hop::Response, 530, &[]),
                msg(Hop::Response, 700, &[2_000]),
            ],
            marks: vec![],
            now: 1_000,
        };
        let l = layout(&t);
        let fates: Vec<(usize, Fate)> = l.arrows.iter().map(|a| (a.msg, a.fate)).collect();
        assert_eq!(
            fates,
            [
                (0, Fate::Late),
                (1, Fate::Delivered),
                (1, Fate::Duplicate),
                (2, Fate::Lost),
                (3, Fate::OnItsWay),
            ]
        );
        let cut = &l.arrows[3];
        assert_eq!(cut.to.0, Lane::Network.x(), "cut in the network");
        assert!(
            cross(&l.arrows[0], &l.arrows[1]),
            "the late one crosses the later one"
        );
        let flying = &l.arrows[4];
        assert_eq!(flying.to.1, l.now_y);
        assert!(flying.to.0 < Lane::Server.x() && flying.to.0 > Lane::Browser.x());
        assert!(
            !cross(&l.arrows[1], &l.arrows[2]),
            "the copies share their start"
        );
    }

    #[test]
    fn the_page_knew_its_own_lane_up_to_then() {
        let mut lost = msg(Hop::Response, 10, &[]);
        lost.label = "201".into();
        let mut replay = msg(Hop::Response, 1_600, &[1_620]);
        replay.label = "201 replayed".into();
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
        };
        assert_eq!(knew(&t, 0), ["0 ms: key k"]);
        assert_eq!(
            knew(&t, 1),
            [
                "0 ms: key k",
                "1000 ms: #1 timed out",
                "1620 ms: got 201 replayed",
                "1620 ms: paid",
                "This answer never reached the page."
            ]
        );
        assert_eq!(
            knew(&t, 2),
            ["0 ms: key k", "1000 ms: #1 timed out"],
            "the server's claim is not the page's"
        );
        assert!(knew(&t, 3).contains(&"1620 ms: got 201 replayed".to_string()));
    }

    #[test]
    fn the_points_sort() {
        let mut v = vec![5, 1, 4, 1, 9, 0, 3];
        sort(&mut v);
        assert_eq!(v, [0, 1, 1, 3, 4, 5, 9]);
    }

    #[test]
    fn what_has_not_happened_yet_is_not_drawn() {
        let t = Trace {
            msgs: vec![msg(Hop::Request, 0, &[40])],
            marks: vec![mark(40, Lane::Server, "claimed")],
            now: 20,
        };
        let l = layout(&t);
        assert_eq!(l.arrows[0].fate, Fate::OnItsWay);
        assert_eq!(l.arrows[0].to.0, (Lane::Browser.x() + Lane::Server.x()) / 2);
        // The claim at 40 ms is after `now`: a source never hands it in, and rows stop at now.
        assert_eq!(l.times.last().map(|t| t.0), Some(20));
    }
}
