//! A small JSON reader and writer for the journal's records and problem details; the reader is
//! public ([`Json`]) for Rust pages that read a server's JSON next to the SDK (the demo's
//! real-server mode reads idem-server's events and views with it).
//!
//! Why not serde_json here: these are the only JSON texts the state machine and the journal
//! read or write, and in the browser package serde_json (with its float parsing and
//! formatting) was a third of the `.wasm`. This reader accepts exactly what serde_json accepts
//! (RFC 8259; lone surrogates, raw control characters in strings and nesting deeper than 128
//! are errors; the last of duplicate members wins) and keeps numbers only as far as the
//! journal needs them: non-negative integers that fit a `u64`. The writer escapes strings as
//! serde_json does, so records are byte-for-byte what `serde_json::to_string` wrote before
//! (the native tests compare both on tricky input).

/// A parsed JSON value (public so that a Rust page driving the SDK, the demo's real-server mode,
/// reads a server's JSON with the reader the crate already carries, not a second parser).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number: `Some` for a non-negative integer literal (no fraction, no exponent) that fits a
    /// `u64` (what serde_json's `as_u64` returns), `None` for any other valid number.
    Number(Option<u64>),
    /// A string, unescaped.
    String(String),
    /// An array.
    Array(Vec<Json>),
    /// Members in text order; duplicates are kept and [`Json::get`] returns the last one.
    Object(Vec<(String, Json)>),
}

/// serde_json's default recursion limit.
const MAX_DEPTH: usize = 128;

impl Json {
    /// Parses `text` as one JSON value (surrounding whitespace allowed); `None` if it is not.
    pub fn parse(text: &str) -> Option<Json> {
        let mut parser = Parser {
            bytes: text.as_bytes(),
            pos: 0,
        };
        let value = parser.value(MAX_DEPTH)?;
        parser.skip_ws();
        (parser.pos == parser.bytes.len()).then_some(value)
    }

    /// The member `name` of an object (the last one if repeated).
    pub fn get(&self, name: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().rev().find(|(k, _)| k == name).map(|m| &m.1),
            _ => None,
        }
    }

    /// The text of a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// A non-negative integer that fits a `u64` (see [`Json::Number`]).
    pub fn as_u64(&self) -> Option<u64> {
        match self {
            Json::Number(n) => *n,
            _ => None,
        }
    }

    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Json::Object(_))
    }
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &[u8], value: Json) -> Option<Json> {
        let end = self.pos.checked_add(word.len())?;
        (self.bytes.get(self.pos..end)? == word).then(|| {
            self.pos = end;
            value
        })
    }

    fn value(&mut self, depth: usize) -> Option<Json> {
        self.skip_ws();
        match self.peek()? {
            b'n' => self.literal(b"null", Json::Null),
            b't' => self.literal(b"true", Json::Bool(true)),
            b'f' => self.literal(b"false", Json::Bool(false)),
            b'"' => self.string().map(Json::String),
            b'-' | b'0'..=b'9' => self.number(),
            b'[' => {
                let depth = depth.checked_sub(1)?;
                self.pos += 1;
                let mut items = Vec::new();
                self.skip_ws();
                if self.peek() == Some(b']') {
                    self.pos += 1;
                    return Some(Json::Array(items));
                }
                loop {
                    items.push(self.value(depth)?);
                    self.skip_ws();
                    match self.next()? {
                        b',' => {}
                        b']' => return Some(Json::Array(items)),
                        _ => return None,
                    }
                }
            }
            b'{' => {
                let depth = depth.checked_sub(1)?;
                self.pos += 1;
                let mut members = Vec::new();
                self.skip_ws();
                if self.peek() == Some(b'}') {
                    self.pos += 1;
                    return Some(Json::Object(members));
                }
                loop {
                    self.skip_ws();
                    if self.peek()? != b'"' {
                        return None;
                    }
                    let name = self.string()?;
                    self.skip_ws();
                    if self.next()? != b':' {
                        return None;
                    }
                    let value = self.value(depth)?;
                    members.push((name, value));
                    self.skip_ws();
                    match self.next()? {
                        b',' => {}
                        b'}' => return Some(Json::Object(members)),
                        _ => return None,
                    }
                }
            }
            _ => None,
        }
    }

    /// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    fn number(&mut self) -> Option<Json> {
        let negative = self.peek() == Some(b'-');
        if negative {
            self.pos += 1;
        }
        let mut value: Option<u64> = Some(0);
        match self.next()? {
            b'0' => {}
            d @ b'1'..=b'9' => {
                value = Some(u64::from(d - b'0'));
                while let Some(d @ b'0'..=b'9') = self.peek() {
                    self.pos += 1;
                    value = value
                        .and_then(|v| v.checked_mul(10))
                        .and_then(|v| v.checked_add(u64::from(d - b'0')));
                }
            }
            _ => return None,
        }
        let mut integer = !negative;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            integer = false;
            self.digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            integer = false;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.digits()?;
        }
        Some(Json::Number(if integer { value } else { None }))
    }

    /// One or more ASCII digits.
    fn digits(&mut self) -> Option<()> {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        (self.pos > start).then_some(())
    }

    /// A string literal starting at the opening quote.
    fn string(&mut self) -> Option<String> {
        self.pos += 1; // the opening quote
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // The input is a &str and we stopped on an ASCII byte, so this is a char boundary.
            out.push_str(core::str::from_utf8(&self.bytes[start..self.pos]).ok()?);
            match self.next()? {
                b'"' => return Some(out),
                b'\\' => {
                    let c = match self.next()? {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => self.unicode_escape()?,
                        _ => return None,
                    };
                    out.push(c);
                }
                _ => return None, // a raw control character
            }
        }
    }

    /// The character of a `\uXXXX` escape (after the `u`), joining a surrogate pair.
    fn unicode_escape(&mut self) -> Option<char> {
        let first = self.hex4()?;
        match first {
            0xD800..=0xDBFF => {
                if self.next()? != b'\\' || self.next()? != b'u' {
                    return None;
                }
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return None;
                }
                char::from_u32(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))
            }
            0xDC00..=0xDFFF => None,
            _ => char::from_u32(first),
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let mut n = 0;
        for _ in 0..4 {
            let digit = char::from(self.next()?).to_digit(16)?;
            n = n * 16 + digit;
        }
        Some(n)
    }
}

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

    /// serde_json's view of `text`, in the terms of [`Json`].
    fn reference(text: &str) -> Option<Json> {
        fn convert(v: serde_json::Value) -> Json {
            match v {
                serde_json::Value::Null => Json::Null,
                serde_json::Value::Bool(b) => Json::Bool(b),
                serde_json::Value::Number(n) => Json::Number(n.as_u64()),
                serde_json::Value::String(s) => Json::String(s),
                serde_json::Value::Array(a) => Json::Array(a.into_iter().map(convert).collect()),
                serde_json::Value::Object(o) => {
                    Json::Object(o.into_iter().map(|(k, v)| (k, convert(v))).collect())
                }
            }
        }
        serde_json::from_str(text).ok().map(convert)
    }

    /// Our parse with duplicate members collapsed (last wins) and members sorted, as serde_json's
    /// map holds them.
    fn normalised(text: &str) -> Option<Json> {
        fn norm(v: Json) -> Json {
            match v {
                Json::Array(a) => Json::Array(a.into_iter().map(norm).collect()),
                Json::Object(members) => {
                    let mut map = std::collections::BTreeMap::new();
                    for (k, v) in members {
                        map.insert(k, norm(v));
                    }
                    Json::Object(map.into_iter().collect())
                }
                other => other,
            }
        }
        Json::parse(text).map(norm)
    }

    #[test]
    fn agrees_with_serde_json() {
        let deep_ok = format!("{}{}", "[".repeat(127), "]".repeat(127));
        let too_deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        let cases = [
            "null",
            " true ",
            "false",
            "0",
            "-0",
            "1",
            "18446744073709551615",
            "18446744073709551616",
            "-1",
            "1.0",
            "1e2",
            "1E+2",
            "1e-2",
            "0.5",
            "01",
            "1.",
            ".5",
            "-",
            "1e",
            "+1",
            r#""""#,
            r#""a\"b\\c\/d\b\f\n\r\t""#,
            r#""\u00e9\u20ac\ud83d\ude00""#,
            r#""\ud83d""#,
            r#""\ude00""#,
            r#""\ud83dx""#,
            r#""\u12""#,
            r#""\x""#,
            "\"tab\there\"",
            "\"é€😀\"",
            "[]",
            "[1,2,[3,{}]]",
            "[1,]",
            "[,1]",
            "{}",
            r#"{"a":1,"b":[true,null],"c":{"d":"e"}}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"a":1,}"#,
            r#"{a:1}"#,
            r#"{"a" 1}"#,
            "{\"a\":1} x",
            "nul",
            "truex",
            "",
            "   ",
            &deep_ok,
            &too_deep,
        ];
        for text in cases {
            assert_eq!(normalised(text), reference(text), "{text:?}");
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
