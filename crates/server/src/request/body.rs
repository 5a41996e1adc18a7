//! Reading a request body with a size limit and a deadline, never buffering more than the
//! limit: a body over the limit is refused from its `Content-Length` before any byte is read,
//! or as soon as the bytes read pass the limit (chunked bodies); a body that trickles in
//! slower than the deadline is cut off (the slow-loris defence for bodies; headers have
//! their own timeout in [`crate::serve`]).

use std::time::Duration;

use axum::body::{Body, Bytes};
use http::HeaderMap;
use http_body_util::{BodyExt, LengthLimitError, Limited};
use idem_store::{
    http::{problem_for, HttpResponse},
    RequestError,
};

/// Limits on reading a body.
///
/// ## Default values
/// - `max_bytes`: 65 536 (idem-store's `StoreConfig::DEFAULT_MAX_BODY_BYTES`).
/// - `timeout`: 10 s for the whole body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyLimits {
    /// Largest accepted body, in bytes (413 above).
    pub max_bytes: usize,
    /// Time allowed to receive the whole body (408 after).
    pub timeout: Duration,
}

impl Default for BodyLimits {
    fn default() -> Self {
        Self {
            max_bytes: idem_store::StoreConfig::DEFAULT_MAX_BODY_BYTES,
            timeout: Duration::from_secs(10),
        }
    }
}

/// The whole body, or the problem response to answer instead (413, 408, or 400 for a body
/// the client broke off).
pub async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limits: BodyLimits,
) -> Result<Bytes, HttpResponse> {
    let limit = limits.max_bytes;
    let declared = headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if let Some(len) = declared.filter(|&len| len > limit as u64) {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        return Err(problem_for(&RequestError::BodyTooLarge { len, limit }));
    }
    let read = Limited::new(body, limit).collect();
    match tokio::time::timeout(limits.timeout, read).await {
        Err(_elapsed) => Err(idem_store::http::request_timeout()),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
        Ok(Err(e)) if e.downcast_ref::<LengthLimitError>().is_some() => {
            // The length is unknown (chunked): at least one byte over the limit arrived.
            let len = limit.saturating_add(1);
            Err(problem_for(&RequestError::BodyTooLarge { len, limit }))
        }
        Ok(Err(e)) => {
            tracing::debug!(error = %e, "request body broken off");
            Err(problem_for(&RequestError::InvalidJson {
                line: 0,
                column: 0,
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use futures_util::stream;
    use http::HeaderValue;

    use super::*;

    const LIMITS: BodyLimits = BodyLimits {
        max_bytes: 8,
        timeout: Duration::from_millis(200),
    };

    fn chunked(chunks: Vec<&'static [u8]>) -> Body {
        Body::from_stream(stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok::<_, std::io::Error>(Bytes::from(c))),
        ))
    }

    #[tokio::test]
    async fn reads_a_body_up_to_the_limit() {
        let body = read_body(&HeaderMap::new(), chunked(vec![b"1234", b"5678"]), LIMITS).await;
        assert_eq!(body.unwrap(), Bytes::from_static(b"12345678"));
    }

    #[tokio::test]
    async fn a_declared_length_over_the_limit_is_413_before_reading() {
        let mut headers = HeaderMap::new();
        headers.insert("content-length", HeaderValue::from_static("9"));
        // A body that would never end: only the header can have answered.
        let never = Body::from_stream(stream::pending::<Result<Bytes, std::io::Error>>());
        let err = read_body(&headers, never, LIMITS).await.unwrap_err();
        assert_eq!(err.status, 413);
    }

    #[tokio::test]
    async fn a_chunked_body_over_the_limit_is_413() {
        let err = read_body(&HeaderMap::new(), chunked(vec![b"12345", b"6789"]), LIMITS)
            .await
            .unwrap_err();
        assert_eq!(err.status, 413);
    }

    #[tokio::test]
    async fn a_body_slower_than_the_deadline_is_408() {
        let slow = Body::from_stream(stream::pending::<Result<Bytes, std::io::Error>>());
        let err = read_body(&HeaderMap::new(), slow, LIMITS)
            .await
            .unwrap_err();
        assert_eq!(err.status, 408);
    }
}
