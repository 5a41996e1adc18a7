//! Serving a router on a TCP listener with the connection-level timeouts axum's own `serve`
//! does not expose: a client that sends its request headers too slowly, or keeps a
//! connection idle between requests, is disconnected after `header_read_timeout` (hyper
//! starts that timer whenever it waits for a request head, so it is also the idle timeout).
//! A slow body is the handler's business ([`crate::request::read_body`]).

use std::{future::Future, time::Duration};

use axum::{extract::Request, Router};
use hyper::body::Incoming;
use hyper_util::{
    rt::{TokioIo, TokioTimer},
    server::graceful::GracefulShutdown,
    service::TowerToHyperService,
};
use tokio::net::TcpListener;
use tower::ServiceExt;

/// Connection limits.
///
/// ## Default values
/// - `header_read_timeout`: 5 s to send a request's headers, counted from the moment the
///   server waits for them (so also the longest idle time between requests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnLimits {
    /// See the type docs.
    pub header_read_timeout: Duration,
}

impl Default for ConnLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(5),
        }
    }
}

/// Serve `router` on `listener` until the process ends. Each connection runs in its own
/// task; a connection error ends that connection only.
pub async fn serve(listener: TcpListener, router: Router, limits: ConnLimits) {
    serve_until(
        listener,
        router,
        limits,
        std::future::pending(),
        Duration::MAX,
    )
    .await;
}

/// Serve until `shutdown` resolves, then stop accepting, let the connections finish the
/// requests they are in (each closes after its current response) for at most `drain`, and
/// return whether all of them did ([`crate::ops::shutdown`] has the why).
pub async fn serve_until(
    listener: TcpListener,
    router: Router,
    limits: ConnLimits,
    shutdown: impl Future<Output = ()>,
    drain: Duration,
) -> bool {
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little rather than spin.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let router = router.clone();
        let service = TowerToHyperService::new(
            router.map_request(|req: Request<Incoming>| req.map(axum::body::Body::new)),
        );
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_read_timeout)
            .serve_connection(TokioIo::new(stream), service);
        let watched = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = watched.await {
                tracing::debug!(%peer, error = %e, "connection closed");
            }
        });
    }
    drop(listener);
    tokio::time::timeout(drain, graceful.shutdown())
        .await
        .is_ok()
}
