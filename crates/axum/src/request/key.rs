//! The `Idempotency-Key` header, read with `idem_store::http::parse_key_header`.

use http::HeaderMap;
use idem_store::{http::parse_key_header, RequestError};

/// The request's key: `Ok(None)` without the header, `Ok(Some(key))` for one valid header,
/// and an error (a 400) for a malformed value, a value that is not text, or the header
/// sent twice (two keys for one request cannot both be honoured).
pub fn idempotency_key(headers: &HeaderMap) -> Result<Option<String>, RequestError> {
    let mut values = headers.get_all(idem_store::http::IDEMPOTENCY_KEY).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(RequestError::MalformedHeader);
    }
    let text = value.to_str().map_err(|_| {
        let index = value
            .as_bytes()
            .iter()
            .position(|b| !(0x20..=0x7e).contains(b))
            .unwrap_or(0);
        RequestError::KeyNotPrintable { index }
    })?;
    parse_key_header(text).map(|key| Some(key.into_owned()))
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(values: &[&[u8]]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append("idempotency-key", HeaderValue::from_bytes(v).unwrap());
        }
        map
    }

    #[test]
    fn reads_both_spellings() {
        assert_eq!(
            idempotency_key(&headers(&[b"\"k-1\""])),
            Ok(Some("k-1".into()))
        );
        assert_eq!(idempotency_key(&headers(&[b"k-1"])), Ok(Some("k-1".into())));
        assert_eq!(idempotency_key(&headers(&[])), Ok(None));
    }

    #[test]
    fn rejects_two_headers_and_non_text() {
        assert_eq!(
            idempotency_key(&headers(&[b"a", b"b"])),
            Err(RequestError::MalformedHeader)
        );
        assert_eq!(
            idempotency_key(&headers(&[b"ab\xff"])),
            Err(RequestError::KeyNotPrintable { index: 2 })
        );
        assert_eq!(
            idempotency_key(&headers(&[b"\"open"])),
            Err(RequestError::MalformedHeader)
        );
    }
}
