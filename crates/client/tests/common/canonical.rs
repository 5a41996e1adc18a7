//! Golden canonical forms (RFC 8785), shared by the native test (serde_json_canonicalizer) and
//! the browser test (the JS-side canonicaliser of the wasm package), so both paths are held to
//! the same bytes.

/// (input JSON text, canonical JSON text). From RFC 8785 §3.2.2, §3.2.3 and Appendix B, plus
/// cases of this crate's own (key order, escapes, integers beyond 2^53).
pub const CASES: &[(&str, &str)] = &[
    // RFC 8785 §3.2.2.
    (
        r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#,
        "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\"string\":\"\u{20ac}$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}",
    ),
    // RFC 8785 §3.2.3: members sorted by UTF-16 code units.
    (
        r#"{
          "\u20ac": "Euro Sign",
          "\r": "Carriage Return",
          "\ufb33": "Hebrew Letter Dalet With Dagesh",
          "1": "One",
          "\ud83d\ude00": "Emoji: Grinning Face",
          "\u0080": "Control",
          "\u00f6": "Latin Small Letter O With Diaeresis"
        }"#,
        "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u{80}\":\"Control\",\"\u{f6}\":\"Latin Small Letter O With Diaeresis\",\"\u{20ac}\":\"Euro Sign\",\"\u{1f600}\":\"Emoji: Grinning Face\",\"\u{fb33}\":\"Hebrew Letter Dalet With Dagesh\"}",
    ),
    // RFC 8785 Appendix B: numbers.
    ("[0, -0, 5e-324, -5e-324]", "[0,0,5e-324,-5e-324]"),
    ("[1.7976931348623157e308, -1.7976931348623157e308]", "[1.7976931348623157e+308,-1.7976931348623157e+308]"),
    ("[9007199254740992, -9007199254740992]", "[9007199254740992,-9007199254740992]"),
    ("[295147905179352830000, 9.999999999999997e22, 1e23]", "[295147905179352830000,9.999999999999997e+22,1e+23]"),
    ("[0.000001, 9.999999999999997e-7, 1e-7]", "[0.000001,9.999999999999997e-7,1e-7]"),
    ("[1e20, 1e21, 123456789012345680000]", "[100000000000000000000,1e+21,123456789012345680000]"),
    ("[18446744073709551615, -9223372036854775808]", "[18446744073709552000,-9223372036854776000]"),
    // This crate's payloads.
    (r#"{ "currency": "EUR", "amount": 1299 }"#, r#"{"amount":1299,"currency":"EUR"}"#),
    (r#"{"x": 1.0e2, "y": 12.50, "z": -0.0}"#, r#"{"x":100,"y":12.5,"z":0}"#),
    (
        r#"{"b": {"10": 1, "9": 2, "a": [3, {"z": null, "y": {}}]}, "a": []}"#,
        r#"{"a":[],"b":{"10":1,"9":2,"a":[3,{"y":{},"z":null}]}}"#,
    ),
    (
        r#"{"s": "tab\t nul\u0000 del\u007f slash/ quote\" back\\ \u2028"}"#,
        "{\"s\":\"tab\\t nul\\u0000 del\u{7f} slash/ quote\\\" back\\\\ \u{2028}\"}",
    ),
    (r#""just a string""#, r#""just a string""#),
    ("  true ", "true"),
];
