//! A background task that runs a pass every interval until told to stop: the pruner's and
//! the completer's loop, once; and [`Periodic`], an application's own pass (an outbox relay,
//! say) that [`crate::ops::serve_service`] runs the same way. It schedules passes; what a pass
//! does, and whether two servers may run it at once, is the pass's business.

use std::{future::Future, time::Duration};

use futures_util::future::BoxFuture;
use tokio::sync::watch;

/// An application's background pass, run by [`crate::ops::serve_service`] beside the pruner:
/// every `interval` (the first at once), never two at a time, until the service has drained
/// after SIGTERM. Unlike the pruner's, a pass in progress then is **stopped where it is**
/// (its task aborted), so a pass that waits on another system (a relay on a slow consumer)
/// cannot hold the shutdown past its deadline: a pass must leave nothing half-done at any
/// await, as a handler must (the relay: a message acknowledged but not yet marked is sent
/// again). Each pass runs as a task of its own, so a pass that panics fails that pass only,
/// and the next one runs on time.
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

    /// Run it until `stop` turns true (or its sender is dropped), cutting a pass in progress.
    pub(crate) fn spawn(self, mut stop: watch::Receiver<bool>) -> tokio::task::JoinHandle<()> {
        let Self {
            name,
            interval,
            mut pass,
        } = self;
        tokio::spawn(async move {
            let mut ticks = ticks(interval);
            loop {
                tokio::select! {
                    _ = ticks.tick() => {}
                    () = stopped(&mut stop) => return,
                }
                let mut one = tokio::spawn(pass());
                tokio::select! {
                    joined = &mut one => if let Err(e) = joined {
                        tracing::error!(pass = name, error = %e, "a background pass failed");
                    },
                    () = stopped(&mut stop) => {
                        one.abort();
                        return;
                    }
                }
            }
        })
    }
}

/// A tick every `interval`, the first at once; a late tick waits a whole interval, never bursts.
fn ticks(interval: Duration) -> tokio::time::Interval {
    let mut ticks = tokio::time::interval(interval);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticks
}

/// Returns once `stop` is true or its sender is gone.
async fn stopped(stop: &mut watch::Receiver<bool>) {
    // An error means the sender was dropped: stop as well.
    let _ = stop.wait_for(|stopped| *stopped).await;
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
        let mut ticks = ticks(interval);
        loop {
            tokio::select! {
                _ = ticks.tick() => {}
                () = stopped(&mut stop) => return,
            }
            pass().await;
        }
    })
}

#[cfg(test)]
mod tests {
    use std::sync::{
        atomic::{AtomicU32, Ordering},
        Arc,
    };

    use super::*;

    #[tokio::test]
    async fn passes_run_on_time_survive_a_panic_and_a_stuck_one_is_cut_at_stop() {
        let runs = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&runs);
        let periodic = Periodic::new("test", Duration::from_millis(10), move || {
            let run = counted.fetch_add(1, Ordering::SeqCst);
            async move {
                match run {
                    0 => panic!("the first pass fails"),
                    1 => {}
                    // Stuck, as a pass waiting on a system that never answers.
                    _ => std::future::pending().await,
                }
            }
        });
        let (stop, stopped) = watch::channel(false);
        let task = periodic.spawn(stopped);
        tokio::time::timeout(Duration::from_secs(5), async {
            while runs.load(Ordering::SeqCst) < 3 {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await
        .expect("a panicking pass does not stop the next ones");
        stop.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(5), task)
            .await
            .expect("a stuck pass does not hold the stop")
            .unwrap();
        assert_eq!(
            runs.load(Ordering::SeqCst),
            3,
            "no pass after the stuck one"
        );
    }
}
