//! A small JSON reader: what the SDK reads its journal records, problem details and key-state
//! answers with (idem-client re-exports it as `idem_client::Json`), and what idem-checkout reads
//! the 201 receipt with, so the simulator and the demo read it without serde_json.
//!
//! Why not serde_json: a `wasm32` binary that calls `serde_json::from_slice` carries its number
//! parsing, floats included (its lexical tables and big-integer arithmetic): 19 KB of the demo's
//! 284 KB gzip, a third of the SDK's `.wasm` before it had this reader. This reader accepts
//! exactly what serde_json accepts (RFC 8259; lone surrogates, raw control characters in
//! strings and nesting deeper than 128 are errors; the last of duplicate members wins) and
//! keeps numbers only as far as its readers need them: the integers serde_json keeps as
//! integers (see [`Json::Number`]).
//! It writes nothing: writers of JSON here either use serde_json (natively) or a few lines of
//! their own (the SDK's journal).

/// A parsed JSON value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Json {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number that is not a negative integer: `Some` for an integer literal (no fraction, no
    /// exponent) that fits a `u64`, which serde_json keeps as an integer, `None` for any other
    /// valid number. [`Json::as_u64`] and [`Json::as_i64`] return what serde_json's functions
    /// of the same names return.
    Number(Option<u64>),
    /// A negative integer literal that fits an `i64` (`i64::MIN..=-1`), which serde_json keeps
    /// as an integer (`-0` and anything below `i64::MIN` it reads as a float: [`Json::Number`]
    /// with `None`). A variant of its own, not a field of [`Json::Number`]: the SDK reads only
    /// non-negative integers, and a nested enum there cost its `.wasm` bytes at every read.
    Negative(i64),
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

    /// The member `name` of an object if it occurs exactly once (as serde's derived
    /// `Deserialize` wants a struct's field: a repeated one is an error there).
    pub fn get_once(&self, name: &str) -> Option<&Json> {
        let mut found = self.members().iter().filter(|(k, _)| k == name);
        let (_, value) = found.next()?;
        found.next().is_none().then_some(value)
    }

    /// An object's members (none if this is not an object).
    fn members(&self) -> &[(String, Json)] {
        match self {
            Json::Object(members) => members,
            _ => &[],
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
            Json::Number(Some(n)) => Some(*n),
            _ => None,
        }
    }

    /// An integer that fits an `i64` (see [`Json::Number`]).
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Json::Number(Some(n)) => i64::try_from(*n).ok(),
            Json::Negative(n) => Some(*n),
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
        // The magnitude while it fits a u64 (serde_json reads a longer one as a float).
        let mut magnitude: Option<u64> = Some(0);
        match self.next()? {
            b'0' => {}
            d @ b'1'..=b'9' => {
                magnitude = Some(u64::from(d - b'0'));
                while let Some(d @ b'0'..=b'9') = self.peek() {
                    self.pos += 1;
                    magnitude = magnitude
                        .and_then(|v| v.checked_mul(10))
                        .and_then(|v| v.checked_add(u64::from(d - b'0')));
                }
            }
            _ => return None,
        }
        let mut integer = true;
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
        let magnitude = magnitude.filter(|_| integer);
        if !negative {
            return Some(Json::Number(magnitude));
        }
        // serde_json's test: the negation is below zero for 1..=2^63 (2^63 wraps to i64::MIN),
        // and 0 or anything larger is a float.
        match magnitude.map(|m| (m as i64).wrapping_neg()) {
            Some(n) if n < 0 => Some(Json::Negative(n)),
            _ => Some(Json::Number(None)),
        }
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

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(target_arch = "wasm32")]
    use wasm_bindgen_test::wasm_bindgen_test as test;

    /// serde_json's view of `text`, in the terms of [`Json`].
    fn reference(text: &str) -> Option<Json> {
        fn convert(v: serde_json::Value) -> Json {
            match v {
                serde_json::Value::Null => Json::Null,
                serde_json::Value::Bool(b) => Json::Bool(b),
                serde_json::Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                    (None, Some(negative)) => Json::Negative(negative),
                    (unsigned, _) => Json::Number(unsigned),
                },
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
            "-1",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775807",
            "-9223372036854775808",
            "-9223372036854775809",
            "-18446744073709551615",
            "-18446744073709551616",
            "1.0",
            "-1.0",
            "1e2",
            "-1e2",
            "1E+2",
            "1e-2",
            "0.5",
            "-0.0",
            "01",
            "-01",
            "1.",
            ".5",
            "-",
            "--1",
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
            "[-5, 7, -0]",
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
    fn integers_read_as_serde_json_reads_them() {
        for text in [
            "0",
            "-0",
            "7",
            "-7",
            "9223372036854775807",
            "9223372036854775808",
            "-9223372036854775808",
            "-9223372036854775809",
            "18446744073709551615",
            "18446744073709551616",
            "1.0",
            "1e3",
        ] {
            let ours = Json::parse(text).unwrap();
            let theirs: serde_json::Value = serde_json::from_str(text).unwrap();
            assert_eq!(ours.as_u64(), theirs.as_u64(), "{text} as u64");
            assert_eq!(ours.as_i64(), theirs.as_i64(), "{text} as i64");
        }
    }

    #[test]
    fn a_member_once_or_not_at_all() {
        let v = Json::parse(r#"{"a":1,"b":2,"a":3}"#).unwrap();
        let n = |n| Json::Number(Some(n));
        assert_eq!(v.get("a"), Some(&n(3)), "the last wins");
        assert_eq!(v.get_once("a"), None, "repeated");
        assert_eq!(v.get_once("b"), Some(&n(2)));
        assert_eq!(v.get_once("c"), None);
        assert_eq!(Json::parse("[1]").unwrap().get_once("a"), None);
    }
}
