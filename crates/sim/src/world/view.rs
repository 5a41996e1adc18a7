//! Read-only views of the world (for the demo, the lab and the tests) and the end-of-run checks.

use idem_client::Journal;
use idem_store::{Event, RowView, Status, Store, Table};
use uuid::Uuid;

use super::{Input, World};
use crate::checker::{Verdict, Violation};
use crate::counters::Counters;
use crate::history::{AttemptRecord, CheckoutRecord, History};
use crate::ids::CheckoutId;
use crate::network::NetStats;
use crate::payco::PayCo;
use crate::properties::{Breach, Properties, Property};
use crate::receipt::Receipt;

impl World {
    /// The store (claim table rows via `rows(now)`, events via `events_since(seq)`).
    pub fn store(&self) -> &Store {
        &self.server.store
    }

    /// The claim table as the demo shows it, now.
    pub fn rows(&self) -> Vec<RowView> {
        self.server.store.rows(self.now)
    }

    /// Store events with sequence number ≥ `seq`.
    pub fn store_events_since(&self, seq: u64) -> impl Iterator<Item = &Event> + '_ {
        self.server.store.events_since(seq)
    }

    /// PayCo's ledger.
    pub fn payco(&self) -> &PayCo {
        &self.payco
    }

    /// Money movements so far.
    pub fn charges(&self) -> usize {
        self.payco.charges().len()
    }

    /// Checkouts charged more than once.
    pub fn double_charged(&self) -> u64 {
        self.payco.double_charged_count()
    }

    /// The history so far.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// Every checkout's line.
    pub fn checkouts(&self) -> &[CheckoutRecord] {
        &self.history.checkouts
    }

    /// One checkout's line.
    pub fn checkout(&self, id: CheckoutId) -> Option<&CheckoutRecord> {
        self.history.checkouts.get(id.0 as usize)
    }

    /// One checkout's attempts (ok / fail / info), in order.
    pub fn attempts_of(&self, id: CheckoutId) -> Vec<&AttemptRecord> {
        self.history.attempts_of(id).collect()
    }

    /// The journal record a same-key checkout's page holds now (key, payload bytes, attempts):
    /// `None` once the operation finished and cleared it, or for naive pages.
    pub fn journal_record(&self, id: CheckoutId) -> Option<idem_client::Record> {
        let client = self.clients.get(id.0 as usize)?;
        let journal: &dyn Journal = self.journals[client.journal].as_ref();
        journal.load(&super::client::op_name(id)).ok().flatten()
    }

    /// The journal a checkout uses (the host's, if it supplied one).
    pub fn journal_of(&self, id: CheckoutId) -> Option<&dyn Journal> {
        let client = self.clients.get(id.0 as usize)?;
        Some(self.journals[client.journal].as_ref())
    }

    /// Running totals.
    pub fn counters(&self) -> Counters {
        Counters {
            deduped: self.payco.deduped(),
            ..self.counters
        }
    }

    /// Answer-level violations the checker found so far, in order (capped at 50).
    pub fn violations(&self) -> &[Violation] {
        &self.checker.violations
    }

    /// The outbox: its messages, the deliveries that reached the consumer, receipts per order.
    pub fn outbox(&self) -> &crate::outbox::Outbox {
        &self.outbox
    }

    /// What the network did.
    pub fn net_stats(&self) -> NetStats {
        self.net.stats()
    }

    /// Current fault rates.
    pub fn faults(&self) -> &crate::config::Faults {
        self.net.faults()
    }

    /// Whether the one-shot drops (request, response) are armed.
    pub fn armed_drops(&self) -> (bool, bool) {
        self.net.armed()
    }

    /// Interactive inputs so far.
    pub fn inputs(&self) -> &[Input] {
        &self.inputs
    }

    /// Whether the one-shot PayCo timeout is armed.
    pub fn armed_payco_timeout(&self) -> bool {
        self.oneshot.payco_timeout
    }

    /// Whether the one-shots (crash after charge, slow worker, decline) are armed.
    pub fn armed_worker_faults(&self) -> (bool, bool, bool) {
        (self.oneshot.crash, self.oneshot.slow, self.oneshot.decline)
    }

    /// SHA-256 of the canonical history (attempts, checkouts, PayCo's ledger).
    pub fn history_hash(&self) -> String {
        self.history.hash(self.payco.charges())
    }

    /// The command that reproduces this run.
    pub fn reproduce_command(&self) -> String {
        if let Some(r) = &self.reproduce {
            return r.clone();
        }
        crate::reproduce::lab_command(&self.config, None)
    }

    /// The checker's verdict now. The end-of-run invariants (stuck in flight, saved answers,
    /// unreported outcomes) are only checked by [`World::finish`].
    pub fn verdict(&self) -> Verdict {
        let mut violations = self.checker.violations.clone();
        for (checkout, charges) in self.payco.double_charged() {
            if violations.len() >= 100 {
                break;
            }
            violations.push(Violation::DoubleCharge { checkout, charges });
        }
        let unresolved = self
            .reported_unknown
            .iter()
            .copied()
            .filter(|c| {
                self.history.checkouts[c.0 as usize].outcome
                    == crate::history::CheckoutOutcome::Unknown
            })
            .collect();
        Verdict {
            seed: self.config.seed,
            violations,
            unknown: self.reported_unknown.clone(),
            unresolved,
            reproduce: self.reproduce_command(),
        }
    }

    pub(super) fn end_checks(&mut self) {
        let lock_ms = self.server.store.config().lock_ms;
        // Any lease still live now is past its lock_ms by then: a retry must be able to take
        // every in-flight record over. One that refuses is stuck.
        self.now += lock_ms + 1;
        let now = self.now;
        let mut found = Vec::new();
        let mut in_flight = Vec::new();
        self.server.store.table().for_each(&mut |id, r| {
            if r.is_expired(now, lock_ms) {
                return;
            }
            match &r.status {
                Status::InFlight { .. } => in_flight.push((id.key.to_owned(), r.fingerprint)),
                // Released: no lease to be stuck on; its own payload claims it again.
                Status::Released { .. } => {}
                Status::Done { response } => {
                    let Ok(key) = Uuid::parse_str(id.key) else {
                        return;
                    };
                    let Some(first) = self.checker.first_answer(&key) else {
                        return;
                    };
                    if Receipt::from_body(&response.body).as_ref() != Some(first) {
                        found.push(Violation::SavedAnswerDiffers {
                            key: id.key.to_owned(),
                        });
                    }
                }
            }
        });
        let route = idem_store::RouteConfig::optional(
            super::OPERATION,
            idem_store::ErrorPolicy::ReleaseClaim,
        );
        for (key, fp) in in_flight {
            let store = &mut self.server.store;
            match store.begin_with_fingerprint(now, super::SCOPE, Some(&key), fp, &route) {
                idem_store::Begin::Execute { id, lease, .. } => {
                    // The probe's own claim: give it back.
                    let _ = store.release(now, &id, &lease);
                }
                _ => found.push(Violation::StuckInFlight { key }),
            }
        }
        for v in found {
            self.checker.add(v);
        }
        self.outbox_end_checks();
        // Every 422 of the run against every run of the run.
        self.checker.check_mismatches();
        for rec in &self.history.checkouts {
            if rec.outcome == crate::history::CheckoutOutcome::Pending {
                self.checker.add(Violation::Unreported { checkout: rec.id });
            }
            // Every final answer against PayCo's final ledger.
            self.checker
                .check_answer(rec.id, rec.amount, rec.outcome, &self.payco);
        }
    }

    /// Check checkout `c`'s final answer (if it has one) against PayCo now: when the answer is
    /// given, and again whenever PayCo moves money for `c`.
    pub(super) fn check_answer(&mut self, c: CheckoutId) {
        if let Some(rec) = self.history.checkouts.get(c.0 as usize) {
            self.checker
                .check_answer(c, rec.amount, rec.outcome, &self.payco);
        }
    }

    /// Note first breaches after an event (O(1) unless the checker found something new).
    pub(super) fn track_properties(&mut self) {
        if self.props.double.is_none() && self.payco.double_charged_count() > 0 {
            // The charge that made an order's count reach two is the latest one.
            if let Some(last) = self.payco.charges().last() {
                self.props.double = Some(Breach {
                    at: self.now,
                    event: self.events_run,
                    violation: Violation::DoubleCharge {
                        checkout: last.checkout,
                        charges: 2,
                    },
                });
            }
        }
        let (now, events) = (self.now, self.events_run);
        self.props.observe(&self.checker.violations, now, events);
    }

    /// The live properties with the moment each first broke. One pass over the claim table
    /// for "stuck in flight"; the rest was tracked event by event.
    pub fn properties(&self) -> Properties {
        let mut stuck = self.props.stuck.clone();
        if stuck.is_none() {
            let lock_ms = self.server.store.config().lock_ms;
            let window = self.client_cfg.retry_window_ms;
            let now = self.now;
            let mut first: Option<(u64, String)> = None;
            self.server.store.table().for_each(&mut |id, r| {
                if let Status::InFlight { lease } = &r.status {
                    let since = lease.locked_at + lock_ms + window;
                    if now >= since && first.as_ref().is_none_or(|(t, _)| since < *t) {
                        first = Some((since, id.key.to_owned()));
                    }
                }
            });
            stuck = first.map(|(at, key)| Breach {
                at,
                event: self.events_run,
                violation: Violation::StuckInFlight { key },
            });
        }
        Properties {
            one_charge: Property {
                broke: self.props.double.clone(),
            },
            replays_identical: Property {
                broke: self.props.replay.clone(),
            },
            none_stuck: Property { broke: stuck },
            agrees_with_payco: Property {
                broke: self.props.disagrees.clone(),
            },
            mismatch_never_ran: Property {
                broke: self.props.mismatch_ran.clone(),
            },
            one_receipt: Property {
                broke: self.props.receipts.clone(),
            },
        }
    }
}
