//! Failpoints: named steps of the checkout where a test (or the demo's real-server mode) can
//! make the server fail on purpose, to show what the claim table does about it.
//!
//! Off unless the server was started with `--failpoints`, and then only on a loopback
//! listen address ([`Failpoints::new`] refuses anything else), so a production server
//! cannot be crashed from outside. Each step has one [`Action`]; they are set at start-up
//! (`--failpoint after-charge=hang`) or at run time (`PUT /api/failpoints/{step}`).

use std::{collections::HashMap, fmt, net::SocketAddr, str::FromStr, sync::Mutex};

use serde::{Deserialize, Serialize};

/// Where in a checkout a failpoint sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Step {
    /// The claim and the order are committed; PayCo not yet called.
    AfterClaim,
    /// PayCo answered the charge; nothing of it is recorded here yet.
    AfterCharge,
    /// The fenced commit (order paid, response saved) is about to be sent.
    BeforeCommit,
}

impl Step {
    /// Every step, in checkout order.
    pub const ALL: [Step; 3] = [Step::AfterClaim, Step::AfterCharge, Step::BeforeCommit];

    /// The kebab-case name used on the command line and in URLs.
    pub const fn name(self) -> &'static str {
        match self {
            Step::AfterClaim => "after-claim",
            Step::AfterCharge => "after-charge",
            Step::BeforeCommit => "before-commit",
        }
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Step {
    type Err = FailpointError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Step::ALL
            .into_iter()
            .find(|step| step.name() == s)
            .ok_or_else(|| FailpointError::UnknownStep(s.to_owned()))
    }
}

/// What a failpoint does when a request reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Action {
    /// Nothing: the step passes.
    Off,
    /// The request stops there forever, holding its claim (a worker that hangs, or a
    /// process about to be killed: the test sends SIGKILL after seeing the log line).
    Hang,
    /// The whole process aborts on the spot, as a crash would.
    Crash,
    /// The request fails with a panic; `panic = "unwind"` turns it into one 500, and the
    /// claim is left in flight to go stale.
    Panic,
}

impl FromStr for Action {
    type Err = FailpointError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "off" => Ok(Action::Off),
            "hang" => Ok(Action::Hang),
            "crash" => Ok(Action::Crash),
            "panic" => Ok(Action::Panic),
            other => Err(FailpointError::UnknownAction(other.to_owned())),
        }
    }
}

/// A failpoint setting that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FailpointError {
    /// Not one of [`Step::ALL`].
    #[error("unknown failpoint {0:?} (known: after-claim, after-charge, before-commit)")]
    UnknownStep(String),
    /// Not one of off, hang, crash, panic.
    #[error("unknown failpoint action {0:?} (known: off, hang, crash, panic)")]
    UnknownAction(String),
    /// `STEP=ACTION` was expected.
    #[error("failpoint setting {0:?} is not STEP=ACTION")]
    Malformed(String),
    /// Failpoints were asked for on an address other machines can reach.
    #[error("failpoints are only allowed on a loopback listen address, not {0}")]
    NotLoopback(SocketAddr),
    /// The server runs without `--failpoints`.
    #[error("failpoints are disabled (start the server with --failpoints)")]
    Disabled,
}

/// Parse `STEP=ACTION`.
pub fn parse_setting(s: &str) -> Result<(Step, Action), FailpointError> {
    let (step, action) = s
        .split_once('=')
        .ok_or_else(|| FailpointError::Malformed(s.to_owned()))?;
    Ok((step.parse()?, action.parse()?))
}

/// The failpoints of one server. Disabled ones cost a branch per step.
#[derive(Debug, Default)]
pub struct Failpoints {
    /// `None` when disabled.
    actions: Option<Mutex<HashMap<Step, Action>>>,
}

impl Failpoints {
    /// Failpoints that never fire and cannot be set.
    pub fn disabled() -> Self {
        Self { actions: None }
    }

    /// Enabled failpoints for a server listening on `listen`, which must be loopback.
    pub fn new(listen: SocketAddr, preset: &[(Step, Action)]) -> Result<Self, FailpointError> {
        if !listen.ip().is_loopback() {
            return Err(FailpointError::NotLoopback(listen));
        }
        Ok(Self {
            actions: Some(Mutex::new(preset.iter().copied().collect())),
        })
    }

    /// Whether failpoints can be set.
    pub fn is_enabled(&self) -> bool {
        self.actions.is_some()
    }

    /// Set `step` to `action`.
    pub fn set(&self, step: Step, action: Action) -> Result<(), FailpointError> {
        let actions = self.actions.as_ref().ok_or(FailpointError::Disabled)?;
        lock(actions).insert(step, action);
        Ok(())
    }

    /// Every step's action.
    pub fn actions(&self) -> Vec<(Step, Action)> {
        let Some(actions) = &self.actions else {
            return Step::ALL.map(|s| (s, Action::Off)).to_vec();
        };
        let actions = lock(actions);
        Step::ALL
            .map(|s| (s, actions.get(&s).copied().unwrap_or(Action::Off)))
            .to_vec()
    }

    /// Pass `step`: returns at once unless its failpoint is set.
    pub async fn hit(&self, step: Step) {
        let Some(actions) = &self.actions else {
            return;
        };
        let action = lock(actions).get(&step).copied().unwrap_or(Action::Off);
        match action {
            Action::Off => {}
            Action::Hang => {
                // Tests wait for this line on stderr before they kill the process.
                eprintln!("failpoint {step} reached: hanging");
                tracing::warn!(%step, "failpoint reached: hanging");
                std::future::pending::<()>().await;
            }
            Action::Crash => {
                eprintln!("failpoint {step} reached: aborting the process");
                std::process::abort();
            }
            Action::Panic => panic!("failpoint {step} reached: panicking"),
        }
    }
}

fn lock(m: &Mutex<HashMap<Step, Action>>) -> std::sync::MutexGuard<'_, HashMap<Step, Action>> {
    // A panic while holding this lock cannot leave the map half-written (one insert).
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_refuse_nonsense() {
        assert_eq!(
            parse_setting("after-charge=hang"),
            Ok((Step::AfterCharge, Action::Hang))
        );
        assert!(matches!(
            parse_setting("after-charge"),
            Err(FailpointError::Malformed(_))
        ));
        assert!(matches!(
            parse_setting("later=hang"),
            Err(FailpointError::UnknownStep(_))
        ));
        assert!(matches!(
            parse_setting("after-claim=explode"),
            Err(FailpointError::UnknownAction(_))
        ));
    }

    #[test]
    fn only_loopback_may_enable_them() {
        let public: SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert_eq!(
            Failpoints::new(public, &[]).unwrap_err(),
            FailpointError::NotLoopback(public)
        );
        let local: SocketAddr = "127.0.0.1:8080".parse().unwrap();
        let fp = Failpoints::new(local, &[(Step::AfterClaim, Action::Hang)]).unwrap();
        assert_eq!(fp.actions()[0], (Step::AfterClaim, Action::Hang));
        assert_eq!(
            Failpoints::disabled().set(Step::AfterClaim, Action::Crash),
            Err(FailpointError::Disabled)
        );
    }

    #[tokio::test]
    async fn an_unset_or_disabled_failpoint_passes() {
        Failpoints::disabled().hit(Step::BeforeCommit).await;
        let local: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let fp = Failpoints::new(local, &[(Step::AfterClaim, Action::Off)]).unwrap();
        fp.hit(Step::AfterClaim).await;
        fp.hit(Step::AfterCharge).await;
    }

    #[tokio::test]
    async fn a_hanging_failpoint_does_not_return() {
        let local: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let fp = Failpoints::new(local, &[(Step::AfterCharge, Action::Hang)]).unwrap();
        let hit = tokio::time::timeout(
            std::time::Duration::from_millis(50),
            fp.hit(Step::AfterCharge),
        );
        assert!(hit.await.is_err(), "hang must not return");
    }
}
