//! The statements idem-server sends, counted and recorded from sqlx's query log
//! (`sqlx::query` events: `summary`, and the full text in `db.statement` when the summary
//! shortens it), so the database's own limit runs exactly the same SQL text (`raw.rs`
//! through the driver, a pgbench script) instead of a copy that could drift.
//!
//! Only while [`Log::counted`] runs: sqlx formats each statement's log line when some layer
//! wants it, a cost the production binary (logging at `info`) does not pay, so the throughput
//! phases run with the log off and the counts come from counted passes of their own.

use std::sync::{
    atomic::{AtomicBool, AtomicUsize, Ordering},
    Arc, Mutex,
};

use tracing::{
    field::{Field, Visit},
    subscriber::Interest,
    Metadata,
};
use tracing_subscriber::{filter::DynFilterFn, layer::Context, Layer};

const TARGET: &str = "sqlx::query";

/// Counts the statements sqlx sends, and records their text, while [`counted`](Self::counted)
/// runs.
#[derive(Clone, Default)]
pub struct Log {
    on: Arc<AtomicBool>,
    count: Arc<AtomicUsize>,
    recorded: Arc<Mutex<Vec<String>>>,
}

/// Call sites of other targets never reach the log.
fn only_queries(meta: &'static Metadata<'static>) -> Interest {
    if meta.target() == TARGET {
        Interest::sometimes()
    } else {
        Interest::never()
    }
}

impl Log {
    /// The layer, interested in `sqlx::query` events only and only while counting (other
    /// call sites never reach it; the production layers keep their own filter).
    pub fn layer<S>(&self) -> impl Layer<S>
    where
        S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    {
        let on = self.on.clone();
        let filter = DynFilterFn::new(move |meta: &Metadata<'_>, _: &Context<'_, S>| {
            meta.target() == TARGET && on.load(Ordering::Relaxed)
        })
        .with_callsite_filter(only_queries as fn(&'static Metadata<'static>) -> Interest);
        self.clone().with_filter(filter)
    }

    /// Run `f` with the log on: its output, the statements it sent, and their text.
    pub async fn counted<F: std::future::Future>(&self, f: F) -> (F::Output, usize, Vec<String>) {
        self.recorded.lock().expect("log").clear();
        let before = self.count.load(Ordering::SeqCst);
        self.on.store(true, Ordering::SeqCst);
        let out = f.await;
        self.on.store(false, Ordering::SeqCst);
        let sent = self.count.load(Ordering::SeqCst) - before;
        let text = std::mem::take(&mut *self.recorded.lock().expect("log"));
        (out, sent, text)
    }
}

#[derive(Default)]
struct Text {
    summary: String,
    statement: String,
}

impl Visit for Text {
    fn record_str(&mut self, field: &Field, value: &str) {
        match field.name() {
            "summary" => self.summary = value.to_owned(),
            "db.statement" => self.statement = value.trim().to_owned(),
            _ => {}
        }
    }

    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

impl<S: tracing::Subscriber> Layer<S> for Log {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let mut text = Text::default();
        event.record(&mut text);
        let sql = if text.statement.is_empty() {
            text.summary
        } else {
            text.statement
        };
        self.recorded.lock().expect("log").push(sql);
    }
}
