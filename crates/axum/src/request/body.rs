//! Reading a request body with a size limit and a deadline, never buffering more than the
//! limit: a body over the limit is refused from its `Content-Length` before any byte is read,
//! or as soon as the bytes read pass the limit (chunked bodies); a body that trickles in
//! slower than the deadline is cut off (the slow-loris defence for bodies; headers have
//! their own timeout in [`crate::serve`]).
//!
//! A request refused while its client may still be sending (401, 400 for the key, 413) gets a
//! *lingering drain* before the answer, as nginx's lingering close does: what the client still
//! sends is read and dropped, up to [`LINGER_MAX_BYTES`] and [`LINGER_MAX`], so the client
//! finishes its write and reads the refusal. Without it hyper closes a connection whose body
//! was left unread, and a client in the middle of its write gets a broken pipe or a reset
//! instead of the 413 (seen with reqwest: 1 request in 5 of a chunked body over the limit).

use std::time::Duration;

use axum::body::{Body, Bytes};
use http::HeaderMap;
use http_body_util::BodyExt;
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

/// Most bytes a lingering drain reads and drops before the connection is closed anyway.
pub const LINGER_MAX_BYTES: u64 = 1 << 20;

/// Longest a lingering drain waits for the rest of a refused body (or the body timeout, if
/// shorter).
pub const LINGER_MAX: Duration = Duration::from_secs(1);

/// The whole body, or the problem response to answer instead (413, 408, or 400 for a body
/// the client broke off).
pub async fn read_body(
    headers: &HeaderMap,
    mut body: Body,
    limits: BodyLimits,
) -> Result<Bytes, HttpResponse> {
    let limit = limits.max_bytes;
    if let Some(len) = declared_length(headers).filter(|&len| len > limit as u64) {
        discard_body(headers, body, limits).await;
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        return Err(problem_for(&RequestError::BodyTooLarge { len, limit }));
    }
    match tokio::time::timeout(limits.timeout, collect_within(&mut body, limit)).await {
        Err(_elapsed) => Err(idem_store::http::request_timeout()),
        Ok(Ok(collected)) => Ok(collected),
        Ok(Err(Unread::OverLimit)) => {
            // The length is unknown (chunked): at least one byte over the limit arrived.
            linger(body, limits).await;
            let len = limit.saturating_add(1);
            Err(problem_for(&RequestError::BodyTooLarge { len, limit }))
        }
        Ok(Err(Unread::Broken(e))) => {
            tracing::debug!(error = %e, "request body broken off");
            Err(problem_for(&RequestError::InvalidJson {
                line: 0,
                column: 0,
            }))
        }
    }
}

/// Read and drop the body of a request refused without it (401, 400 for the key, 413 from its
/// declared length), so the client can read the refusal: the lingering drain of the module
/// doc, skipped when the declared length is past `LINGER_MAX_BYTES` (the connection closes).
pub async fn discard_body(headers: &HeaderMap, body: Body, limits: BodyLimits) {
    if declared_length(headers).is_some_and(|len| len > LINGER_MAX_BYTES) {
        return;
    }
    linger(body, limits).await;
}

/// Why a body was not read whole.
enum Unread {
    /// More than the limit arrived.
    OverLimit,
    /// The client broke the body off.
    Broken(axum::Error),
}

/// The body's bytes, never buffering past `limit`.
async fn collect_within(body: &mut Body, limit: usize) -> Result<Bytes, Unread> {
    let mut collected = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(data) = frame.map_err(Unread::Broken)?.into_data() else {
            continue; // trailers carry no body bytes
        };
        if collected.len().saturating_add(data.len()) > limit {
            return Err(Unread::OverLimit);
        }
        collected.extend_from_slice(&data);
    }
    Ok(Bytes::from(collected))
}

/// Read and drop what is left of `body`, within [`LINGER_MAX_BYTES`] and [`LINGER_MAX`].
async fn linger(mut body: Body, limits: BodyLimits) {
    let drain = async {
        let mut dropped = 0u64;
        while let Some(Ok(frame)) = body.frame().await {
            if let Ok(data) = frame.into_data() {
                dropped = dropped.saturating_add(data.len() as u64);
                if dropped > LINGER_MAX_BYTES {
                    return;
                }
            }
        }
    };
    let _ = tokio::time::timeout(LINGER_MAX.min(limits.timeout), drain).await;
}

fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok())
}

#[cfg(test)]
mod tests {
    use std::sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    };

    use futures_util::{stream, StreamExt};
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

    /// A body that counts the bytes it hands out.
    fn counted(chunks: Vec<&'static [u8]>) -> (Body, Arc<AtomicUsize>) {
        let read = Arc::new(AtomicUsize::new(0));
        let seen = read.clone();
        let body = Body::from_stream(stream::iter(chunks).map(move |c| {
            seen.fetch_add(c.len(), Ordering::Relaxed);
            Ok::<_, std::io::Error>(Bytes::from_static(c))
        }));
        (body, read)
    }

    #[tokio::test]
    async fn a_refused_body_is_drained_so_the_client_can_read_the_refusal() {
        let (body, read) = counted(vec![b"1234", b"5678"]);
        discard_body(&HeaderMap::new(), body, LIMITS).await;
        assert_eq!(read.load(Ordering::Relaxed), 8);
        // A chunked body over the limit is drained to its end too, then refused.
        let (body, read) = counted(vec![b"12345", b"6789", b"abc"]);
        let err = read_body(&HeaderMap::new(), body, LIMITS)
            .await
            .unwrap_err();
        assert_eq!(err.status, 413);
        assert_eq!(read.load(Ordering::Relaxed), 12);
    }

    #[tokio::test]
    async fn the_drain_is_bounded_in_bytes_and_time() {
        let mut huge = HeaderMap::new();
        huge.insert("content-length", HeaderValue::from_static("1048577"));
        let (body, read) = counted(vec![b"1234"]);
        discard_body(&huge, body, LIMITS).await;
        assert_eq!(
            read.load(Ordering::Relaxed),
            0,
            "a declared length past the bound is not read"
        );
        let endless = Body::from_stream(stream::repeat_with(|| {
            Ok::<_, std::io::Error>(Bytes::from(vec![0u8; 64 * 1024]))
        }));
        discard_body(&HeaderMap::new(), endless, LIMITS).await; // returns: bytes bound
        let never = Body::from_stream(stream::pending::<Result<Bytes, std::io::Error>>());
        discard_body(&HeaderMap::new(), never, LIMITS).await; // returns: time bound
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
