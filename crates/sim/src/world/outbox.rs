//! The outbox's relay and the receipts consumer in virtual time, as idem-server runs them
//! (crates/server/README.md, "The outbox"): a paid order's fenced save writes its `order.paid`
//! message ([`World::write_outbox`]); a relay pass sends every unsent message; the consumer
//! handles a delivery through `process_once` (the receipt and the message id in one step) and
//! acknowledges; the relay marks a message sent only when that acknowledgement reaches it.
//!
//! Its faults (`relay_crash_after_send`, `consumer_crash_after_effect`, `duplicate_delivery`,
//! `reorder_delivery`) are drawn from the outbox's own stream, and only when there is a message,
//! so a world's other draws (and its history hash) are what they were without it.

use super::{Ev, World};
use crate::checker::Violation;
use crate::ids::{CheckoutId, OrderId};
use crate::outbox::{Delivery, Handled, HopKind, OutboxHop};

/// Time between two relay passes (idem-server's `--relay-interval-ms` default is 1 s too).
pub const RELAY_INTERVAL_MS: u64 = 1_000;

/// A message's first sends may meet the outbox's faults; later ones go through. Without this
/// bound a fault at probability 1 (a lesson's) would crash-loop the relay and a run would never
/// drain; a real relay's crashes end too.
const FAULTY_SENDS: u32 = 3;

impl World {
    /// The paid order's `order.paid` message, written in the same step as its fenced save.
    pub(super) fn write_outbox(&mut self, order: OrderId, checkout: CheckoutId) {
        self.outbox.write(order, checkout, self.now);
        self.schedule_relay_pass();
    }

    /// A relay pass is due when something is unsent and none is scheduled.
    fn schedule_relay_pass(&mut self) {
        if self.outbox.pass_pending || self.outbox.unsent() == 0 {
            return;
        }
        self.outbox.pass_pending = true;
        self.schedule(self.now + RELAY_INTERVAL_MS, Ev::RelayPass);
    }

    /// Whether message `m`'s current send may still meet a fault.
    fn faulty(&self, m: u32) -> bool {
        self.outbox
            .messages
            .get(m as usize)
            .is_some_and(|msg| msg.sends <= FAULTY_SENDS)
    }

    /// One way of the relay's HTTP call: latency plus jitter, from the outbox's stream.
    fn delivery_delay(&mut self) -> u64 {
        let f = self.net.faults();
        let (latency, jitter) = (f.latency_ms, f.jitter_ms);
        latency + self.outbox_rng.upto(jitter)
    }

    /// The relay sends every unsent message (a message in flight whose acknowledgement is late
    /// is sent again, as a timed-out call would be), then schedules its next pass.
    pub(super) fn on_relay_pass(&mut self) {
        self.outbox.pass_pending = false;
        let unsent = self.outbox.unsent.clone();
        for m in unsent {
            if let Some(msg) = self.outbox.messages.get_mut(m as usize) {
                msg.sends += 1;
            }
            let faulty = self.faulty(m);
            let f = self.net.faults();
            let (p_dup, p_reorder) = (f.duplicate_delivery, f.reorder_delivery);
            let mut delay = self.delivery_delay();
            if faulty && self.outbox_rng.chance(p_reorder) {
                self.counters.deliveries_reordered += 1;
                delay += self.outbox_rng.upto(2 * RELAY_INTERVAL_MS);
            }
            self.schedule(self.now + delay, Ev::Deliver(m));
            let mut again = None;
            if faulty && self.outbox_rng.chance(p_dup) {
                self.counters.deliveries_duplicated += 1;
                let at = self.now + self.delivery_delay();
                self.schedule(at, Ev::Deliver(m));
                again = Some(at);
            }
            self.record_hop(m, HopKind::Delivery, self.now + delay, again);
        }
        self.schedule_relay_pass();
    }

    /// A delivery reaches the consumer: it handles it (the world's step, the dedupe unless a
    /// bug removed it), then acknowledges unless it crashes first.
    pub(super) fn on_deliver(&mut self, m: u32) {
        let consume = self.steps.consume;
        let handled = consume(self, m);
        let p_crash = self.net.faults().consumer_crash_after_effect;
        let crashed = self.faulty(m) && self.outbox_rng.chance(p_crash);
        if self.records_in_full() {
            self.outbox.deliveries.push(Delivery {
                message: m,
                at: self.now,
                handled,
                crashed,
            });
        }
        if crashed {
            self.counters.consumer_crashes += 1;
            return;
        }
        let at = self.now + self.delivery_delay();
        self.schedule(at, Ev::Ack(m));
        self.record_hop(m, HopKind::Ack, at, None);
    }

    /// The consumer's 2xx reaches the relay: it marks the message sent, unless it dies first.
    pub(super) fn on_ack(&mut self, m: u32) {
        let p_crash = self.net.faults().relay_crash_after_send;
        if self.faulty(m) && self.outbox_rng.chance(p_crash) {
            self.counters.relay_crashes += 1;
            let now = self.now;
            let ack = self
                .outbox
                .hops
                .iter_mut()
                .rev()
                .find(|h| h.message == m && h.kind == HopKind::Ack && h.arrives_at == now);
            if let Some(ack) = ack {
                ack.relay_died = true;
            }
            return;
        }
        self.outbox.mark_sent(m, self.now);
    }

    /// Keep one way of a relay call for the sequence diagram (full history only).
    fn record_hop(&mut self, message: u32, kind: HopKind, arrives_at: u64, again: Option<u64>) {
        if self.records_in_full() {
            self.outbox.hops.push(OutboxHop {
                message,
                kind,
                sent_at: self.now,
                arrives_at,
                again,
                relay_died: false,
            });
        }
    }

    /// The consumer's effect: a receipt for the message's order. Checked at once: a second
    /// receipt for an order, or one for an order never paid, breaks `one-receipt`.
    pub(super) fn send_receipt(&mut self, m: u32) {
        let receipts = self.outbox.send_receipt(m);
        let Some(order) = self.outbox.messages.get(m as usize).map(|msg| msg.order) else {
            return;
        };
        self.counters.receipts += 1;
        if receipts >= 2 {
            self.counters.duplicate_receipts += 1;
        }
        if receipts == 2 {
            self.checker.add(Violation::ReceiptCount {
                order,
                receipts,
                paid: true,
            });
        }
    }

    /// After the run drained: every paid order has had its receipt (the relay delivered every
    /// message once faults stopped).
    pub(super) fn outbox_end_checks(&mut self) {
        let missing: Vec<_> = self
            .outbox
            .miscounted()
            .filter(|(_, t)| t.receipts < 2)
            .collect();
        for (order, t) in missing {
            self.checker.add(Violation::ReceiptCount {
                order,
                receipts: t.receipts,
                paid: t.paid,
            });
        }
    }
}

/// The correct consumer: `process_once` keyed by the message id, the receipt and the id in one
/// step.
pub(super) fn process_once(w: &mut World, m: u32) -> Handled {
    if !w.outbox.record_processed(m) {
        w.counters.redeliveries_skipped += 1;
        return Handled::Duplicate;
    }
    w.send_receipt(m);
    Handled::Applied
}
