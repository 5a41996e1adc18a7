//! A small JSON writer for the journal's records, matching serde_json's bytes, and the helpers
//! the JS package's canonicaliser shares with it. The reader is idem-store's
//! [`idem_store::json::Json`] (re-exported as [`crate::Json`]), which idem-checkout reads the
//! receipt with too.
//!
//! Why not serde_json here: these are the only JSON texts the state machine and the journal
//! write, and in the browser package serde_json (with its float formatting) was a third of the
//! `.wasm`. The writer escapes strings as serde_json does, so records are byte-for-byte what
//! `serde_json::to_string` wrote before (the native tests compare both on tricky input).

/// Appends `s` as a JSON string literal, escaped as serde_json does: `"`, `\` and the control
/// characters (short forms for `\b \t \n \f \r`, else `\u00xx`); everything else verbatim.
pub(crate) fn write_str(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape: &str = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            0x08 => "\\b",
            0x09 => "\\t",
            0x0A => "\\n",
            0x0C => "\\f",
            0x0D => "\\r",
            0x00..=0x1F => "",
            _ => continue,
        };
        // `i` is an ASCII byte, hence a char boundary (`get` keeps panics out of the binary).
        out.push_str(s.get(start..i).unwrap_or_default());
        if escape.is_empty() {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xF)]));
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(s.get(start..).unwrap_or_default());
    out.push('"');
}

// Used by the JS package's canonicaliser (wasm32, `js-api`) and the tests.
#[cfg_attr(not(all(target_arch = "wasm32", feature = "js-api")), allow(dead_code))]
/// Whether `a` sorts before `b` by UTF-16 code units (RFC 8785 §3.2.3), without encoding either
/// (`encode_utf16` and a `Vec<u16>` per member cost the package 184 B gzip). Character
/// by character, UTF-16 order is code point order except that a supplementary character (two
/// units, the first 0xD800..=0xDBFF) sorts before U+E000..=U+FFFF; `utf16_key` keeps that order.
pub(crate) fn utf16_less(a: &str, b: &str) -> bool {
    a.chars().map(utf16_key).lt(b.chars().map(utf16_key))
}

#[cfg_attr(not(all(target_arch = "wasm32", feature = "js-api")), allow(dead_code))]
/// `c`'s place in UTF-16 order: below U+D800 itself, then the supplementary characters, then
/// U+E000..=U+FFFF.
fn utf16_key(c: char) -> u32 {
    match u32::from(c) {
        c @ 0x1_0000.. => c - 0x1_0000 + 0xD800,
        c @ 0xE000.. => c + 0x10_0000,
        c => c,
    }
}

#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))] // used by the wasm32 code
/// Sorts `items` by `less` (stable insertion sort by swaps: a few dozen bytes of wasm per use,
/// where `slice::sort_by` costs kilobytes and `rotate_right` close to one per element type; the
/// lists sorted here are short).
pub(crate) fn sort_by<T>(items: &mut [T], less: impl Fn(&T, &T) -> bool) {
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && less(&items[j], &items[j - 1]) {
            items.swap(j - 1, j);
            j -= 1;
        }
    }
}

/// Appends `n` in decimal (without `core::fmt`).
pub(crate) fn write_u64(out: &mut String, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    out.push_str(core::str::from_utf8(&buf[i..]).unwrap_or_default());
}

/// `n` in decimal.
pub(crate) fn u64_string(n: u64) -> String {
    let mut out = String::new();
    write_u64(&mut out, n);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Json;

    #[test]
    fn utf16_order_is_encode_utf16s() {
        let names = [
            "",
            "a",
            "ab",
            "b",
            "\u{7f}",
            "\u{80}",
            "é",
            "\u{d7ff}",
            "\u{e000}",
            "\u{fb33}",
            "\u{ffff}",
            "\u{10000}",
            "\u{1f600}",
            "\u{1f600}a",
            "\u{10ffff}",
            "a\u{1f600}",
            "a\u{ffff}",
            "\u{20ac}",
            "\u{1d11e}",
            "\u{ff61}x",
        ];
        for a in names {
            for b in names {
                let reference = a.encode_utf16().lt(b.encode_utf16());
                assert_eq!(utf16_less(a, b), reference, "{a:?} < {b:?}");
            }
        }
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        let all_low: String = (0u8..0x20).map(char::from).collect();
        for s in [
            "",
            "plain",
            "quote \" backslash \\ slash /",
            "é€😀 \u{7f}",
            &all_low,
        ] {
            let mut ours = String::new();
            write_str(&mut ours, s);
            assert_eq!(ours, serde_json::to_string(s).unwrap());
            assert_eq!(Json::parse(&ours), Some(Json::String(s.to_owned())));
        }
        let mut words = ["b", "a", "c", "a", "", "ab", "B"].map(|w| (w, w.len()));
        sort_by(&mut words, |x, y| x.0 < y.0);
        assert_eq!(words.map(|w| w.0), ["", "B", "a", "a", "ab", "b", "c"]);
        let mut by_len = ["bb", "a", "cc", "d", ""];
        sort_by(&mut by_len, |x, y| x.len() < y.len());
        assert_eq!(by_len, ["", "a", "d", "bb", "cc"]); // stable
        for n in [0, 7, 10, 1299, u64::from(u32::MAX), u64::MAX] {
            assert_eq!(u64_string(n), n.to_string());
        }
    }
}
