//! The payload fingerprint: SHA-256, lowercase hex. A leaf module: the payload computes it, the
//! journal's codec checks stored records against it.

/// SHA-256 of `bytes`, lowercase hex (64 characters), through idem-store's one SHA-256
/// ([`idem_store::sha256`], which the server's request fingerprint the SDK checks key-state
/// answers against uses too: one copy of sha2's finalisation in the package).
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(idem_store::sha256(&[bytes]))
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
