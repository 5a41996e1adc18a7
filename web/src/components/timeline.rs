//! The timeline: one lane per checkout, each attempt a bar (ok / fail / unknown, an attempt
//! still out drawn open-ended), fault windows shaded behind, and a click on a bar shows what
//! the client knew against what really happened. Lanes are windowed like the claim table.
//!
//! The lanes are written as one HTML string (numbers and fixed words only) with one delegated
//! click handler: far less WASM than a virtual node and a callback per bar.

use web_sys::Element;
use yew::prelude::*;

use super::window::use_window;
use crate::lab::Lab;
use crate::model::timeline::{self, Outcome};
use crate::model::view::View;

/// Height of one lane, px (matches `.tl-lane` in style.css).
const LANE_PX: usize = 24;

/// `n / span` as a CSS percentage with three decimals, in integers (no float formatting code
/// in the bundle).
fn pct(out: &mut String, n: u64, span: u64) {
    let milli = n.saturating_mul(100_000) / span.max(1);
    out.push_str(&(milli / 1000).to_string());
    out.push('.');
    let frac = (milli % 1000).to_string();
    for _ in frac.len()..3 {
        out.push('0');
    }
    out.push_str(&frac);
    out.push('%');
}

fn push(out: &mut String, parts: &[&str]) {
    for p in parts {
        out.push_str(p);
    }
}

/// The lanes in `range` and the fault windows, as HTML.
fn body_html(
    lanes: &[timeline::Lane],
    faults: &[timeline::FaultWindow],
    first: usize,
    (t0, t1): (u64, u64),
    sel: Option<(u32, u32)>,
) -> String {
    let span = t1.saturating_sub(t0).max(1);
    let mut s = String::with_capacity(512 + lanes.len() * 400);
    s.push_str("<div class=\"tl-faults\" aria-hidden=\"true\">");
    for f in faults {
        push(
            &mut s,
            &[
                "<div class=\"tl-fault ",
                f.kind,
                "\" data-testid=\"fault-window\" data-kind=\"",
                f.kind,
                "\" title=\"",
                f.kind,
                "\" style=\"left:",
            ],
        );
        let (from, to) = (f.from.clamp(t0, t1), f.to.clamp(t0, t1));
        pct(&mut s, from - t0, span);
        s.push_str(";width:");
        pct(&mut s, (to - from).max(span / 400), span);
        s.push_str("\"></div>");
    }
    s.push_str("</div>");
    for (i, lane) in lanes.iter().enumerate() {
        let c = lane.checkout.to_string();
        push(
            &mut s,
            &[
                "<div class=\"tl-lane\" data-testid=\"timeline-lane\" data-checkout=\"co_",
                &c,
                "\" data-state=\"",
                lane.state,
                "\" style=\"top:",
                &((first + i) * LANE_PX).to_string(),
                "px\"><span class=\"tl-label mono\" title=\"",
                lane.strategy,
                "\">co_",
                &c,
                " <span class=\"muted\">",
                lane.state,
                "</span></span><div class=\"tl-track\">",
            ],
        );
        for b in &lane.bars {
            let n = b.n.to_string();
            let kind = b.outcome.value();
            let glyph = match b.outcome {
                Outcome::Ok => "✓",
                Outcome::Fail => "✗",
                Outcome::Unknown => "?",
            };
            push(
                &mut s,
                &[
                    "<button class=\"tl-bar ",
                    kind,
                    if b.open { " open" } else { "" },
                    if sel == Some((lane.checkout, b.n)) {
                        " sel"
                    } else {
                        ""
                    },
                    "\" data-testid=\"timeline-attempt\" data-outcome=\"",
                    kind,
                    "\" data-c=\"",
                    &c,
                    "\" data-n=\"",
                    &n,
                    "\" data-open=\"",
                    if b.open { "true" } else { "false" },
                    "\" title=\"co_",
                    &c,
                    " attempt ",
                    &n,
                    ": ",
                    &b.label,
                    "\" aria-label=\"co_",
                    &c,
                    " attempt ",
                    &n,
                    ": ",
                    &b.label,
                    "\" style=\"left:",
                ],
            );
            pct(&mut s, b.from.saturating_sub(t0), span);
            s.push_str(";width:");
            pct(&mut s, b.to.saturating_sub(b.from), span);
            push(&mut s, &["\">", glyph, "</button>"]);
        }
        s.push_str("</div></div>");
    }
    s
}

/// The timeline panel.
#[function_component]
pub fn Timeline() -> Html {
    let view = use_context::<UseReducerHandle<View>>().expect("View context is provided by App");
    let lab = use_context::<Lab>().expect("Lab context is provided by App");
    let selected = use_state(|| None::<(u32, u32)>);
    let total = lab.with_world(|a| a.world().checkouts().len());
    let win = use_window(total, LANE_PX);
    let domain = lab.with_world(|a| timeline::domain(a.world()));
    let lanes = lab.with_world(|a| timeline::lanes(a.world(), win.range.clone()));
    let faults = lab.with_log(|log| timeline::fault_windows(log, view.now));
    let body = body_html(&lanes, &faults, win.range.start, domain, *selected);
    let details =
        selected.and_then(|(c, n)| lab.with_world(|a| timeline::details(a.world(), c, n)));
    let onclick = {
        let selected = selected.clone();
        Callback::from(move |e: MouseEvent| {
            let bar = e
                .target_dyn_into::<Element>()
                .and_then(|t| t.closest("[data-n]").ok().flatten());
            let num = |name| bar.as_ref()?.get_attribute(name)?.parse::<u32>().ok();
            if let (Some(c), Some(n)) = (num("data-c"), num("data-n")) {
                selected.set(Some((c, n)));
            }
        })
    };
    let close = {
        let selected = selected.clone();
        Callback::from(move |_| selected.set(None))
    };
    html! {
        <section class="panel timeline" aria-labelledby="h-timeline" data-testid="timeline"
            data-lanes={total.to_string()}>
            <h2 id="h-timeline">{ "Timeline" }
                <span class="sub">{ "one lane per checkout, one bar per attempt; click a bar" }</span></h2>
            <div class="tl-legend" aria-hidden="true">
                <span class="tl-key ok">{ "✓ ok" }</span>
                <span class="tl-key fail">{ "✗ fail (409/422)" }</span>
                <span class="tl-key unknown">{ "? unknown" }</span>
                <span class="tl-key unknown open">{ "still out" }</span>
                <span class="tl-key fault">{ "fault window" }</span>
                <span class="tl-axis mono" data-testid="timeline-axis">{ domain.0 }{ " → " }{ domain.1 }{ " ms" }</span>
            </div>
            <div class="tl-scroll" ref={win.node.clone()} onscroll={win.onscroll.clone()} tabindex="0"
                aria-label="Timeline lanes (scroll)">
                if total == 0 { <p class="empty">{ "No checkouts yet: press Pay or start a batch." }</p> }
                <div class="tl-body" style={["height:", &win.height.to_string(), "px"].concat()} {onclick}>
                    { Html::from_html_unchecked(body.into()) }
                </div>
            </div>
            if let Some(d) = details {
                <aside class="tl-details" data-testid="attempt-details" aria-live="polite">
                    <div class="tl-details-head">
                        <strong>{ &d.title }</strong>
                        <button class="btn ghost" onclick={close} aria-label="Close details">{ "✕" }</button>
                    </div>
                    <div class="tl-cols">
                        <div><h3>{ "What the client knew" }</h3><p data-testid="attempt-knew">{ &d.knew }</p></div>
                        <div><h3>{ "What really happened" }</h3>
                            <ul data-testid="attempt-really">{ for d.really.iter().map(|l| html! { <li>{ l }</li> }) }</ul></div>
                    </div>
                </aside>
            }
        </section>
    }
}
