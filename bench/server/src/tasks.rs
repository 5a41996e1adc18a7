//! The closed loop the in-process drivers share (`direct`, `payco`): `c` tasks take request
//! numbers `0..n` from one counter, each running its request to the end before taking the
//! next, so `c` requests are in flight until the last ones.

use std::{
    future::Future,
    sync::{
        atomic::{AtomicUsize, Ordering},
        Arc,
    },
};

/// Run `request(i)` for every `i` in `0..n`, `c` at a time; returns when all have ended.
pub async fn numbered<F, Fut>(n: usize, c: usize, request: F)
where
    F: Fn(usize) -> Fut + Clone + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    let next = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = (0..c)
        .map(|_| {
            let (next, request) = (next.clone(), request.clone());
            tokio::spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n {
                        return;
                    }
                    request(i).await;
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("a request task");
    }
}
