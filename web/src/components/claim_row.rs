//! One row of the claim table. Re-renders only when its record changes (or, while in flight,
//! when the lease countdown moves): the props compare by pointer first.

use std::rc::Rc;

use yew::prelude::*;

use crate::model::view::{ClaimStatus, ShownClaim};

/// Virtual ms after a change during which a row scrolled into view still flashes.
pub const RECENT_MS: u64 = 1_000;

/// Props of [`ClaimRowView`].
#[derive(Properties)]
pub struct ClaimRowProps {
    /// The record.
    pub claim: Rc<ShownClaim>,
    /// Virtual time, for the lease countdown and the flash (`u64::MAX` for a settled row: see
    /// `claim_table::row_clock`).
    pub now: u64,
    /// Offset in the windowed list, px.
    pub top: usize,
}

impl PartialEq for ClaimRowProps {
    fn eq(&self, other: &Self) -> bool {
        self.now == other.now
            && self.top == other.top
            && (Rc::ptr_eq(&self.claim, &other.claim) || self.claim == other.claim)
    }
}

/// A claim row.
#[function_component]
pub fn ClaimRowView(props: &ClaimRowProps) -> Html {
    let c = &props.claim;
    let r = &c.row;
    // Alternate two identical animations so every change restarts the flash. A row scrolled
    // into view mounts fresh: it flashes only if it changed in the last moments.
    let mounted_version = use_state(|| c.version);
    let recent = c.changed_at + RECENT_MS >= props.now;
    let flash = if c.version != *mounted_version || recent {
        if c.version.is_multiple_of(2) {
            "flash-a"
        } else {
            "flash-b"
        }
    } else {
        ""
    };
    let status = r.status.value();
    let lease = match (r.status, r.locked_at, r.lease_until) {
        (ClaimStatus::InFlight, Some(at), Some(until)) => {
            let left = until.saturating_sub(props.now);
            let len = until.saturating_sub(at).max(1);
            let pct = (left * 100 / len).min(100);
            let stale = left == 0;
            html! {
                <span class={classes!("lease", stale.then_some("stale"))} title="time left on the lease; stale leases are taken over">
                    <span class="bar"><span style={format!("width:{pct}%")}></span></span>
                    { if stale { "stale".to_string() } else { format!("{}.{} s", left / 1000, left % 1000 / 100) } }
                </span>
            }
        }
        _ => html! { <span class="muted">{ "—" }</span> },
    };
    let opt = |v: Option<u64>| v.map_or("—".to_string(), |v| v.to_string());
    let left = r
        .lease_until
        .map(|u| u.saturating_sub(props.now).to_string());
    html! {
        <div role="row" class={classes!("crow", status, flash)} data-testid="claim-row" style={format!("top:{}px", props.top)}
            data-key={r.key.clone()} data-status={status} data-scope={r.scope.clone()} data-version={c.version.to_string()}
            data-token={r.token.map(|t| t.to_string())} data-lease-left={left}>
            <span role="cell" class="c-scope">{ &r.scope }</span>
            <span role="cell" class="c-key mono" title={r.key.clone()}>{ &r.key }</span>
            <span role="cell" class="c-fp mono" title="SHA-256 of the canonical request, first digits">{ &r.fingerprint }</span>
            <span role="cell" class="c-status"><span class={classes!("chip", status)}>
                { match r.status {
                    ClaimStatus::InFlight => "● in_flight",
                    ClaimStatus::Released => "↺ released",
                    ClaimStatus::Done => "✓ done",
                } }
            </span></span>
            <span role="cell" class="c-resp mono">{ if r.response.is_empty() { "—" } else { &r.response } }</span>
            <span role="cell" class="c-num mono">{ opt(r.locked_at) }</span>
            <span role="cell" class="c-num mono">{ opt(r.token) }</span>
            <span role="cell" class="c-lease">{ lease }</span>
        </div>
    }
}
