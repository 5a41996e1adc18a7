//! A background task that runs a pass every interval until told to stop: the pruner's and
//! the completer's loop, once; and [`Periodic`], an application's own pass (an outbox relay,
//! say) that [`crate::ops::serve_service`] runs the same way. It schedules passes; what a pass
//! does, and whether two servers may run it at once, is the pass's business.

use std::{future::Future, time::Duration};

use futures_util::future::BoxFuture;
use tokio::sync::watch;

/// An application's background pass, run by [`crate::ops::serve_service`] beside the pruner:
/// every `interval` (the first at once), never two at a time, until the service has drained
/// after SIGTERM; a pass in progress then is finished, not cut. Each pass runs as a task of
/// its own, so a pass that panics fails that pass only, and the next one runs on time.
///
/// ```
/// use std::time::Duration;
/// use idem_axum::periodic::Periodic;
///
/// let relay = Periodic::new("relay", Duration::from_secs(1), || async {
///     // read a batch, deliver it, mark what was acknowledged
/// });
/// // `ops::Service { periodic: vec![relay], .. }`
/// # let _ = relay;
/// ```
pub struct Periodic {
    name: &'static str,
    interval: Duration,
    pass: Box<dyn FnMut() -> BoxFuture<'static, ()> + Send>,
}

impl std::fmt::Debug for Periodic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Periodic")
            .field("name", &self.name)
            .field("interval", &self.interval)
            .finish_non_exhaustive()
    }
}

impl Periodic {
    /// `pass`, named `name` in the logs, every `interval`.
    pub fn new<F, Fut>(name: &'static str, interval: Duration, mut pass: F) -> Self
    where
        F: FnMut() -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        Self {
            name,
            interval,
            pass: Box::new(move || Box::pin(pass())),
        }
    }

    /// Run it until `stop` turns true.
    pub(crate) fn spawn(self, stop: watch::Receiver<bool>) -> tokio::task::JoinHandle<()> {
        let Self {
            name,
            interval,
            mut pass,
        } = self;
        every(interval, stop, move || {
            let one = tokio::spawn(pass());
            async move {
                if let Err(e) = one.await {
                    tracing::error!(pass = name, error = %e, "a background pass failed");
                }
            }
        })
    }
}

/// Run `pass` every `interval` (the first at once; a late tick waits a whole interval, never
/// bursts) until `stop` turns true or its sender is dropped. A pass in progress is finished,
/// not cut.
pub(crate) fn every<F, Fut>(
    interval: Duration,
    mut stop: watch::Receiver<bool>,
    mut pass: F,
) -> tokio::task::JoinHandle<()>
where
    F: FnMut() -> Fut + Send + 'static,
    Fut: Future<Output = ()> + Send,
{
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(interval);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                changed = stop.changed() => {
                    if changed.is_err() || *stop.borrow() {
                        return;
                    }
                    continue;
                }
            }
            pass().await;
        }
    })
}
