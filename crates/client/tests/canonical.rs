//! The native canonicaliser (serde_json_canonicalizer) against the shared golden table; the
//! browser test runs the JS-side canonicaliser against the same table.

mod common;

use idem_client::CanonicalPayload;

#[test]
fn serde_json_canonicalizer_gives_the_golden_bytes() {
    for (input, expected) in common::canonical::CASES {
        let value: serde_json::Value = serde_json::from_str(input).unwrap();
        let payload = CanonicalPayload::new(&value).unwrap();
        assert_eq!(payload.json, *expected, "{input}");
        assert_eq!(
            payload,
            CanonicalPayload::from_canonical(expected.to_string())
        );
    }
}
