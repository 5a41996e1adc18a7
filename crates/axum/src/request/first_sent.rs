//! The `Repeatability-First-Sent` header: when the client first sent this operation, which
//! the store's expired-key guard compares with the route's retention (`idem_store::first_sent`).

use http::HeaderMap;
use idem_store::{first_sent, RequestError};

/// The request's first-sent time (ms since the Unix epoch): `Ok(None)` without the header,
/// `Ok(Some(ms))` for one HTTP-date, and [`RequestError::MalformedFirstSent`] (a 400) for a
/// value that is not one, is not text, or comes twice (a request has one first send).
pub fn first_sent(headers: &HeaderMap) -> Result<Option<u64>, RequestError> {
    let mut values = headers.get_all(first_sent::HEADER).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(RequestError::MalformedFirstSent);
    }
    let text = value
        .to_str()
        .map_err(|_| RequestError::MalformedFirstSent)?;
    first_sent::parse(text).map(Some)
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn headers(values: &[&[u8]]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for v in values {
            map.append(
                "repeatability-first-sent",
                HeaderValue::from_bytes(v).unwrap(),
            );
        }
        map
    }

    #[test]
    fn reads_one_http_date_and_refuses_anything_else() {
        assert_eq!(
            first_sent(&headers(&[b"Sun, 06 Nov 1994 08:49:37 GMT"])),
            Ok(Some(784_111_777_000))
        );
        assert_eq!(first_sent(&headers(&[])), Ok(None));
        for bad in [
            &[&b"784111777"[..]][..],
            &[
                b"Sun, 06 Nov 1994 08:49:37 GMT",
                b"Sun, 06 Nov 1994 08:49:37 GMT",
            ],
            &[b"Sun, 06 Nov 1994 08:49:37 GMT\xff"],
        ] {
            assert_eq!(
                first_sent(&headers(bad)),
                Err(RequestError::MalformedFirstSent)
            );
        }
    }
}
