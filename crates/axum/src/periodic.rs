//! A background task that runs a pass every interval until told to stop: the pruner's and
//! the completer's loop, once.

use std::{future::Future, time::Duration};

use tokio::sync::watch;

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
