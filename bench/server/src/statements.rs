//! The statements of one keyed first request, as idem-server sends them: counted and
//! recorded from sqlx's query log (`sqlx::query` events: `summary`, and the full text in
//! `db.statement` when the summary shortens it), so the database's own limit can be measured
//! with exactly the same SQL text (`raw.rs` through the driver, `pgbench.rs` as a pgbench
//! script) instead of a copy that could drift.

use std::sync::{
    atomic::{AtomicBool, AtomicUsize, Ordering},
    Arc, Mutex,
};

use tracing::field::{Field, Visit};
use tracing_subscriber::{layer::Context, Layer};

/// Counts every statement sqlx sends, and records their text while `recording` is on.
#[derive(Clone, Default)]
pub struct Log {
    pub count: Arc<AtomicUsize>,
    recording: Arc<AtomicBool>,
    recorded: Arc<Mutex<Vec<String>>>,
}

impl Log {
    /// Record the text of the statements `f` sends.
    pub async fn record<F: std::future::Future>(&self, f: F) -> (F::Output, Vec<String>) {
        self.recorded.lock().expect("log").clear();
        self.recording.store(true, Ordering::SeqCst);
        let out = f.await;
        self.recording.store(false, Ordering::SeqCst);
        (out, std::mem::take(&mut *self.recorded.lock().expect("log")))
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
        if event.metadata().target() != "sqlx::query" {
            return;
        }
        self.count.fetch_add(1, Ordering::Relaxed);
        if self.recording.load(Ordering::Relaxed) {
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
}
