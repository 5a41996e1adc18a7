//! Injecting the armed faults into `POST /api/checkout`: a middleware around the route, and
//! the [`Checkpoints`] the handler passes on its way (after PayCo's charge, after the commit).
//!
//! The middleware answers `unavailable` itself, before the handler runs. Otherwise it runs the
//! handler, which like every handler keeps working when its client gives up
//! ([`crate::ops::detach`]: an attempt timeout aborts the request, not the work): only
//! `crash-after-charge` ends it early. The handler records at
//! its checkpoints what fired; when it is done, the middleware sends its answer, holds it, or
//! closes the connection without one.

use std::sync::{Arc, Mutex};

use axum::{
    body::{Body, Bytes},
    extract::{Request, State},
    middleware::Next,
    response::Response,
};
use idem_store::http::{problem, HttpResponse};

use super::{
    faults::{uniform, Fault, Fired, Point},
    Demo,
};
use crate::{checkout::payco_client::ChargeOutcome, request::idempotency_key, wire::to_response};

/// Middleware on `POST /api/checkout` in demo mode.
pub async fn inject(State(demo): State<Demo>, mut request: Request, next: Next) -> Response {
    // No tenant: the handler answers 401, with no fault of anyone's.
    let Ok(scope) = demo.tenants.scope(request.headers()) else {
        return next.run(request).await;
    };
    let key = idempotency_key(request.headers()).ok().flatten();
    if let Some(fired) = demo.faults.fire(&scope, Point::Arrival, &mut uniform) {
        demo.note_fault(
            &scope,
            key.as_deref(),
            fired,
            "answered 503 before anything was claimed",
        );
        return to_response(unavailable());
    }
    let checkpoints = Checkpoints(Arc::new(Inner {
        demo: demo.clone(),
        scope,
        key,
        fired: Mutex::new(None),
    }));
    request.extensions_mut().insert(checkpoints.clone());
    // The work outlives the connection as every handler's does (`ops::detach`): this
    // middleware runs inside that task.
    let response = next.run(request).await;
    match checkpoints.fired() {
        Some(Fired {
            fault: Fault::DropResponse | Fault::CrashAfterCharge,
            ..
        }) => dropped_connection(),
        Some(Fired {
            fault: Fault::HoldResponse,
            hold,
        }) => {
            tokio::time::sleep(hold).await;
            response
        }
        _ => response,
    }
}

/// The 503 of the `unavailable` fault.
fn unavailable() -> HttpResponse {
    problem(
        503,
        idem_store::http::problem::UNAVAILABLE,
        "Service unavailable",
        "demo fault: the service is unavailable; retry later",
        Some(1),
    )
}

/// A response that is never sent: its body fails before its first byte, and hyper, which
/// writes the status line and headers together with the body's first bytes, closes the
/// connection with nothing written. The client sees the connection close unanswered.
pub fn dropped_connection() -> Response {
    let failing = futures_util::stream::once(async {
        Err::<Bytes, _>(std::io::Error::other(
            "demo fault: connection closed unanswered",
        ))
    });
    Response::new(Body::from_stream(failing))
}

/// What the handler passes in demo mode (found in the request's extensions).
#[derive(Clone)]
pub struct Checkpoints(Arc<Inner>);

struct Inner {
    demo: Demo,
    scope: Arc<str>,
    key: Option<String>,
    /// The fault that fired at a checkpoint, for the middleware to act on.
    fired: Mutex<Option<Fired>>,
}

/// What the handler does after [`Checkpoints::after_charge`].
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterCharge {
    /// Carry on to the commit.
    Continue,
    /// Stop here, as a crashed worker would: commit nothing, release nothing, answer nothing
    /// (the middleware closes the connection).
    Crash,
}

impl Checkpoints {
    /// PayCo answered (or did not) for `order`: a `payco:` note for the tenant's event stream
    /// (PayCo's ledger may have changed), then `slow-worker` waits here holding the claim, or
    /// `crash-after-charge` stops the worker.
    pub async fn after_charge<E: std::fmt::Display>(
        &self,
        order: i64,
        outcome: &Result<ChargeOutcome, E>,
    ) -> AfterCharge {
        let Inner {
            demo, scope, key, ..
        } = &*self.0;
        let said = match outcome {
            Ok(ChargeOutcome::Charged(charge)) => {
                format!(
                    "charged {} for order {order} ({} cents)",
                    charge.charge, charge.amount
                )
            }
            Ok(ChargeOutcome::Declined) => format!("declined order {order}"),
            Err(e) => format!("no clear answer for order {order}: {e}"),
        };
        demo.note(scope, key.as_deref(), &format!("payco: {said}"));
        let Some(fired) = demo.faults.fire(scope, Point::AfterCharge, &mut uniform) else {
            return AfterCharge::Continue;
        };
        match fired.fault {
            Fault::CrashAfterCharge => {
                let what = "the worker died after PayCo's charge: nothing committed, the claim \
                            stays in flight until it goes stale";
                demo.note_fault(scope, key.as_deref(), fired, what);
                self.record(fired);
                AfterCharge::Crash
            }
            _ => {
                let what = format!(
                    "the worker holds its claim {} ms before it commits",
                    fired.hold.as_millis()
                );
                demo.note_fault(scope, key.as_deref(), fired, &what);
                tokio::time::sleep(fired.hold).await;
                AfterCharge::Continue
            }
        }
    }

    /// The order and the response committed: `drop-response` or `hold-response` may fire
    /// (the middleware enacts it once the handler returns).
    pub fn after_commit(&self) {
        let Inner {
            demo, scope, key, ..
        } = &*self.0;
        let Some(fired) = demo.faults.fire(scope, Point::AfterCommit, &mut uniform) else {
            return;
        };
        let what = match fired.fault {
            Fault::DropResponse => "committed; the connection is closed unanswered".to_owned(),
            _ => format!(
                "committed; the answer is held {} ms",
                fired.hold.as_millis()
            ),
        };
        demo.note_fault(scope, key.as_deref(), fired, &what);
        self.record(fired);
    }

    fn record(&self, fired: Fired) {
        *self.lock() = Some(fired);
    }

    fn fired(&self) -> Option<Fired> {
        *self.lock()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Fired>> {
        // One assignment under the lock: never left half-written.
        self.0
            .fired
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
