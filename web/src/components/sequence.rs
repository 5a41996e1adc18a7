//! The sequence diagram: one checkout's messages between Browser, Network, Server and PayCo,
//! drawn as an SVG from a `model::sequence::Trace` (built by `projection/sequence.rs` from the
//! simulated world, or in real mode by `real/trace.rs` from what the page sent and received and
//! the server's events) and redrawn on every refresh, so play, pause, step, `←`/`→` and a
//! scenario's pause move it. One checkout at a time, picked with ◂ ▸ or its number; clicking
//! (or tabbing to) an arrow shows what it carried and what the page knew then.
//!
//! The SVG's elements are yew virtual-DOM tags built by one small function ([`el`]) rather than
//! `html!`, whose code is specialised per element: measured with `make build` and `gzip -9`,
//! the diagram cost about 40 % more bytes through `html!`. Text goes in as text nodes, never as
//! markup.

use idem_sim::CheckoutId;
use web_sys::{Element, HtmlInputElement};
use yew::prelude::*;
use yew::virtual_dom::{AttributeOrProperty, Attributes, VTag};

use crate::model::sequence::{knew, layout, says, Arrow, Fate, Label, Lane, Layout, Trace, WIDTH};
use crate::model::view::View;
use crate::projection::sequence::trace;
use crate::session::Session;

/// An element with attributes `keys` set to `values` (in order) and `children`.
fn el(
    tag: &'static str,
    keys: &'static [&'static str],
    values: Vec<AttrValue>,
    kids: Vec<Html>,
) -> Html {
    let values = values
        .into_iter()
        .map(|v| Some(AttributeOrProperty::Attribute(v)))
        .collect();
    let mut t = VTag::new(tag);
    t.set_attributes(Attributes::Dynamic { keys, values });
    t.add_children(kids);
    t.into()
}

fn num(n: i32) -> AttrValue {
    AttrValue::from(n.to_string())
}

/// A line from `a` to `b`.
fn line(class: &'static str, (x1, y1): (i32, i32), (x2, y2): (i32, i32)) -> Html {
    let keys = &["class", "x1", "y1", "x2", "y2"];
    el(
        "line",
        keys,
        vec![class.into(), num(x1), num(y1), num(x2), num(y2)],
        Vec::new(),
    )
}

/// A label where the layout put it.
fn text(l: &Label) -> Html {
    let anchor = if l.end { "end" } else { "start" };
    let keys = &["x", "y", "text-anchor"];
    el(
        "text",
        keys,
        vec![num(l.x), num(l.y), anchor.into()],
        vec![Html::from(l.text.clone())],
    )
}

/// An arrow's head at `to`, pointing away from `from`, as SVG polygon points.
fn head((x1, y1): (i32, i32), (x2, y2): (i32, i32)) -> String {
    let (dx, dy) = ((x2 - x1) as f32, (y2 - y1) as f32);
    let len = (dx * dx + dy * dy).sqrt().max(1.0);
    let (ux, uy) = (dx / len, dy / len);
    let (bx, by) = (x2 as f32 - 9.0 * ux, y2 as f32 - 9.0 * uy);
    let p = |x: f32, y: f32| [(x as i32).to_string(), (y as i32).to_string()].join(",");
    [
        p(x2 as f32, y2 as f32),
        p(bx - 4.0 * uy, by + 4.0 * ux),
        p(bx + 4.0 * uy, by - 4.0 * ux),
    ]
    .join(" ")
}

/// One arrow, its label (the first copy's), and (lost) its cut.
fn arrow(t: &Trace, a: &Arrow, sel: Option<usize>) -> Html {
    let m = &t.msgs[a.msg];
    let (from, to) = (a.from, a.to);
    let mut kids = vec![line("hit", from, to), line("", from, to)];
    if a.fate != Fate::Lost {
        kids.push(el(
            "polygon",
            &["points"],
            vec![head(from, to).into()],
            Vec::new(),
        ));
    }
    kids.extend(a.label.as_ref().map(text));
    let sel = if sel == Some(a.msg) { " sel" } else { "" };
    let class = ["seq-arrow ", m.hop.name(), " ", a.fate.name(), sel].concat();
    let keys = &[
        "class",
        "data-testid",
        "data-msg",
        "data-hop",
        "data-fate",
        "tabindex",
        "role",
        "aria-label",
    ];
    let values = vec![
        class.into(),
        "seq-arrow".into(),
        a.msg.to_string().into(),
        m.hop.name().into(),
        a.fate.name().into(),
        "0".into(),
        "button".into(),
        // Its name is the text it shows (a duplicated message's says so), or, for a copy with
        // no text of its own, what it is.
        a.label
            .as_ref()
            .map_or_else(|| says(m, a.fate), |l| l.text.clone())
            .into(),
    ];
    el("g", keys, values, kids)
}

/// The diagram: lane lines, time labels, the line of now, marks, arrows.
fn svg(t: &Trace, l: &Layout, sel: Option<usize>) -> Html {
    let mut kids: Vec<Html> = t
        .lanes()
        .map(|lane| {
            let x = lane.x();
            let keys = &["class", "x1", "x2", "y1", "y2"];
            let class = ["seq-life ", lane.name()].concat();
            el(
                "line",
                keys,
                vec![class.into(), num(x), num(x), num(0), num(l.height)],
                Vec::new(),
            )
        })
        .collect();
    kids.extend(l.times.iter().map(text));
    kids.push(line("seq-now", (0, l.now_y), (WIDTH, l.now_y)));
    for spot in &l.marks {
        let m = &t.marks[spot.mark];
        let (x, y) = spot.at;
        let dot = el(
            "circle",
            &["cx", "cy", "r"],
            vec![num(x), num(y), num(4)],
            Vec::new(),
        );
        let keys = &["class", "data-testid", "data-kind", "data-lane"];
        let class = ["seq-mark k-", m.kind].concat();
        let values = vec![
            class.into(),
            "seq-mark".into(),
            m.kind.into(),
            m.lane.name().into(),
        ];
        kids.push(el("g", keys, values, vec![dot, text(&spot.label)]));
    }
    kids.extend(l.arrows.iter().map(|a| arrow(t, a, sel)));
    let keys = &["class", "viewBox", "role", "aria-label"];
    let values = vec![
        "seq-svg".into(),
        ["0 0 ", &WIDTH.to_string(), " ", &l.height.to_string()]
            .concat()
            .into(),
        "group".into(),
        "Messages of this checkout, time running down".into(),
    ];
    el("svg", keys, values, kids)
}

/// The lanes' headings, above the scrolling diagram.
fn headings(t: &Trace) -> Html {
    let heading = |lane: Lane| {
        let keys = &["x", "y", "text-anchor"];
        el(
            "text",
            keys,
            vec![num(lane.x()), num(14), "middle".into()],
            vec![lane.label().into()],
        )
    };
    let keys = &["class", "viewBox", "aria-hidden"];
    let values = vec![
        "seq-lanes".into(),
        ["0 0 ", &WIDTH.to_string(), " 20"].concat().into(),
        "true".into(),
    ];
    el("svg", keys, values, t.lanes().map(heading).collect())
}

/// What message `i` carried, as HTTP text, and what the page knew then. The ✕ closes it
/// (`data-to="-1"`, read by the panel's click handler).
fn details(t: &Trace, i: usize) -> Html {
    let Some(m) = t.msgs.get(i) else {
        return Html::default();
    };
    let tag = |tag, text: String| el(tag, &[], Vec::new(), vec![text.into()]);
    let close = el(
        "button",
        &["class", "data-to", "aria-label"],
        vec!["btn ghost".into(), "-1".into(), "Close details".into()],
        vec!["✕".into()],
    );
    let title = tag("strong", [m.label.as_str(), " · ", m.hop.name()].concat());
    let head = el(
        "div",
        &["class"],
        vec!["tl-details-head".into()],
        vec![title, close],
    );
    let wire = el(
        "pre",
        &["class", "data-testid"],
        vec!["mono seq-wire".into(), "seq-wire".into()],
        vec![m.wire.clone().into()],
    );
    let lines = knew(t, i).into_iter().map(|l| tag("li", l)).collect();
    let knew = el("ul", &["data-testid"], vec!["seq-knew".into()], lines);
    let cols = vec![
        el(
            "div",
            &[],
            Vec::new(),
            vec![tag("h3", "On the wire".into()), wire],
        ),
        el(
            "div",
            &[],
            Vec::new(),
            vec![tag("h3", "What the page knew then".into()), knew],
        ),
    ];
    let body = el("div", &["class"], vec!["tl-cols".into()], cols);
    let keys = &["class", "data-testid", "aria-live"];
    el(
        "aside",
        keys,
        vec!["tl-details".into(), "seq-details".into(), "polite".into()],
        vec![head, body],
    )
}

/// Props of [`Sequence`]: the handles it reads, as props rather than contexts (a context
/// costs its provider's component machinery in the bundle; web/README.md "Bundle").
#[derive(Properties, PartialEq)]
pub struct SequenceProps {
    /// What the panels show.
    pub view: UseReducerHandle<View>,
    /// The page's session (the world and its run log).
    pub session: Session,
}

/// The sequence diagram panel.
#[function_component]
pub fn Sequence(props: &SequenceProps) -> Html {
    let view = props.view.clone();
    let session = props.session.clone();
    // The checkout picked (`None`: the one the cart shows) and the message clicked.
    let pick = use_state(|| (None::<u32>, None::<usize>));
    // The checkout drawn, its neighbours for ◂ ▸, how many there are, and its trace.
    let (c, prev, next, total, t) = match &view.real {
        // Real mode: the checkouts this page load sent (`co_N`, counted from 1), the last one
        // unless another was picked.
        Some(info) => {
            let names = crate::real::trace::checkouts(info);
            let num = |i: usize| names[i].get(3..).and_then(|n| n.parse().ok()).unwrap_or(0);
            let last = names.len().saturating_sub(1);
            let i = pick
                .0
                .map_or(last, |p| (0..last).find(|&i| num(i) >= p).unwrap_or(last));
            let t = names.get(i).map_or_else(Trace::default, |name| {
                crate::real::trace::trace(info, name, view.now)
            });
            let c = if names.is_empty() { 0 } else { num(i) };
            let near = |j: usize| if j < names.len() { num(j) } else { c };
            (
                c,
                near(i.wrapping_sub(1)),
                near(i + 1),
                names.len() as u32,
                t,
            )
        }
        // Simulated: every checkout of the world, by the number it is written with (`co_1` is
        // the first), the cart's unless another was picked.
        None => {
            let total = session.with_run(|r| r.world().checkouts().len()) as u32;
            let last = total.saturating_sub(1);
            let i = pick
                .0
                .map_or(view.cart.map_or(0, |c| c.0 .0), |p| p.saturating_sub(1))
                .min(last);
            let t = session.with_run(|r| trace(r.world(), CheckoutId(i)));
            let n = i + 1;
            (
                n,
                n.saturating_sub(1).max(1),
                (n + 1).min(total.max(1)),
                total,
                t,
            )
        }
    };
    // One handler for the buttons (◂, ▸, ✕ carry `data-to`: a checkout's number, or -1 to
    // close) and one for the arrows (a click focuses an arrow, and so does Tab).
    let onclick = {
        let pick = pick.clone();
        Callback::from(move |e: MouseEvent| {
            let to = e
                .target_dyn_into::<Element>()
                .and_then(|t| t.closest("[data-to]").ok().flatten())
                .and_then(|b| b.get_attribute("data-to")?.parse::<i64>().ok());
            match to {
                Some(-1) => pick.set((pick.0, None)),
                Some(n) => pick.set((u32::try_from(n).ok(), None)),
                None => {}
            }
        })
    };
    let onfocusin = {
        let pick = pick.clone();
        Callback::from(move |e: FocusEvent| {
            let g = e
                .target_dyn_into::<Element>()
                .and_then(|t| t.closest("[data-msg]").ok().flatten());
            if let Some(i) = g.and_then(|g| g.get_attribute("data-msg")?.parse().ok()) {
                pick.set((pick.0, Some(i)));
            }
        })
    };
    let oninput = {
        let pick = pick.clone();
        Callback::from(move |e: InputEvent| {
            let v = e.target_unchecked_into::<HtmlInputElement>().value();
            if let Ok(n) = v.trim().parse::<u32>() {
                pick.set((Some(n), None));
            }
        })
    };
    // The scroller reads top down, like the diagram: its first rows stay in view, under the
    // lanes' headings, and a longer story scrolls on below (a new run starts at its top: the
    // diagram shrinks to one row, and the browser puts the scroll position back to 0).
    html! {
        <section class="panel sequence" aria-labelledby="h-sequence" data-testid="sequence" {onclick}
            data-checkout={["co_", &c.to_string()].concat()} data-checkouts={total.to_string()} data-now={t.now.to_string()}>
            <h2 id="h-sequence">{ "Sequence" }
                <span class="sub">{ "one checkout's messages; click an arrow" }</span>
                <span class="seq-pick">
                    <button class="btn" data-testid="seq-prev" data-to={prev.to_string()} aria-label="Previous checkout">{ "◂" }</button>
                    <label>{ "co_" }<input type="text" inputmode="numeric" data-testid="seq-checkout" value={c.to_string()}
                        {oninput} aria-label="Checkout number" size="4" /></label>
                    <button class="btn" data-testid="seq-next" data-to={next.to_string()} aria-label="Next checkout">{ "▸" }</button>
                    { "of " }{ total }
                </span>
            </h2>
            { headings(&t) }
            <div class="seq-scroll" {onfocusin} tabindex="0" aria-label="Sequence diagram (scroll)">
                if total == 0 {
                    <p class="empty">{ "No checkouts yet: press Pay" }{ if view.real.is_none() { ", or pick a scenario." } else { "." } }</p>
                } else {
                    <div class="seq-body">{ svg(&t, &layout(&t), pick.1) }</div>
                }
            </div>
            { pick.1.map_or(Html::default(), |i| details(&t, i)) }
        </section>
    }
}
