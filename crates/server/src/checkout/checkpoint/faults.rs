//! The faults a demo session arms for its own tenant, and the table that fires them.
//!
//! Each named fault is a checkpoint and a verdict ([`Fault::point`], [`Fired::verdict`]):
//! `unavailable` is [`Verdict::Unavailable`] on arrival, `slow-worker` and
//! `crash-after-charge` hold or drop after the charge, `hold-response` and `drop-response` hold
//! or drop after the commit. Each tenant has a list of [`ArmedFault`]s, replaced whole by
//! `PUT /api/demo/faults`. At each point a checkout of that tenant passes, the first armed
//! fault of that point that fires (its probability drawn, its count not used up) is the one
//! injected, and its count goes down. No other tenant's checkouts ever look at the list.

use std::{
    collections::HashMap,
    sync::{Arc, Mutex},
    time::Duration,
};

use serde::{Deserialize, Serialize};

use super::verdict::{Point, Verdict, MAX_HOLD_MS};

/// A fault the demo server injects into a checkout of the tenant that armed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fault {
    /// The work commits (order paid, response saved), then the connection is closed without a
    /// byte of answer: the lost response. The client's retry is answered with the replay.
    DropResponse,
    /// The work commits, then the answer is held `hold_ms` before it is sent (by default past
    /// the SDK's 10 s attempt timeout). The client's retry is answered with the replay.
    HoldResponse,
    /// After PayCo's charge the worker waits `hold_ms` before it commits, holding the claim:
    /// a retry meanwhile gets 409 with `Retry-After`; past `lock_ms` a retry takes the claim
    /// over and this worker's commit is fenced.
    SlowWorker,
    /// After PayCo's charge the worker dies: nothing committed, nothing released, the
    /// connection closed unanswered. The claim stays in flight (409) until it goes stale after
    /// `lock_ms`; then a retry takes it over, resumes the order, and PayCo answers its saved
    /// charge: one charge.
    CrashAfterCharge,
    /// The request is answered 503 with `Retry-After: 1` before anything is claimed.
    Unavailable,
}

impl Fault {
    /// The point at which it fires.
    pub const fn point(self) -> Point {
        match self {
            Fault::Unavailable => Point::Arrival,
            Fault::SlowWorker | Fault::CrashAfterCharge => Point::AfterCharge,
            Fault::DropResponse | Fault::HoldResponse => Point::AfterCommit,
        }
    }

    /// The kebab-case name used on the wire.
    pub const fn name(self) -> &'static str {
        match self {
            Fault::DropResponse => "drop-response",
            Fault::HoldResponse => "hold-response",
            Fault::SlowWorker => "slow-worker",
            Fault::CrashAfterCharge => "crash-after-charge",
            Fault::Unavailable => "unavailable",
        }
    }

    /// Whether it waits (and so takes `hold_ms`).
    pub const fn holds(self) -> bool {
        matches!(self, Fault::HoldResponse | Fault::SlowWorker)
    }
}

/// A fault as `PUT /api/demo/faults` takes it.
///
/// ## Default values
/// - `times`: 1 when no `probability` is given (a one-shot), else unlimited (until replaced).
/// - `probability`: 1.
/// - `hold_ms`: 15 000 for `hold-response` and `slow-worker` (past the SDK's 10 s attempt
///   timeout); refused on the others.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FaultRequest {
    /// Which fault.
    pub fault: Fault,
    /// How many times it may fire.
    #[serde(default)]
    pub times: Option<u32>,
    /// The chance it fires at each checkout that reaches its point, in (0, 1].
    #[serde(default)]
    pub probability: Option<f64>,
    /// How long `hold-response` and `slow-worker` wait, in ms (1..=120 000).
    #[serde(default)]
    pub hold_ms: Option<u64>,
}

/// A fault as armed: what `GET /api/demo/faults` lists.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArmedFault {
    /// Which fault.
    pub fault: Fault,
    /// Firings left; `None` (JSON `null`): until replaced.
    pub times: Option<u32>,
    /// The chance it fires at each checkout that reaches its point.
    pub probability: f64,
    /// How long it waits, for the faults that hold (`None` for the others).
    pub hold_ms: Option<u64>,
}

/// The default `hold_ms`.
pub const DEFAULT_HOLD_MS: u64 = 15_000;
/// The most faults one tenant may arm at once.
pub const MAX_ARMED: usize = 16;
/// The largest `times`.
pub const MAX_TIMES: u32 = 1_000;
/// The most tenants with armed faults at once (each page session is one).
pub const MAX_TENANTS: usize = 10_000;

impl FaultRequest {
    /// The fault armed, or why not (a 400's detail).
    pub fn arm(&self) -> Result<ArmedFault, String> {
        let name = self.fault.name();
        if let Some(p) = self.probability {
            if !(p > 0.0 && p <= 1.0) {
                return Err(format!("{name}: probability must be in (0, 1]"));
            }
        }
        if let Some(times) = self.times {
            if !(1..=MAX_TIMES).contains(&times) {
                return Err(format!("{name}: times must be 1..={MAX_TIMES}"));
            }
        }
        let hold_ms = match (self.fault.holds(), self.hold_ms) {
            (true, None) => Some(DEFAULT_HOLD_MS),
            (true, Some(ms)) if (1..=MAX_HOLD_MS).contains(&ms) => Some(ms),
            (true, Some(_)) => return Err(format!("{name}: hold_ms must be 1..={MAX_HOLD_MS}")),
            (false, None) => None,
            (false, Some(_)) => return Err(format!("{name} takes no hold_ms")),
        };
        Ok(ArmedFault {
            fault: self.fault,
            times: match (self.times, self.probability) {
                (Some(times), _) => Some(times),
                (None, None) => Some(1),
                (None, Some(_)) => None,
            },
            probability: self.probability.unwrap_or(1.0),
            hold_ms,
        })
    }
}

/// A fault that fired: which, and how long it holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fired {
    /// Which fault.
    pub fault: Fault,
    /// Its hold (zero for the faults that do not hold).
    pub hold: Duration,
}

impl Fired {
    /// What the checkout does at the fault's point.
    pub fn verdict(self) -> Verdict {
        match self.fault {
            Fault::Unavailable => Verdict::Unavailable,
            Fault::SlowWorker | Fault::HoldResponse => Verdict::Hold(self.hold),
            Fault::CrashAfterCharge | Fault::DropResponse => Verdict::Drop,
        }
    }

    /// What it does, for the tenant's `fault:` note.
    pub fn describe(self) -> String {
        let ms = self.hold.as_millis();
        match self.fault {
            Fault::Unavailable => "answered 503 before anything was claimed".to_owned(),
            Fault::SlowWorker => format!("the worker holds its claim {ms} ms before it commits"),
            Fault::CrashAfterCharge => "the worker died after PayCo's charge: nothing committed, \
                                        the claim stays in flight until it goes stale"
                .to_owned(),
            Fault::DropResponse => "committed; the connection is closed unanswered".to_owned(),
            Fault::HoldResponse => format!("committed; the answer is held {ms} ms"),
        }
    }
}

/// Why a tenant's faults could not be armed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArmError {
    /// More than [`MAX_ARMED`] faults.
    #[error("at most {MAX_ARMED} faults may be armed at once")]
    TooMany,
    /// [`MAX_TENANTS`] other tenants have faults armed.
    #[error("too many sessions have faults armed; retry later")]
    Full,
}

/// Every tenant's armed faults.
#[derive(Debug, Default)]
pub struct FaultTable {
    tenants: Mutex<HashMap<Arc<str>, Vec<ArmedFault>>>,
}

impl FaultTable {
    /// Replace `scope`'s armed faults by `faults` (empty: disarm all).
    pub fn set(&self, scope: &str, faults: Vec<ArmedFault>) -> Result<(), ArmError> {
        if faults.len() > MAX_ARMED {
            return Err(ArmError::TooMany);
        }
        let mut tenants = self.lock();
        if faults.is_empty() {
            tenants.remove(scope);
        } else if tenants.len() >= MAX_TENANTS && !tenants.contains_key(scope) {
            return Err(ArmError::Full);
        } else {
            tenants.insert(Arc::from(scope), faults);
        }
        Ok(())
    }

    /// `scope`'s armed faults, in the order they were given.
    pub fn list(&self, scope: &str) -> Vec<ArmedFault> {
        self.lock().get(scope).cloned().unwrap_or_default()
    }

    /// The fault of `scope` that fires at `point`, if any: the first armed one of that point
    /// whose probability `draw` (uniform in [0, 1)) passes. Its count goes down; a used-up
    /// fault is disarmed.
    pub fn fire(&self, scope: &str, point: Point, draw: &mut dyn FnMut() -> f64) -> Option<Fired> {
        let mut tenants = self.lock();
        let armed = tenants.get_mut(scope)?;
        let at = armed
            .iter()
            .position(|f| f.fault.point() == point && draw() < f.probability)?;
        let fired = Fired {
            fault: armed[at].fault,
            hold: Duration::from_millis(armed[at].hold_ms.unwrap_or(0)),
        };
        match &mut armed[at].times {
            Some(1) => {
                armed.remove(at);
            }
            Some(left) => *left -= 1,
            None => {}
        }
        if armed.is_empty() {
            tenants.remove(scope);
        }
        Some(fired)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Arc<str>, Vec<ArmedFault>>> {
        // Every critical section leaves the map whole (one insert, remove or decrement).
        self.tenants
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A uniform draw in [0, 1) from the operating system's randomness: the low 53 bits of a
/// random (v4) UUID, which are all random (its fixed version and variant bits are higher up).
pub fn uniform() -> f64 {
    let bits = uuid::Uuid::new_v4().as_u128() & ((1 << 53) - 1);
    bits as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: &str) -> Result<ArmedFault, String> {
        serde_json::from_str::<FaultRequest>(json)
            .map_err(|e| e.to_string())?
            .arm()
    }

    #[test]
    fn defaults_make_a_one_shot_and_a_probability_makes_it_last() {
        let once = request(r#"{"fault":"drop-response"}"#).unwrap();
        assert_eq!(
            (once.times, once.probability, once.hold_ms),
            (Some(1), 1.0, None)
        );
        let lasting = request(r#"{"fault":"unavailable","probability":0.25}"#).unwrap();
        assert_eq!((lasting.times, lasting.probability), (None, 0.25));
        let capped = request(r#"{"fault":"slow-worker","probability":0.5,"times":2}"#).unwrap();
        assert_eq!(
            (capped.times, capped.hold_ms),
            (Some(2), Some(DEFAULT_HOLD_MS))
        );
        let held = request(r#"{"fault":"hold-response","hold_ms":1500}"#).unwrap();
        assert_eq!(held.hold_ms, Some(1500));
    }

    #[test]
    fn nonsense_is_refused() {
        for bad in [
            r#"{"fault":"explode"}"#,
            r#"{"fault":"unavailable","probability":0}"#,
            r#"{"fault":"unavailable","probability":1.5}"#,
            r#"{"fault":"unavailable","probability":-1}"#,
            r#"{"fault":"unavailable","times":0}"#,
            r#"{"fault":"unavailable","times":1001}"#,
            r#"{"fault":"unavailable","hold_ms":10}"#,
            r#"{"fault":"slow-worker","hold_ms":0}"#,
            r#"{"fault":"slow-worker","hold_ms":120001}"#,
            r#"{"fault":"unavailable","extra":1}"#,
            r#"{"times":1}"#,
        ] {
            assert!(request(bad).is_err(), "{bad}");
        }
    }

    fn always() -> impl FnMut() -> f64 {
        || 0.0
    }

    #[test]
    fn a_fault_fires_at_its_point_only_and_counts_down() {
        let table = FaultTable::default();
        let faults = vec![
            request(r#"{"fault":"crash-after-charge","times":2}"#).unwrap(),
            request(r#"{"fault":"unavailable"}"#).unwrap(),
        ];
        table.set("t", faults).unwrap();
        assert_eq!(table.fire("t", Point::AfterCommit, &mut always()), None);
        let fired = table.fire("t", Point::Arrival, &mut always()).unwrap();
        assert_eq!(fired.fault, Fault::Unavailable);
        assert_eq!(table.fire("t", Point::Arrival, &mut always()), None);
        for _ in 0..2 {
            let fired = table.fire("t", Point::AfterCharge, &mut always());
            assert_eq!(fired.map(|f| f.fault), Some(Fault::CrashAfterCharge));
        }
        assert_eq!(table.fire("t", Point::AfterCharge, &mut always()), None);
        assert!(table.list("t").is_empty());
    }

    #[test]
    fn one_tenants_faults_never_fire_for_another() {
        let table = FaultTable::default();
        let armed = request(r#"{"fault":"drop-response","probability":1}"#).unwrap();
        table.set("a", vec![armed]).unwrap();
        assert_eq!(table.fire("b", Point::AfterCommit, &mut always()), None);
        assert!(table.list("b").is_empty());
        assert!(table.fire("a", Point::AfterCommit, &mut always()).is_some());
        assert_eq!(table.list("a").len(), 1, "unlimited: still armed");
    }

    #[test]
    fn the_draw_decides_and_the_first_that_fires_wins() {
        let table = FaultTable::default();
        let faults = vec![
            request(r#"{"fault":"slow-worker","probability":0.5,"hold_ms":7}"#).unwrap(),
            request(r#"{"fault":"crash-after-charge","probability":0.5}"#).unwrap(),
        ];
        table.set("t", faults).unwrap();
        let mut draws = [0.7, 0.2].into_iter();
        let fired = table.fire("t", Point::AfterCharge, &mut || draws.next().unwrap());
        assert_eq!(fired.map(|f| f.fault), Some(Fault::CrashAfterCharge));
        let fired = table.fire("t", Point::AfterCharge, &mut || 0.49).unwrap();
        assert_eq!(
            (fired.fault, fired.hold),
            (Fault::SlowWorker, Duration::from_millis(7))
        );
        assert_eq!(table.fire("t", Point::AfterCharge, &mut || 0.5), None);
    }

    #[test]
    fn the_table_is_bounded() {
        let table = FaultTable::default();
        let one = request(r#"{"fault":"unavailable"}"#).unwrap();
        assert_eq!(
            table.set("t", vec![one.clone(); MAX_ARMED + 1]),
            Err(ArmError::TooMany)
        );
        for i in 0..MAX_TENANTS {
            table.set(&format!("t{i}"), vec![one.clone()]).unwrap();
        }
        assert_eq!(table.set("new", vec![one.clone()]), Err(ArmError::Full));
        table.set("t0", vec![one.clone(), one]).unwrap();
        table.set("t1", Vec::new()).unwrap();
        assert!(table.list("t1").is_empty());
    }

    #[test]
    fn uniform_draws_stay_in_range() {
        for _ in 0..1_000 {
            let x = uniform();
            assert!((0.0..1.0).contains(&x), "{x}");
        }
    }
}
