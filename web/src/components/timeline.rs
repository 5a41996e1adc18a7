//! The timeline: one lane per checkout, each attempt a bar (ok / fail / unknown, an attempt
//! still out drawn open-ended), fault windows shaded behind, and a click on a bar shows what
//! the client knew against what really happened. Lanes are windowed like the claim table, and
//! one delegated click handler serves every bar.
//!
//! Rendered with `html!`, not an HTML string: measured with `make build` and `gzip -9`, the
//! timeline and the lab through `html!` cost 1,669 B more than both as strings (230,333 against
//! 228,664 B of wasm + JS), and only the lanes in view (a few dozen) are nodes.

use web_sys::Element;
use yew::prelude::*;

use super::window::use_window;
use crate::model::view::View;
use crate::projection::timeline::{self, Outcome};
use crate::session::Session;

/// Height of one lane, px (matches `.tl-lane` in style.css).
const LANE_PX: usize = 24;

/// `n / span` as a CSS percentage with three decimals, in integers (no float formatting code
/// in the bundle).
fn pct(n: u64, span: u64) -> String {
    let milli = n.saturating_mul(100_000) / span.max(1);
    let frac = (milli % 1000).to_string();
    let mut out = (milli / 1000).to_string();
    out.push('.');
    for _ in frac.len()..3 {
        out.push('0');
    }
    out.push_str(&frac);
    out.push('%');
    out
}

/// `left:…;width:…` for the span `from..to` of the axis `t0..t0 + span`.
fn place(from: u64, width: u64, span: u64) -> String {
    ["left:", &pct(from, span), ";width:", &pct(width, span)].concat()
}

/// The fault windows behind the lanes.
fn faults_html(faults: &[timeline::FaultWindow], (t0, t1): (u64, u64)) -> Html {
    let span = t1.saturating_sub(t0).max(1);
    let window = |f: &timeline::FaultWindow| {
        let (from, to) = (f.from.clamp(t0, t1), f.to.clamp(t0, t1));
        let style = place(from - t0, (to - from).max(span / 400), span);
        html! {
            <div class={classes!("tl-fault", f.kind)} data-testid="fault-window" data-kind={f.kind}
                title={f.kind} {style}></div>
        }
    };
    html! { <div class="tl-faults" aria-hidden="true">{ for faults.iter().map(window) }</div> }
}

/// One lane and its bars.
fn lane_html(
    lane: &timeline::Lane,
    top: usize,
    (t0, t1): (u64, u64),
    sel: Option<(u32, u32)>,
) -> Html {
    let span = t1.saturating_sub(t0).max(1);
    // `data-c` is the checkout's index (the click handler's); people read its name, `co_N`.
    let c = lane.checkout.to_string();
    let name = idem_sim::CheckoutId(lane.checkout).to_string();
    let bar = |b: &timeline::Bar| {
        let kind = b.outcome.value();
        let glyph = match b.outcome {
            Outcome::Ok => "✓",
            Outcome::Fail => "✗",
            Outcome::Unknown => "?",
        };
        let label = [&name, " attempt ", &b.n.to_string(), ": ", &b.label].concat();
        let selected = sel == Some((lane.checkout, b.n));
        let style = place(b.from.saturating_sub(t0), b.to.saturating_sub(b.from), span);
        html! {
            <button class={classes!("tl-bar", kind, b.open.then_some("open"), selected.then_some("sel"))}
                data-testid="timeline-attempt" data-outcome={kind} data-c={c.clone()} data-n={b.n.to_string()}
                data-open={b.open.to_string()} title={label.clone()} aria-label={label} {style}>
                { glyph }</button>
        }
    };
    html! {
        <div class="tl-lane" data-testid="timeline-lane" data-checkout={name.clone()}
            data-state={lane.state} style={["top:", &(top * LANE_PX).to_string(), "px"].concat()}>
            <span class="tl-label mono" title={lane.strategy}>{ &name }{ " " }
                <span class="muted">{ lane.state }</span></span>
            <div class="tl-track">{ for lane.bars.iter().map(bar) }</div>
        </div>
    }
}

/// Props of [`Timeline`]: the handles it reads, as props rather than contexts (a context
/// costs its provider's component machinery in the bundle; web/README.md "Bundle").
#[derive(Properties, PartialEq)]
pub struct TimelineProps {
    /// What the panels show.
    pub view: UseReducerHandle<View>,
    /// The page's session (the world and its run log).
    pub session: Session,
}

/// The timeline panel.
#[function_component]
pub fn Timeline(props: &TimelineProps) -> Html {
    let view = props.view.clone();
    let session = props.session.clone();
    let selected = use_state(|| None::<(u32, u32)>);
    let total = session.with_run(|r| r.world().checkouts().len());
    let win = use_window(total, LANE_PX);
    let domain = session.with_run(|r| timeline::domain(r.world()));
    let lanes = session.with_run(|r| timeline::lanes(r.world(), win.range.clone()));
    let faults = session.with_run(|r| timeline::fault_windows(r.log(), view.now));
    let first = win.range.start;
    let details =
        selected.and_then(|(c, n)| session.with_run(|r| timeline::details(r.world(), c, n)));
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
                    { faults_html(&faults, domain) }
                    { for lanes.iter().enumerate().map(|(i, l)| lane_html(l, first + i, domain, *selected)) }
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
