//! The store's and the network's events as they happen: 409s, 422s, takeovers, fenced writes.

use std::rc::Rc;

use yew::prelude::*;

use super::header::format_clock;
use crate::model::view::{EventRow, View};

/// One line, keyed by its sequence number. A function, not a component (see `help`): the list
/// around it skips re-rendering while no event arrives.
fn event_line(e: &EventRow) -> Html {
    html! {
        <li key={e.seq} class={classes!("ev", e.kind.value().to_string())} data-testid="event" data-kind={e.kind.value()} data-key={e.key.clone()}>
            <span class="ev-at mono">{ format_clock(e.at) }</span>
            <span class={classes!("chip", format!("k-{}", e.kind.value()))}>{ e.kind.label() }</span>
            <span class="ev-detail">{ &e.detail }</span>
        </li>
    }
}

/// The event feed, newest first. A function, not a component: see `help`.
pub fn event_feed(view: &View) -> Html {
    // The run's totals (the world's counters), not what the feed happened to show.
    let (c409, c422) = (view.stats.conflicts, view.stats.mismatches);
    html! {
        <div class="feed">
            <div class="feed-head">
                <h3>{ "Events" }</h3>
                <span class="chip k-409" data-testid="count-409" data-count={c409.to_string()}>{ format!("409 × {c409}") }</span>
                <span class="chip k-422" data-testid="count-422" data-count={c422.to_string()}>{ format!("422 × {c422}") }</span>
                <span class="chip k-takeover" data-testid="count-takeover" data-count={view.stats.takeovers.to_string()}>{ format!("takeover × {}", view.stats.takeovers) }</span>
                <span class="chip k-fenced" data-testid="count-fenced" data-count={view.stats.fenced.to_string()}>{ format!("fenced × {}", view.stats.fenced) }</span>
            </div>
            <FeedList events={view.events.clone()} />
        </div>
    }
}

/// Props of [`FeedList`].
#[derive(Properties)]
struct FeedListProps {
    events: Rc<Vec<Rc<EventRow>>>,
}

impl PartialEq for FeedListProps {
    fn eq(&self, other: &Self) -> bool {
        Rc::ptr_eq(&self.events, &other.events)
    }
}

/// The lines. The view keeps the same list while no event arrives, so a refresh without new
/// events skips the 200 keyed lines altogether.
#[function_component]
fn FeedList(props: &FeedListProps) -> Html {
    html! {
        <ol class="feed-list" data-testid="event-feed" aria-live="off">
            { for props.events.iter().rev().map(|e| event_line(e)) }
        </ol>
    }
}
