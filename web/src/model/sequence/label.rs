//! A label of the diagram and the room it takes: its anchor, and a box estimated from its text
//! at the largest size the page draws it (projector mode's), so that the layout can keep every
//! label clear of the others without measuring text in a browser.
//!
//! The estimate errs wide: per character, the advance of DejaVu Sans (the sans-serif a Debian
//! browser falls back to, and one of the widest) rounded up, bold a tenth wider. A narrower
//! font only leaves more room. The e2e spec `picture.spec.ts` measures the drawn labels.

/// Font size of the diagram's text in its own units, at its largest (projector mode).
pub const FONT: f32 = 12.5;
/// Above the baseline, in the diagram's units (DejaVu Sans' ascent, 0.93 em, rounded up).
pub const ASCENT: i32 = 12;
/// Below the baseline (its descent, 0.24 em, rounded up).
pub const DESCENT: i32 = 3;

/// Text at a point: its start (or, `end`, its end) on the baseline at (`x`, `y`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    /// Anchor, horizontally.
    pub x: i32,
    /// Baseline.
    pub y: i32,
    /// Anchored at its end (`text-anchor: end`) rather than its start.
    pub end: bool,
    /// Its width, estimated once ([`width`]).
    pub w: i32,
    /// What it says.
    pub text: String,
}

/// One byte's share of the advance, in hundredths of an em, rounded up (DejaVu Sans Book):
/// ASCII by letter; a character beyond ASCII (arrows, ✂, ✝, ×, ·) counts a whole em on its
/// first byte, nothing on the others, so no UTF-8 decoding is needed.
fn advance(b: u8) -> u32 {
    match b {
        b' ' | b'.' | b',' | b':' | b';' | b'!' | b'|' | b'\'' | b'i' | b'j' | b'l' | b'I' => 36,
        b'f' | b't' | b'r' | b'(' | b')' | b'[' | b']' | b'-' | b'/' => 45,
        b'm' | b'w' => 98,
        b'M' | b'W' | b'%' | b'#' | b'@' => 100,
        b'A'..=b'Z' => 80,
        0x80..=0xbf => 0,
        0..=0x7f => 66,
        _ => 100,
    }
}

/// How wide `text` is drawn, in the diagram's units, rounded up (bold a tenth wider).
pub fn width(text: &str, bold: bool) -> i32 {
    let em: u32 = text.bytes().map(advance).sum();
    let tenths = if bold { 11 } else { 10 };
    // em/100 × FONT × tenths/10, in whole units, up.
    (em * (FONT * 10.0) as u32 * tenths).div_ceil(10_000) as i32
}

impl Label {
    /// `text` anchored at (`x`, `y`), at its end when `end`; `bold` text is wider.
    pub fn new(x: i32, y: i32, end: bool, bold: bool, text: String) -> Label {
        let w = width(&text, bold);
        Label { x, y, end, w, text }
    }

    /// The box it takes: left, top, right, bottom.
    pub fn bounds(&self) -> (i32, i32, i32, i32) {
        let left = if self.end { self.x - self.w } else { self.x };
        (left, self.y - ASCENT, left + self.w, self.y + DESCENT)
    }

    /// Moved sideways, if need be, so that its box lies between `left` and `right` (a label
    /// wider than that keeps its start at `left`).
    pub fn within(mut self, left: i32, right: i32) -> Label {
        let (l, _, r, _) = self.bounds();
        let shift = if l < left {
            left - l
        } else if r > right {
            (right - r).max(left - l)
        } else {
            0
        };
        self.x += shift;
        self
    }

    /// Whether its box and `other`'s share any area (the tests' check).
    #[cfg(test)]
    pub fn overlaps(&self, other: &Label) -> bool {
        let (l1, t1, r1, b1) = self.bounds();
        let (l2, t2, r2, b2) = other.bounds();
        l1 < r2 && l2 < r1 && t1 < b2 && t2 < b1
    }
}

/// `12,345` ms as `12.345 s`, `845` as `845 ms`.
pub fn time_label(ms: u64) -> String {
    if ms < 1_000 {
        return [&ms.to_string(), " ms"].concat();
    }
    let frac = (ms % 1_000 + 1_000).to_string();
    [&(ms / 1_000).to_string(), ".", &frac[1..], " s"].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(x: i32, y: i32, end: bool, text: &str) -> Label {
        Label::new(x, y, end, false, text.into())
    }

    #[test]
    fn an_end_anchored_label_lies_left_of_its_anchor() {
        let l = at(300, 50, true, "#1 POST 1a2b3c4d");
        let (left, top, right, bottom) = l.bounds();
        assert_eq!(right, 300);
        assert!(left < 300 - 100, "16 characters take more than 100 units");
        assert_eq!((top, bottom), (50 - ASCENT, 50 + DESCENT));
        let bold = Label::new(300, 50, true, true, l.text.clone());
        assert!(bold.bounds().0 < left, "bold is wider");
    }

    #[test]
    fn within_moves_a_label_inside_and_only_then() {
        let l = at(690, 50, false, "deduped → ch_1: no money");
        let moved = l.clone().within(70, 720);
        assert!(moved.bounds().2 <= 720 && moved.x < l.x);
        let inside = at(100, 50, false, "claimed");
        assert_eq!(inside.clone().within(70, 720), inside);
        let left = at(80, 50, true, "#2 ← 409 · Retry-After 1");
        assert_eq!(left.within(70, 720).bounds().0, 70);
    }

    #[test]
    fn boxes_overlap_only_when_they_share_area() {
        let a = at(100, 50, false, "claimed · lease 1");
        let beside = at(a.bounds().2, 50, false, "x");
        let below = at(100, 50 + ASCENT + DESCENT, false, "claimed");
        assert!(!a.overlaps(&beside) && !a.overlaps(&below));
        assert!(a.overlaps(&at(120, 55, false, "x")));
    }

    #[test]
    fn times_read_in_ms_then_seconds() {
        assert_eq!(time_label(845), "845 ms");
        assert_eq!(time_label(12_045), "12.045 s");
    }
}
