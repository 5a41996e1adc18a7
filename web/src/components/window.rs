//! A virtual window over a long list: only the rows in view (plus a margin) are in the DOM, so
//! thousands of claim or ledger rows cost as much as forty.

use std::ops::Range;

use web_sys::Element;
use yew::prelude::*;

/// Rows rendered above and below the visible ones.
pub const OVERSCAN: usize = 4;

/// What a windowed list needs: the scroll container's ref and `onscroll`, and which rows to draw.
pub struct Window {
    /// Put on the scroll container.
    pub node: NodeRef,
    /// Put on the scroll container.
    pub onscroll: Callback<Event>,
    /// Rows to render.
    pub range: Range<usize>,
    /// Full height of the list, px (the spacer's height).
    pub height: usize,
}

/// The rows of a `total`-row list with fixed `row_px` rows that are in view.
#[hook]
pub fn use_window(total: usize, row_px: usize) -> Window {
    let node = use_node_ref();
    // (scrollTop, clientHeight) of the container, updated on scroll.
    let view = use_state(|| (0usize, 720usize));
    let onscroll = {
        let (node, view) = (node.clone(), view.clone());
        Callback::from(move |_: Event| {
            if let Some(el) = node.cast::<Element>() {
                view.set((
                    el.scroll_top().max(0) as usize,
                    el.client_height().max(0) as usize,
                ));
            }
        })
    };
    let (top, height) = *view;
    let range = visible(total, row_px, top, height);
    Window {
        node,
        onscroll,
        range,
        height: total * row_px,
    }
}

/// Rows `[first, last)` to draw for a viewport at `top` px that is `height` px tall.
pub fn visible(total: usize, row_px: usize, top: usize, height: usize) -> Range<usize> {
    let row_px = row_px.max(1);
    let first = (top / row_px).saturating_sub(OVERSCAN).min(total);
    let last = ((top + height) / row_px + 1 + OVERSCAN).min(total);
    first..last.max(first)
}

#[cfg(test)]
mod tests {
    use super::visible;

    #[test]
    fn the_window_covers_the_viewport_plus_overscan() {
        assert_eq!(visible(1000, 24, 0, 480), 0..25);
        assert_eq!(visible(1000, 24, 2400, 480), 96..125);
        assert_eq!(visible(1000, 24, 24_000, 480), 996..1000);
        assert_eq!(visible(0, 24, 0, 480), 0..0);
        assert_eq!(visible(5, 24, 0, 480), 0..5);
    }
}
