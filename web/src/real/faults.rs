//! The page's fault controls as idem-server's demo faults (`PUT /api/demo/faults`, which
//! replaces the tenant's whole set; crates/server/README.md, "Faults"):
//!
//! | control | fault |
//! |---|---|
//! | response loss % | `drop-response` with that probability, until changed |
//! | drop next response | `drop-response`, once |
//! | hold next response | `hold-response`, once, held past the attempt timeout |
//! | 503 next | `unavailable`, once |
//! | crash worker after charge (while on) | `crash-after-charge`, every checkout |
//! | slow worker (while on) | `slow-worker`, every checkout, held past `lock_ms` |
//!
//! One-shots go first in the set, so they fire before a standing fault of the same point; a
//! one-shot is used up when its `fault: <name>` note comes down the event stream, and the page
//! stops sending it then. Pure: unit-tested natively.

/// A fault armed for one checkout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OneShot {
    /// The connection closes unanswered after the commit.
    DropResponse,
    /// The answer comes after the client's attempt timeout.
    HoldResponse,
    /// 503 with `Retry-After: 1` on arrival.
    Unavailable,
}

impl OneShot {
    /// The server's name for it.
    pub fn name(self) -> &'static str {
        match self {
            OneShot::DropResponse => "drop-response",
            OneShot::HoldResponse => "hold-response",
            OneShot::Unavailable => "unavailable",
        }
    }
}

/// The faults that stay armed while their control says so.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Standing {
    /// Response loss in basis points (10,000 = every response).
    pub response_loss: u32,
    /// Every worker crashes after PayCo's charge.
    pub crash_after_charge: bool,
    /// Every worker holds its claim past `lock_ms`.
    pub slow_worker: bool,
}

/// How long `hold-response` holds: past the attempt timeout, so the client gives up on it.
pub fn hold_ms(attempt_timeout_ms: u64) -> u64 {
    attempt_timeout_ms + 3_000
}

/// The set to `PUT`, as JSON: the `pending` one-shots first, then the standing faults.
/// `lock_ms` is the server's lease (a slow worker outlives it).
pub fn fault_set(standing: Standing, pending: &[OneShot], lock_ms: u64, hold: u64) -> String {
    let mut items: Vec<String> = pending
        .iter()
        .map(|f| match f {
            OneShot::HoldResponse => fault(f.name(), None, Some(hold)),
            _ => fault(f.name(), None, None),
        })
        .collect();
    if standing.response_loss > 0 {
        items.push(fault("drop-response", Some(standing.response_loss), None));
    }
    if standing.crash_after_charge {
        items.push(fault("crash-after-charge", Some(FULL), None));
    }
    if standing.slow_worker {
        // The server accepts at most two minutes.
        let hold = lock_ms.saturating_add(2_000).min(120_000);
        items.push(fault("slow-worker", Some(FULL), Some(hold)));
    }
    ["[", &items.join(","), "]"].concat()
}

/// 10,000 basis points: always.
const FULL: u32 = 10_000;

/// One fault object; a `probability` (basis points) makes it stay armed until replaced.
fn fault(name: &str, probability: Option<u32>, hold_ms: Option<u64>) -> String {
    let mut out = ["{\"fault\":\"", name, "\""].concat();
    if let Some(bp) = probability {
        out.push_str(",\"probability\":");
        out.push_str(&decimal(bp));
    }
    if let Some(ms) = hold_ms {
        out.push_str(",\"hold_ms\":");
        out.push_str(&ms.to_string());
    }
    out.push('}');
    out
}

/// Basis points as a JSON number in (0, 1]: `2500` → `0.2500`, `10000` → `1`.
fn decimal(bp: u32) -> String {
    let bp = bp.clamp(1, FULL);
    if bp == FULL {
        return "1".into();
    }
    let digits = (bp + FULL).to_string();
    ["0.", digits.get(1..).unwrap_or("0")].concat()
}

/// The one-shots still armed after the server said `fired` (a fault's name) fired: the first
/// pending one of that name is used up (it comes first in the set, so it is the one that
/// fired). `false` when none was pending (a standing fault fired).
pub fn use_up(pending: &mut Vec<OneShot>, fired: &str) -> bool {
    match pending.iter().position(|f| f.name() == fired) {
        Some(i) => {
            pending.remove(i);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_control_becomes_its_fault() {
        assert_eq!(fault_set(Standing::default(), &[], 10_000, 8_000), "[]");
        let all = Standing {
            response_loss: 2_500,
            crash_after_charge: true,
            slow_worker: true,
        };
        assert_eq!(
            fault_set(
                all,
                &[
                    OneShot::Unavailable,
                    OneShot::HoldResponse,
                    OneShot::DropResponse
                ],
                10_000,
                8_000
            ),
            concat!(
                r#"[{"fault":"unavailable"},{"fault":"hold-response","hold_ms":8000},{"fault":"drop-response"},"#,
                r#"{"fault":"drop-response","probability":0.2500},{"fault":"crash-after-charge","probability":1},"#,
                r#"{"fault":"slow-worker","probability":1,"hold_ms":12000}]"#
            )
        );
        // Whatever the server's lease, the hold stays within what the server accepts.
        let slow = Standing {
            slow_worker: true,
            ..Standing::default()
        };
        assert_eq!(
            fault_set(slow, &[], 200_000, 0),
            r#"[{"fault":"slow-worker","probability":1,"hold_ms":120000}]"#
        );
        assert_eq!(hold_ms(5_000), 8_000);
    }

    #[test]
    fn probabilities_are_json_numbers_in_range() {
        assert_eq!(decimal(1), "0.0001");
        assert_eq!(decimal(5), "0.0005");
        assert_eq!(decimal(9_999), "0.9999");
        assert_eq!(decimal(10_000), "1");
        assert_eq!(decimal(u32::MAX), "1");
        assert_eq!(decimal(0), "0.0001", "never 0, which the server refuses");
    }

    #[test]
    fn a_fired_one_shot_is_used_up_once() {
        let mut pending = vec![
            OneShot::DropResponse,
            OneShot::Unavailable,
            OneShot::DropResponse,
        ];
        assert!(use_up(&mut pending, "drop-response"));
        assert_eq!(pending, [OneShot::Unavailable, OneShot::DropResponse]);
        assert!(!use_up(&mut pending, "crash-after-charge"));
        assert!(use_up(&mut pending, "unavailable"));
        assert_eq!(pending, [OneShot::DropResponse]);
    }
}
