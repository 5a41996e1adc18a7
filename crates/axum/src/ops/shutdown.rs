//! Graceful shutdown: on SIGTERM (what a deploy sends) or Ctrl-C the service stops
//! accepting connections, `/readyz` turns 503, and requests already running get up to
//! [`OpsConfig::drain`](super::OpsConfig::drain) to commit (each connection closes after
//! its current response). Then the pruner stops and the pool closes.
//!
//! Why it matters: a request killed between its claim and its commit leaves a claim in
//! flight, and every retry of that key gets 409 until the lease (`lock_ms`) runs out. With
//! a drain, the request commits and the retry gets its replay at once. A request still
//! running at the deadline is cut off; its claim is taken over by the next retry after
//! `lock_ms` (on this server after a restart, or on another), so nothing is lost either way.

/// Resolves on SIGTERM or Ctrl-C (SIGINT).
pub async fn signal() {
    let interrupt = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => tracing::info!("interrupt: shutting down"),
        () = terminate => tracing::info!("SIGTERM: shutting down"),
    }
}
