//! The payload fingerprint: SHA-256, lowercase hex. A leaf module: the payload computes it, the
//! journal's codec checks stored records against it.

use sha2::{Digest, Sha256};

/// SHA-256 of `bytes`, lowercase hex (64 characters).
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

#[cfg(test)]
mod tests {
    #[test]
    fn sha256_hex_of_the_empty_string() {
        assert_eq!(
            super::sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
