//! Checkpoints: the named points of a checkout ([`Point`]) where the server can fail on
//! purpose, and what it does there ([`Verdict`]: continue, hang, crash, panic, drop the
//! answer, hold it, answer 503). One mechanism for the two ways to arm them:
//!
//! - **process-wide**, for tests and operators: `--failpoint POINT=VERDICT` at start-up, or
//!   `PUT /api/failpoints/{point}` (body: the verdict) when started with `--failpoints`;
//! - **per demo tenant** (`--demo-faults`): the demo page arms named faults for its own
//!   checkouts ([`faults`]), each a point and a verdict; a `fault:` note in the tenant's
//!   event stream says when one fired.
//!
//! Off unless one of them is enabled, and then only on a loopback listen address
//! ([`Checkpoints::new`] refuses anything else), so a production server cannot be failed from
//! outside. Off, [`Checkpoints::pass`] is one branch. Whether work outlives its connection is
//! not a checkpoint's business: every handler does (`ops::detach`), in every mode.

pub mod faults;
mod verdict;

use std::{collections::HashMap, net::SocketAddr, sync::Arc, sync::Mutex};

use axum::{
    body::{Body, Bytes},
    response::Response,
};
use idem_store::{
    http::{problem, HttpResponse},
    EventKind,
};

use crate::{db::Db, sql::now_ms};
use faults::{uniform, FaultTable};

pub use verdict::{parse_setting, CheckpointError, Point, Verdict, MAX_HOLD_MS};

/// Who is passing a checkpoint: the tenant whose faults apply and the key its notes name.
#[derive(Debug, Clone, Copy)]
pub struct At<'a> {
    /// The tenant.
    pub scope: &'a str,
    /// The request's idempotency key, if it sent one.
    pub key: Option<&'a str>,
}

/// What the checkout does after a checkpoint.
#[must_use]
#[derive(Debug)]
pub enum Flow {
    /// Carry on.
    Continue,
    /// Stop the work here; close the connection without an answer.
    Drop,
    /// Stop the work here; send this answer.
    Answer(HttpResponse),
}

/// The checkpoints of one checkout server.
#[derive(Default)]
pub struct Checkpoints {
    /// Process-wide verdicts; `None` without `--failpoints`.
    process: Option<Mutex<HashMap<Point, Verdict>>>,
    /// Demo mode: each tenant's armed faults, and the event log their notes go to.
    tenants: Option<(Arc<FaultTable>, Db)>,
}

/// How [`Checkpoints::new`] arms them.
#[derive(Default)]
pub struct Arming {
    /// `Some(presets)`: process-wide checkpoints, settable at run time.
    pub process: Option<Vec<(Point, Verdict)>>,
    /// `Some`: demo mode's per-tenant faults, noted in the database's event log.
    pub tenants: Option<(Arc<FaultTable>, Db)>,
}

impl Checkpoints {
    /// Checkpoints that never fire and cannot be set.
    pub fn off() -> Self {
        Self::default()
    }

    /// Checkpoints for a server listening on `listen`, which must be loopback if any is
    /// armed.
    pub fn new(listen: SocketAddr, arming: Arming) -> Result<Self, CheckpointError> {
        let armed = arming.process.is_some() || arming.tenants.is_some();
        if armed && !listen.ip().is_loopback() {
            return Err(CheckpointError::NotLoopback(listen));
        }
        Ok(Self {
            process: arming
                .process
                .map(|presets| Mutex::new(presets.into_iter().collect())),
            tenants: arming.tenants,
        })
    }

    /// Whether any checkpoint can fire (process-wide or per tenant); when not, the handler
    /// skips even reading who is passing.
    pub fn armed(&self) -> bool {
        self.process.is_some() || self.tenants.is_some()
    }

    /// Whether process-wide checkpoints can be set (`/api/failpoints` is mounted).
    pub fn process_enabled(&self) -> bool {
        self.process.is_some()
    }

    /// Set the process-wide verdict at `point`.
    pub fn set(&self, point: Point, verdict: Verdict) -> Result<(), CheckpointError> {
        let process = self.process.as_ref().ok_or(CheckpointError::Disabled)?;
        lock(process).insert(point, verdict);
        Ok(())
    }

    /// Every point's process-wide verdict.
    pub fn settings(&self) -> Vec<(Point, Verdict)> {
        let set = self.process.as_ref().map(|p| lock(p).clone());
        let verdict = |point| {
            set.as_ref()
                .and_then(|set| set.get(&point).copied())
                .unwrap_or(Verdict::Continue)
        };
        Point::ALL.map(|point| (point, verdict(point))).to_vec()
    }

    /// A note in the tenant's event stream, in demo mode (PayCo's answer for one of its
    /// orders, say); nothing otherwise, and `text` is not even written.
    pub fn note(&self, at: At<'_>, text: impl FnOnce() -> String) {
        if let Some((_, db)) = &self.tenants {
            let kind = EventKind::Note { text: text() };
            db.log(now_ms(), at.scope, at.key, kind);
        }
    }

    /// Pass `point`: returns [`Flow::Continue`] at once unless a verdict is set there, for the
    /// process or for this tenant (the process's first).
    pub async fn pass(&self, point: Point, at: At<'_>) -> Flow {
        let verdict = self.verdict(point, at);
        enact(point, verdict).await
    }

    fn verdict(&self, point: Point, at: At<'_>) -> Verdict {
        let process = self.process.as_ref();
        let set = process.and_then(|p| lock(p).get(&point).copied());
        if let Some(verdict) = set.filter(|v| *v != Verdict::Continue) {
            return verdict;
        }
        let Some((table, _)) = &self.tenants else {
            return Verdict::Continue;
        };
        let Some(fired) = table.fire(at.scope, point, &mut uniform) else {
            return Verdict::Continue;
        };
        let name = fired.fault.name();
        self.note(at, || format!("fault: {name}: {}", fired.describe()));
        fired.verdict()
    }
}

async fn enact(point: Point, verdict: Verdict) -> Flow {
    match verdict {
        Verdict::Continue => Flow::Continue,
        Verdict::Hang => {
            // Tests wait for this line on stderr before they kill the process.
            eprintln!("failpoint {point} reached: hanging");
            tracing::warn!(%point, "failpoint reached: hanging");
            std::future::pending().await
        }
        Verdict::Crash => {
            eprintln!("failpoint {point} reached: aborting the process");
            std::process::abort();
        }
        Verdict::Panic => panic!("failpoint {point} reached: panicking"),
        Verdict::Drop => Flow::Drop,
        Verdict::Hold(hold) => {
            tokio::time::sleep(hold).await;
            Flow::Continue
        }
        Verdict::Unavailable => Flow::Answer(problem(
            503,
            idem_store::http::problem::UNAVAILABLE,
            "Service unavailable",
            &format!("checkpoint {point}: the service is unavailable; retry later"),
            Some(1),
        )),
    }
}

/// A response that is never sent: its body fails before its first byte, and hyper, which
/// writes the status line and headers together with the body's first bytes, closes the
/// connection with nothing written. The client sees the connection close unanswered.
pub fn dropped_connection() -> Response {
    let failing = futures_util::stream::once(async {
        Err::<Bytes, _>(std::io::Error::other(
            "checkpoint: connection closed unanswered",
        ))
    });
    Response::new(Body::from_stream(failing))
}

fn lock(m: &Mutex<HashMap<Point, Verdict>>) -> std::sync::MutexGuard<'_, HashMap<Point, Verdict>> {
    // A panic while holding this lock cannot leave the map half-written (one insert).
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    const AT: At<'static> = At {
        scope: "t",
        key: None,
    };

    fn local() -> SocketAddr {
        "127.0.0.1:1".parse().unwrap()
    }

    #[test]
    fn only_loopback_may_arm_them() {
        let public: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        let process = Arming {
            process: Some(Vec::new()),
            tenants: None,
        };
        assert_eq!(
            Checkpoints::new(public, process).err(),
            Some(CheckpointError::NotLoopback(public))
        );
        assert!(Checkpoints::new(public, Arming::default()).is_ok(), "off");
        let presets = vec![(Point::AfterClaim, Verdict::Hang)];
        let arming = Arming {
            process: Some(presets),
            tenants: None,
        };
        let armed = Checkpoints::new(local(), arming).unwrap();
        assert_eq!(armed.settings()[1], (Point::AfterClaim, Verdict::Hang));
        assert_eq!(
            Checkpoints::off().set(Point::AfterClaim, Verdict::Crash),
            Err(CheckpointError::Disabled)
        );
    }

    #[tokio::test]
    async fn an_unset_or_disabled_checkpoint_continues() {
        assert!(matches!(
            Checkpoints::off().pass(Point::BeforeCommit, AT).await,
            Flow::Continue
        ));
        let arming = Arming {
            process: Some(vec![(Point::AfterClaim, Verdict::Continue)]),
            tenants: None,
        };
        let armed = Checkpoints::new(local(), arming).unwrap();
        assert!(matches!(
            armed.pass(Point::AfterClaim, AT).await,
            Flow::Continue
        ));
        assert!(matches!(
            armed.pass(Point::AfterCharge, AT).await,
            Flow::Continue
        ));
    }

    #[tokio::test]
    async fn verdicts_are_enacted_where_they_are_set() {
        let arming = Arming {
            process: Some(Vec::new()),
            tenants: None,
        };
        let armed = Checkpoints::new(local(), arming).unwrap();
        armed.set(Point::AfterCharge, Verdict::Hang).unwrap();
        let hang = tokio::time::timeout(
            Duration::from_millis(50),
            armed.pass(Point::AfterCharge, AT),
        );
        assert!(hang.await.is_err(), "hang must not return");
        armed.set(Point::AfterCommit, Verdict::Drop).unwrap();
        assert!(matches!(
            armed.pass(Point::AfterCommit, AT).await,
            Flow::Drop
        ));
        armed.set(Point::Arrival, Verdict::Unavailable).unwrap();
        let Flow::Answer(answer) = armed.pass(Point::Arrival, AT).await else {
            panic!("no 503");
        };
        assert_eq!(
            (answer.status, answer.header("retry-after")),
            (503, Some("1"))
        );
        let hold = Verdict::Hold(Duration::from_millis(30));
        armed.set(Point::BeforeCommit, hold).unwrap();
        let started = std::time::Instant::now();
        assert!(matches!(
            armed.pass(Point::BeforeCommit, AT).await,
            Flow::Continue
        ));
        assert!(started.elapsed() >= Duration::from_millis(30), "held");
    }
}
