//! Placing a [`Trace`] on the lanes: one row per send, arrival and mark, in causal order; an
//! arrow from its send's row to its arrival's; every label on its own row, so no two labels
//! can meet, however many things happen in one millisecond.
//!
//! Which label goes where: an arrow's on its send's row, just above the line, starting at the
//! sender and running towards the receiver; a mark's beside its dot (left of it when the right
//! edge is too close); a time at the left edge of the first row of each millisecond. A mark
//! that answers an arrival (the store's decision, PayCo's, the page's outcome) shares that
//! arrival's row, whose arrowhead has no label. With [`ROW`] at least the height of two label
//! boxes' offsets plus one box, neighbouring rows' labels stay apart too; the time column is
//! kept clear by moving any other label right of it.

use super::label::{time_label, Label};
use super::{sort, Hop, Lane, Msg, Trace};

/// Width of the diagram, in its units (the SVG's `viewBox`).
pub const WIDTH: i32 = 720;
/// Height of one row: a label's box (15) plus the 8 between an arrow label's baseline (4 above
/// its row's line) and a mark label's (4 below), and 1 to spare.
pub const ROW: i32 = 24;
/// The first row's line (an arrow label above it still starts inside the diagram).
pub const TOP: i32 = 18;
/// Room left between the time column and the labels right of it.
const GAP: i32 = 6;

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

    /// Drawn in bold (CSS `.seq-arrow.lost text, .seq-arrow.late text`).
    fn bold(self) -> bool {
        matches!(self, Fate::Lost | Fate::Late)
    }
}

/// What an arrow of `m` with `fate` says: its label and, unless plainly delivered, its fate.
pub fn says(m: &Msg, fate: Fate) -> String {
    let what = match (fate, m.hop) {
        (Fate::Lost, Hop::Request) => " · ✂ lost request",
        (Fate::Lost, Hop::Response) => " · ✂ lost response",
        (Fate::Lost, _) => " · ✂ lost",
        (Fate::Unanswered, _) => " · ? no answer",
        (Fate::Late, _) => " · late",
        (Fate::Duplicate, _) => " · duplicate",
        _ => "",
    };
    [m.label.as_str(), what].concat()
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
    /// Its text, drawn on its send's row: the first copy's (a duplicate's copy has none of its
    /// own; the first says the message was duplicated).
    pub label: Option<Label>,
}

/// A mark placed: its dot and its label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spot {
    /// Index in [`Trace::marks`].
    pub mark: usize,
    /// The dot's centre.
    pub at: (i32, i32),
    /// Its text.
    pub label: Label,
}

/// The trace placed on the lanes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    /// Time labels, on the first row of each millisecond.
    pub times: Vec<Label>,
    /// Arrows, in message order.
    pub arrows: Vec<Arrow>,
    /// Marks, in [`Trace::marks`] order (those after `now` left out).
    pub marks: Vec<Spot>,
    /// The line of `now`.
    pub now_y: i32,
    /// Total height.
    pub height: i32,
}

impl Layout {
    /// Every label drawn: times, arrows', marks' (the tests' check).
    #[cfg(test)]
    pub fn labels(&self) -> impl Iterator<Item = &Label> {
        let arrows = self.arrows.iter().filter_map(|a| a.label.as_ref());
        let marks = self.marks.iter().map(|s| &s.label);
        self.times.iter().chain(arrows).chain(marks)
    }
}

/// What takes a row.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Happening {
    /// Message `i` leaves.
    Send(usize),
    /// Message `i`'s copy `k` arrives.
    Arrive(usize, usize),
    /// Mark `j`, on a row of its own.
    Mark(usize),
    /// The line of now.
    Now,
}

/// Most happenings one diagram places (its row keys keep an index in 20 bits); a longer trace
/// is drawn up to there.
const MOST: usize = 1 << 20;

/// A row's sort key: time, then rank within the millisecond, then `index` (messages in send
/// order, then marks), each happening's own, so no two share a row.
fn key(t: u64, rank: u8, index: usize) -> u64 {
    (t.min((1 << 40) - 1) << 24) | (u64::from(rank & 15) << 20) | index as u64
}

/// Place `trace` (see the module's doc).
pub fn layout(trace: &Trace) -> Layout {
    let now = trace.now;
    let msgs = &trace.msgs;
    let mut happenings: Vec<Happening> = Vec::new();
    let mut keys: Vec<u64> = Vec::new();
    let mut add = |h: Happening, t: u64, rank: u8| {
        if t <= now && happenings.len() < MOST - 1 {
            keys.push(key(t, rank, happenings.len()));
            happenings.push(h);
        }
    };
    for (i, m) in msgs.iter().enumerate() {
        let (send, arrive) = m.hop.ranks();
        add(Happening::Send(i), m.sent_at, send);
        for (k, &at) in m.arrivals.iter().enumerate() {
            add(Happening::Arrive(i, k), at, arrive);
        }
    }
    // A mark that answers an arrival takes that arrival's row (each arrival answered once).
    let mut shares: Vec<(usize, Happening)> = Vec::new();
    for (j, mark) in trace.marks.iter().enumerate() {
        let arrival = mark.on.and_then(|i| {
            let m = msgs.get(i).filter(|m| m.hop.ends().1 == mark.lane)?;
            let taken = |k| shares.iter().any(|s| s.1 == Happening::Arrive(i, k));
            let k = (0..m.arrivals.len()).find(|&k| m.arrivals[k] == mark.at && !taken(k))?;
            Some(Happening::Arrive(i, k))
        });
        match arrival {
            Some(a) => shares.push((j, a)),
            None => add(Happening::Mark(j), mark.at, mark.rank()),
        }
    }
    add(Happening::Now, now, 15);
    sort(&mut keys);
    let y_of = |row: usize| TOP + row as i32 * ROW;
    let now_y = y_of(keys.len().saturating_sub(1));
    // Where a happening went (`None`: not drawn, being after now).
    let y_at = |what: Happening| {
        let h = happenings.iter().position(|&x| x == what)?;
        let row = keys.iter().position(|k| (k & 0xf_ffff) as usize == h)?;
        Some(y_of(row))
    };
    let mark_y = |j: usize| match shares.iter().find(|s| s.0 == j) {
        Some(&(_, arrival)) => y_at(arrival),
        None => y_at(Happening::Mark(j)),
    };
    // Times, and the column they keep for themselves.
    let mut times: Vec<Label> = Vec::new();
    let mut last_t = None;
    for (row, k) in keys.iter().enumerate() {
        let t = k >> 24;
        if last_t != Some(t) {
            last_t = Some(t);
            times.push(Label::new(2, y_of(row) + 4, false, false, time_label(t)));
        }
    }
    let left = times.iter().map(|l| l.bounds().2).max().unwrap_or(0) + GAP;
    let right = WIDTH - 2;
    let mut arrows = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        let Some(sy) = y_at(Happening::Send(i)) else {
            continue;
        };
        let (from, to) = m.hop.ends();
        let start = (from.x(), sy);
        // The label of the first arrow drawn, with its fate; a duplicated message says so.
        let label = |fate: Fate| {
            let twice = if m.arrivals.len() > 1 {
                " · duplicated"
            } else {
                ""
            };
            let dx = if m.hop.rightwards() { 8 } else { -8 };
            let text = [says(m, fate).as_str(), twice].concat();
            let l = Label::new(start.0 + dx, sy - 4, !m.hop.rightwards(), fate.bold(), text);
            Some(l.within(left, right))
        };
        if m.arrivals.is_empty() {
            // Cut where it was lost: in the network, or between the server and PayCo.
            let x = match m.hop {
                Hop::Request | Hop::Response => Lane::Network.x(),
                Hop::Call | Hop::Answer => (Lane::Server.x() + Lane::PayCo.x()) / 2,
                Hop::Delivery | Hop::Ack => (Lane::Server.x() + Lane::Receipts.x()) / 2,
            };
            let fate = if m.lost { Fate::Lost } else { Fate::Unanswered };
            arrows.push(Arrow {
                msg: i,
                fate,
                from: start,
                to: (x, sy + ROW / 2),
                label: label(fate),
            });
            continue;
        }
        for (k, &at) in m.arrivals.iter().enumerate() {
            let (fate, end) = match y_at(Happening::Arrive(i, k)) {
                Some(y) => {
                    let fate = match (k, m.late) {
                        (1, _) => Fate::Duplicate,
                        (_, true) => Fate::Late,
                        _ => Fate::Delivered,
                    };
                    (fate, (to.x(), y))
                }
                None => {
                    // Still on its way: as far across as its time in flight allows (at least a
                    // stub, so a message sent this very millisecond shows its way).
                    let span = at.saturating_sub(m.sent_at).max(1);
                    let done = now.saturating_sub(m.sent_at).min(span);
                    let full = to.x() - from.x();
                    let dx = (i64::from(full) * done as i64 / span as i64) as i32;
                    let dx = if dx.abs() < 30 {
                        30 * full.signum()
                    } else {
                        dx
                    };
                    (Fate::OnItsWay, (from.x() + dx, now_y))
                }
            };
            let label = if k == 0 { label(fate) } else { None };
            arrows.push(Arrow {
                msg: i,
                fate,
                from: start,
                to: end,
                label,
            });
        }
    }
    let mut marks = Vec::new();
    for (j, mark) in trace.marks.iter().enumerate() {
        let Some(y) = mark_y(j) else { continue };
        let x = mark.lane.x();
        let mut label = Label::new(x + 7, y + 4, false, false, mark.text.clone());
        if label.x + label.w > right {
            // Too close to the right edge: written left of the dot.
            (label.x, label.end) = (x - 7, true);
        }
        marks.push(Spot {
            mark: j,
            at: (x, y),
            label: label.within(left, right),
        });
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
    use crate::model::sequence::fixtures::{mark, msg, on};
    use crate::model::sequence::{clash, Mark};

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
                on(1, mark(0, Lane::PayCo, "charged")),
                on(0, mark(0, Lane::Server, "claimed")),
                mark(0, Lane::Browser, "journal"),
            ],
            now: 0,
            outbox_unseen: false,
        };
        let l = layout(&t);
        let ys: Vec<i32> = l.marks.iter().map(|m| m.at.1).collect();
        let (saved, charged, claimed, journal) = (ys[0], ys[1], ys[2], ys[3]);
        assert!(
            journal < l.arrows[0].from.1,
            "written before the first send"
        );
        assert_eq!(claimed, l.arrows[0].to.1, "decided at the arrival");
        assert!(claimed < l.arrows[1].from.1 && l.arrows[1].to.1 == charged);
        assert!(charged < l.arrows[2].to.1 && l.arrows[2].to.1 < saved);
        assert!(saved < l.arrows[3].from.1, "the answer leaves once saved");
        assert!(l.arrows.iter().all(|a| a.to.1 > a.from.1), "time runs down");
        assert_eq!(l.times.len(), 1, "one time label for one millisecond");
        assert_eq!(clash(&l), None);
    }

    #[test]
    fn two_requests_in_one_millisecond_are_two_arrows_with_two_claims() {
        // The SELECT-then-INSERT race: both requests leave at 0, both arrive at 20, both claim.
        let t = Trace {
            msgs: vec![
                msg(Hop::Request, 0, &[20]),
                msg(Hop::Request, 0, &[20]),
                msg(Hop::Call, 20, &[20]),
                msg(Hop::Call, 20, &[20]),
            ],
            marks: vec![
                on(0, mark(20, Lane::Server, "claimed")),
                on(1, mark(20, Lane::Server, "claimed")),
                on(2, mark(20, Lane::PayCo, "charged")),
                on(3, mark(20, Lane::PayCo, "charged")),
            ],
            now: 30,
            outbox_unseen: false,
        };
        let l = layout(&t);
        let (a, b) = (&l.arrows[0], &l.arrows[1]);
        assert!(
            a.from.1 < b.from.1 && a.to.1 < b.to.1,
            "apart, in send order"
        );
        let ys: Vec<(i32, i32)> = l.marks.iter().map(|m| m.at).collect();
        assert_eq!(ys[0].1, a.to.1, "each claim at its own request's arrival");
        assert_eq!(ys[1].1, b.to.1);
        assert_ne!(ys[2], ys[3], "two charges, two dots");
        assert_eq!(clash(&l), None);
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
            outbox_unseen: false,
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
        assert!(
            l.arrows[2].label.is_none(),
            "the copy has no label of its own"
        );
        let first = l.arrows[1].label.as_ref().map(|l| l.text.as_str());
        assert_eq!(first, Some(" · duplicated"));
        assert_eq!(clash(&l), None);
    }

    #[test]
    fn what_has_not_happened_yet_is_not_drawn() {
        let t = Trace {
            msgs: vec![msg(Hop::Request, 0, &[40])],
            marks: vec![on(0, mark(40, Lane::Server, "claimed"))],
            now: 20,
            outbox_unseen: false,
        };
        let l = layout(&t);
        assert_eq!(l.arrows[0].fate, Fate::OnItsWay);
        assert_eq!(l.arrows[0].to.0, (Lane::Browser.x() + Lane::Server.x()) / 2);
        // The claim at 40 ms is after `now`: a source never hands it in, and rows stop at now.
        assert!(l.marks.is_empty());
        assert_eq!(l.times.last().map(|t| t.text.as_str()), Some("20 ms"));
    }

    #[test]
    fn a_long_label_near_an_edge_is_moved_inside() {
        let mut answer = msg(Hop::Response, 10, &[]);
        answer.label = "#12 ← 409 · Retry-After 1 · ✂ lost response · and more words".into();
        let mut m = mark(10, Lane::PayCo, "deduped");
        m.text = "deduped → its decline: no money".into();
        let t = Trace {
            msgs: vec![answer],
            marks: vec![m],
            now: 120_000,
            outbox_unseen: false,
        };
        let l = layout(&t);
        assert_eq!(clash(&l), None);
        let dot = &l.marks[0];
        assert!(dot.label.end, "written left of its dot");
    }

    /// A small deterministic generator (the tests' own, so they need no crate).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n.max(1)
        }
    }

    #[test]
    fn no_two_labels_overlap_in_any_of_a_thousand_traces() {
        let texts = [
            "#1 POST 1a2b3c4d",
            "#12 ← 409 · Retry-After 1",
            "claimed · lease 1",
            "409 + Retry-After: 1 s",
            "journal keeps key 1a2b3c4d: 201, no payload",
            "#3 timed out: unknown",
            "deduped → ch_12: no money",
            "charge:12",
            "✝ crashed after the charge",
            "relay #2: order-12-paid",
            "✝ relay died before marking it sent",
            "✉ a second receipt sent",
            "W",
        ];
        let hops = [
            Hop::Request,
            Hop::Response,
            Hop::Call,
            Hop::Answer,
            Hop::Delivery,
            Hop::Ack,
        ];
        let lanes = Lane::ALL;
        let mut rng = Lcg(7);
        for seed in 0..1_000 {
            let n = 1 + rng.below(12) as usize;
            let mut t = Trace::default();
            for _ in 0..n {
                // Few distinct times, so many things share a millisecond.
                let sent = rng.below(4) * 10;
                let arrivals: Vec<u64> = match rng.below(4) {
                    0 => Vec::new(),
                    1 => vec![sent + rng.below(3) * 10, sent + 30],
                    _ => vec![sent + rng.below(3) * 10],
                };
                let mut m = msg(hops[rng.below(6) as usize], sent, &arrivals);
                m.late = rng.below(3) == 0;
                m.label = texts[rng.below(texts.len() as u64) as usize].into();
                t.msgs.push(m);
            }
            for _ in 0..rng.below(10) {
                let i = rng.below(n as u64) as usize;
                let at = t.msgs[i].arrivals.first().copied().unwrap_or(5);
                let lane = lanes[rng.below(5) as usize];
                let mut m: Mark = mark(at, lane, "claimed");
                m.text = texts[rng.below(texts.len() as u64) as usize].into();
                m.on = (rng.below(2) == 0).then_some(i);
                t.marks.push(m);
            }
            t.now = rng.below(60);
            let l = layout(&t);
            assert_eq!(clash(&l), None, "trace {seed}: {t:?}");
            let mut rows: Vec<i32> = l.arrows.iter().map(|a| a.from.1).collect();
            rows.dedup();
            let mut sent: Vec<usize> = l.arrows.iter().map(|a| a.msg).collect();
            sent.dedup();
            assert_eq!(rows.len(), sent.len(), "trace {seed}: one row per send");
        }
    }
}
