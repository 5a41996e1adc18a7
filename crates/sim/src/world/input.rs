//! The input log: the only way to change a running world.
//!
//! Every change is a [`Command`] applied at the world's current virtual time by
//! [`World::apply`], which records it as an [`Input`] (time and events run) before it acts. The
//! control methods ([`World::start_checkout`], [`World::drop_next_request`], ...) are thin
//! wrappers over `apply`, and rebuilding a run ([`World::replay_inputs`], which
//! [`World::replay`] and the demo's page reload both use) is a loop over the same `apply`, so a
//! recorded run and its replay cannot take different paths.

use serde::{Deserialize, Serialize};

use idem_client::Journal;

use super::World;
use crate::config::{ClientConfig, Faults, ServerConfig, Strategy};
use crate::ids::CheckoutId;
use crate::SimError;

/// A change to a running world, as recorded for replay.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum Command {
    /// Start one checkout.
    StartCheckout {
        /// Its strategy.
        strategy: Strategy,
        /// Its amount (drawn when `None`).
        amount: Option<u32>,
        /// Keep a same-key checkout's key in the host's journal ([`World::attach_journal`]:
        /// the demo's localStorage); without one (a replay), in the world's memory journal.
        host_journal: bool,
    },
    /// Reload a checkout's tab: its memory is lost, its journal kept.
    Reload {
        /// Which.
        checkout: CheckoutId,
    },
    /// Reload the one tab every pending checkout lives in (the demo's page): each loses its
    /// memory and resumes from its journal, in checkout order.
    ReloadTab,
    /// Lose the next request.
    DropNextRequest,
    /// Lose the next response.
    DropNextResponse,
    /// New fault rates.
    SetFaults(Faults),
    /// New server knobs.
    SetServer(ServerConfig),
    /// New client policy (for checkouts started from now on).
    SetClient(ClientConfig),
    /// The next worker dies after its charge, before its save.
    CrashNextAfterCharge,
    /// The next worker is slow: its charge comes after its lease went stale.
    SlowNextWorker,
    /// PayCo declines the next card it decides on: the work fails.
    DeclineNextCharge,
    /// The next worker's PayCo call times out (PayCo may or may not have charged).
    TimeOutNextPaycoCall,
    /// The customer presses Pay again while a checkout is pending. A naive page (no key, or a
    /// new key per attempt) sends the cart's request again at once, as its next attempt under
    /// its own rule for keys, and waits for that one: both requests run, so PayCo charges the
    /// checkout twice. A same-key page's operation is pending in its journal: the click
    /// resumes it and nothing new is sent. A checkout that ended, or whose tab is reloading,
    /// ignores the click.
    PayAgain {
        /// Which checkout's Pay button.
        checkout: CheckoutId,
    },
    /// The page sends a request again under a checkout's key, `after_ms` from now.
    Resend {
        /// Which checkout's key.
        checkout: CheckoutId,
        /// With a different cart (amount + 1): the store must answer 422.
        other_cart: bool,
        /// Delay before the request leaves (0: now).
        #[serde(default, skip_serializing_if = "is_zero")]
        after_ms: u64,
    },
}

fn is_zero(ms: &u64) -> bool {
    *ms == 0
}

/// A command applied at virtual time `at`, after `after_events` events had run (a run can stop
/// between two events due at the same millisecond, so time alone does not place it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Input {
    /// Virtual time.
    pub at: u64,
    /// Events run before it.
    pub after_events: u64,
    /// What.
    pub command: Command,
}

/// What moves a world between inputs while a run is rebuilt: its own events ([`World::step`],
/// the `()` driver), or a [`ScenarioRun`](crate::ScenarioRun), which applies its script on the
/// way as it did when the run was recorded.
pub trait Drive {
    /// Run the next thing due (an event, or a scripted control); false when nothing is left.
    fn step(&mut self, world: &mut World) -> bool;

    /// Apply what is due at or before `at` without running an event (a scenario's controls
    /// due at that millisecond, before the next event). Nothing by default.
    fn settle(&mut self, world: &mut World, at: u64) {
        let _ = (world, at);
    }
}

/// The world's own events.
impl Drive for () {
    fn step(&mut self, world: &mut World) -> bool {
        world.step()
    }
}

impl World {
    /// Apply `command` now, recording it as an [`Input`] first. For
    /// [`Command::StartCheckout`], the checkout it started.
    ///
    /// A command naming a checkout that does not exist is refused
    /// ([`SimError::NoSuchCheckout`]) and not recorded. A checkout whose journal refuses its
    /// key ([`SimError::Start`]) stays recorded: the refusal is part of the run.
    pub fn apply(&mut self, command: Command) -> Result<Option<CheckoutId>, SimError> {
        match &command {
            Command::Reload { checkout }
            | Command::Resend { checkout, .. }
            | Command::PayAgain { checkout }
                if checkout.0 as usize >= self.clients.len() =>
            {
                return Err(SimError::NoSuchCheckout(checkout.0));
            }
            _ => {}
        }
        self.inputs.push(Input {
            at: self.now,
            after_events: self.events_run,
            command: command.clone(),
        });
        match command {
            Command::StartCheckout {
                strategy,
                amount,
                host_journal,
            } => {
                let amount = match amount {
                    Some(a) => a,
                    None => self.draw_amount(),
                };
                let journal = if host_journal && self.journals.len() > 1 {
                    1
                } else {
                    0
                };
                return self.begin_checkout(strategy, amount, journal).map(Some);
            }
            Command::Reload { checkout } => self.on_reload(checkout),
            Command::ReloadTab => {
                let pending: Vec<CheckoutId> = self
                    .history
                    .checkouts
                    .iter()
                    .filter(|r| r.outcome == crate::CheckoutOutcome::Pending)
                    .map(|r| r.id)
                    .collect();
                for c in pending {
                    self.on_reload(c);
                }
            }
            Command::DropNextRequest => self.net.drop_next_request(),
            Command::DropNextResponse => self.net.drop_next_response(),
            Command::SetFaults(faults) => self.net.set_faults(faults),
            Command::SetServer(server) => {
                let store = super::store_config(&server, &self.steps, self.config.history);
                self.server.reconfigure(server, store);
            }
            Command::SetClient(client) => {
                self.policy = super::retry_policy(&client);
                self.client_cfg = client;
            }
            Command::CrashNextAfterCharge => self.oneshot.crash = true,
            Command::SlowNextWorker => self.oneshot.slow = true,
            Command::DeclineNextCharge => self.oneshot.decline = true,
            Command::TimeOutNextPaycoCall => self.oneshot.payco_timeout = true,
            Command::PayAgain { checkout } => self.pay_again(checkout),
            Command::Resend {
                checkout,
                other_cart,
                after_ms: 0,
            } => self.send_extra(checkout, u32::from(other_cart)),
            Command::Resend {
                checkout,
                other_cart,
                after_ms,
            } => {
                let at = self.now.saturating_add(after_ms);
                self.schedule(at, super::Ev::Resend(checkout, other_cart));
            }
        }
        Ok(None)
    }

    /// Give the world the host's journal (the demo's localStorage): checkouts started with
    /// `host_journal` keep their key there, so the record the page shows is the real one.
    /// Without it they use the world's memory journal (a replay).
    pub fn attach_journal(&mut self, journal: Box<dyn Journal>) {
        self.journals.truncate(1);
        self.journals.push(journal);
    }

    /// Start one checkout now with `strategy` and a drawn amount; returns its id.
    pub fn start_checkout(&mut self, strategy: Strategy) -> Result<CheckoutId, SimError> {
        self.start_checkout_with(strategy, None, false)
    }

    /// Start one checkout now, with a chosen amount and, for same-key pages, the host's
    /// journal (see [`World::attach_journal`]).
    pub fn start_checkout_with(
        &mut self,
        strategy: Strategy,
        amount: Option<u32>,
        host_journal: bool,
    ) -> Result<CheckoutId, SimError> {
        let started = self.apply(Command::StartCheckout {
            strategy,
            amount,
            host_journal,
        })?;
        // `apply` answers a start with the checkout it started.
        started.ok_or(SimError::Start(String::new()))
    }

    /// Reload a checkout's tab: its memory is lost, its journal kept.
    pub fn reload(&mut self, checkout: CheckoutId) -> Result<(), SimError> {
        self.apply(Command::Reload { checkout }).map(drop)
    }

    /// Reload the tab every pending checkout lives in.
    pub fn reload_tab(&mut self) {
        self.control(Command::ReloadTab);
    }

    /// One-shot: the next request is lost.
    pub fn drop_next_request(&mut self) {
        self.control(Command::DropNextRequest);
    }

    /// One-shot: the next response is lost.
    pub fn drop_next_response(&mut self) {
        self.control(Command::DropNextResponse);
    }

    /// One-shot: the next worker crashes after PayCo charged, before it saves.
    pub fn crash_next_after_charge(&mut self) {
        self.control(Command::CrashNextAfterCharge);
    }

    /// One-shot: the next worker is slow; its charge comes `lock_ms + slow_extra_ms` late, after
    /// its lease went stale.
    pub fn slow_next_worker(&mut self) {
        self.control(Command::SlowNextWorker);
    }

    /// One-shot: PayCo declines the next card it decides on (a call under a key it has seen
    /// gets the saved answer instead); the work fails, see `ServerConfig::on_error`.
    pub fn decline_next_charge(&mut self) {
        self.control(Command::DeclineNextCharge);
    }

    /// One-shot: the next worker's PayCo call times out. Whether it reached PayCo (which then
    /// decided and saved its answer) is drawn; the worker cannot tell, and fails with a 504.
    pub fn time_out_next_payco_call(&mut self) {
        self.control(Command::TimeOutNextPaycoCall);
    }

    /// The customer presses Pay again while `checkout` is pending (see [`Command::PayAgain`]).
    pub fn pay_again_for(&mut self, checkout: CheckoutId) -> Result<(), SimError> {
        self.apply(Command::PayAgain { checkout }).map(drop)
    }

    /// The page sends the checkout's request again under its key, now (a double click).
    pub fn resend_same_cart(&mut self, checkout: CheckoutId) -> Result<(), SimError> {
        self.resend_later(checkout, false, 0)
    }

    /// A buggy page sends a different cart (amount + 1) under the checkout's key, now: the store
    /// answers 422 (or, with the no-fingerprint-check bug, replays the wrong answer).
    pub fn resend_with_other_cart(&mut self, checkout: CheckoutId) -> Result<(), SimError> {
        self.resend_later(checkout, true, 0)
    }

    /// The page sends a request under the checkout's key `after_ms` from now (`other_cart`:
    /// another cart): the demo's buggy page, which pays and then reuses the key.
    pub fn resend_later(
        &mut self,
        checkout: CheckoutId,
        other_cart: bool,
        after_ms: u64,
    ) -> Result<(), SimError> {
        let command = Command::Resend {
            checkout,
            other_cart,
            after_ms,
        };
        self.apply(command).map(drop)
    }

    /// New fault rates from now on.
    pub fn set_faults(&mut self, faults: Faults) {
        self.control(Command::SetFaults(faults));
    }

    /// New server knobs from now on. `lock_ms` and `retention_ms` change on the running store;
    /// its table and event log carry on.
    pub fn set_server(&mut self, server: ServerConfig) {
        self.control(Command::SetServer(server));
    }

    /// New client policy for checkouts started from now on.
    pub fn set_client(&mut self, client: ClientConfig) {
        self.control(Command::SetClient(client));
    }

    /// Apply a command that names no checkout and starts none, so it cannot fail.
    fn control(&mut self, command: Command) {
        let _ = self.apply(command);
    }

    /// Bring the world to where an input was recorded: run (with `drive`) until it has run
    /// `events` events, apply what `drive` had applied by then at `at`, and set the clock to
    /// `at` unless an event is due before.
    pub fn reach(&mut self, at: u64, events: u64, drive: &mut dyn Drive) {
        while self.events_run < events && drive.step(self) {}
        drive.settle(self, at);
        // The outbox's events after the last counted one, up to `at` (they are not counted).
        while self.outbox_event_due(at) && self.step() {}
        if self.next_event_at().is_none_or(|t| t > at) {
            self.run_until(at);
        }
    }

    /// Apply `inputs` in order, each where it was recorded ([`World::reach`], moving time with
    /// `drive`), through [`World::apply`]. A recorded input that is refused now is skipped, as
    /// it was when recorded. Returns, for each input, the checkout it started.
    pub fn replay_inputs(
        &mut self,
        inputs: &[Input],
        drive: &mut dyn Drive,
    ) -> Vec<Option<CheckoutId>> {
        let mut started = Vec::with_capacity(inputs.len());
        for input in inputs {
            self.reach(input.at, input.after_events, drive);
            started.push(self.apply(input.command.clone()).ok().flatten());
        }
        started
    }
}
