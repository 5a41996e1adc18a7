//! SHA-256, in one place: the payload fingerprint (lowercase hex) the payload computes and the
//! journal's codec checks stored records against, and the server's request fingerprint a
//! key-state answer is checked against. A leaf module.

use idem_store::Fingerprint;
use sha2::{Digest, Sha256};

/// SHA-256 of the concatenation of `parts`: the one instance of sha2's buffering and padding in
/// the package (each inlined call site carried a copy of its own).
#[inline(never)]
fn sha256(parts: &[&[u8]]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().into()
}

/// SHA-256 of `bytes`, lowercase hex (64 characters).
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(sha256(&[bytes]))
}

/// The server's fingerprint of `canonical_json` sent to `operation`: what
/// `idem_store::Fingerprint::of_canonical` computes (the operation's length as 4 big-endian
/// bytes, saturated, then the operation, then the JSON), through [`sha256`] here, because
/// `of_canonical` inlined a second copy of SHA-256's padding and finalisation into the package
/// (about 0.5 KB gzip). The tests hold the two equal.
pub(crate) fn request_fingerprint(operation: &str, canonical_json: &[u8]) -> Fingerprint {
    let len = u32::try_from(operation.len()).unwrap_or(u32::MAX);
    Fingerprint(sha256(&[
        &len.to_be_bytes(),
        operation.as_bytes(),
        canonical_json,
    ]))
}

#[cfg(test)]
mod tests {
    use idem_store::Fingerprint;

    #[test]
    fn sha256_hex_of_the_empty_string() {
        assert_eq!(
            super::sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn request_fingerprints_are_the_stores() {
        let long_operation = "POST /api/".repeat(30);
        let long_body = format!(r#"{{"note":"{}"}}"#, "é".repeat(100));
        for operation in [
            "",
            "POST /api/checkout",
            "PUT /api/ünïcode",
            long_operation.as_str(),
        ] {
            for body in [&b""[..], br#"{"amount":1299}"#, long_body.as_bytes()] {
                assert_eq!(
                    super::request_fingerprint(operation, body),
                    Fingerprint::of_canonical(operation, body),
                    "{operation:?} {body:?}"
                );
            }
        }
    }
}
