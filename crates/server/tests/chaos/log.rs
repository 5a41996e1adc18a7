//! The run's clock and its exchange log: every attempt, reply, proxy decision, nemesis action
//! and server stderr line, stamped with the milliseconds since the run began, kept in memory
//! and written to a file at the end (its path is printed when the run fails).

use std::{
    path::PathBuf,
    sync::{Arc, Mutex},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use tokio::time::Instant;

/// Milliseconds since the run began: the clock the SDK's operations are driven with.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    pub fn new() -> Clock {
        Clock {
            start: Instant::now(),
        }
    }

    pub fn now_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Sleep until `at` ms on this clock (at once if it has passed).
    pub async fn sleep_until(&self, at: u64) {
        tokio::time::sleep_until(self.start + Duration::from_millis(at)).await;
    }

    /// The wall clock in ms since the epoch (what `Reply::from_http` reads an HTTP-date
    /// `Retry-After` against).
    pub fn wall_ms() -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
            .unwrap_or(0)
    }
}

/// The exchange log, shared by every task of a run.
#[derive(Clone)]
pub struct Log {
    clock: Clock,
    lines: Arc<Mutex<Vec<String>>>,
}

impl Log {
    pub fn new(clock: Clock) -> Log {
        Log {
            clock,
            lines: Arc::default(),
        }
    }

    /// One line, stamped with the run's time.
    pub fn line(&self, text: impl AsRef<str>) {
        let stamped = format!("[{:>7} ms] {}", self.clock.now_ms(), text.as_ref());
        self.lines
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(stamped);
    }

    /// The log as the fault proxy's sink.
    pub fn sink(&self) -> idem_check::proxy::LogSink {
        let log = self.clone();
        Arc::new(move |line| log.line(line))
    }

    /// Write every line to `<target tmp>/chaos/<name>.log`; the path.
    pub fn write(&self, name: &str) -> PathBuf {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("chaos");
        std::fs::create_dir_all(&dir).expect("create the chaos log folder");
        let path = dir.join(format!("{name}.log"));
        let lines = self
            .lines
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        std::fs::write(&path, lines.join("\n") + "\n").expect("write the exchange log");
        path
    }
}

/// At most `max` characters of `bytes` as text, on one line (for the log).
pub fn excerpt(bytes: &[u8], max: usize) -> String {
    let text = String::from_utf8_lossy(bytes).replace(['\r', '\n'], " ");
    match text.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}
