//! The checkout's transactional outbox, its relay and the receipts consumer, as state: what
//! idem-server's `outbox` table, relay and `receipts` service hold (crates/server/README.md,
//! "The outbox"). The events that move it (a relay pass, a delivery, an acknowledgement) are
//! the world's, in `world/outbox.rs`; this file only keeps the books, so the checker can count
//! receipts per order.
//!
//! Not in the history hash: the outbox came after the golden hashes were pinned, and it reads
//! its faults from a stream of its own, so everything the hash covers is what it was.

use serde::{Deserialize, Serialize};

use crate::ids::{CheckoutId, OrderId};

/// One `order.paid` message, written in the paid order's fenced save.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutboxMessage {
    /// The order it announces (its id is `order-<id>-paid` on the server).
    pub order: OrderId,
    /// The checkout whose work saved it.
    pub checkout: CheckoutId,
    /// When the save wrote it.
    pub written_at: u64,
    /// When the relay marked it sent (after the consumer's acknowledgement), if it did.
    pub sent_at: Option<u64>,
    /// Times the relay sent it (a duplicate on the way is not counted: the relay sent once).
    pub sends: u32,
}

/// What the consumer did with one delivery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Handled {
    /// First time this message id was seen: the receipt was sent, the id recorded with it.
    Applied,
    /// The id was recorded already: nothing sent, acknowledged all the same.
    Duplicate,
}

/// One delivery that reached the consumer (kept only with `history: full`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Delivery {
    /// Index into [`Outbox::messages`].
    pub message: u32,
    /// When it reached the consumer.
    pub at: u64,
    /// What the consumer did.
    pub handled: Handled,
    /// The consumer crashed after its effect, before acknowledging.
    pub crashed: bool,
}

/// Which way one of the relay's HTTP calls goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum HopKind {
    /// The relay sends the message to the consumer.
    Delivery,
    /// The consumer's 2xx goes back to the relay.
    Ack,
}

/// One way of a relay call, as the sequence diagram draws it (kept only with `history: full`).
/// Its arrival is drawn when it is sent, like the network's messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutboxHop {
    /// Index into [`Outbox::messages`].
    pub message: u32,
    /// Which way.
    pub kind: HopKind,
    /// When it left.
    pub sent_at: u64,
    /// When it arrives.
    pub arrives_at: u64,
    /// When its copy arrives, for a delivery duplicated on the way.
    pub again: Option<u64>,
    /// For an acknowledgement: the relay died once it arrived, before marking the message sent
    /// (so its next pass sends the message again).
    pub relay_died: bool,
}

/// Per order: whether its save settled it paid, and how many receipts went out for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// The order was settled paid (a fenced save that landed).
    pub paid: bool,
    /// Receipts the consumer sent for it.
    pub receipts: u32,
}

/// The outbox table, the relay's progress and the consumer's books.
#[derive(Clone, Debug, Default)]
pub struct Outbox {
    /// Every message written, in id order (a message's id is its index).
    pub messages: Vec<OutboxMessage>,
    /// Deliveries that reached the consumer, in order (full history only).
    pub deliveries: Vec<Delivery>,
    /// The relay's calls, both ways, in the order sent (full history only).
    pub hops: Vec<OutboxHop>,
    /// Messages not marked sent yet, in id order: what the next relay pass sends. (Vectors
    /// here and below, not sets: ids are indices written in order, and each `BTreeSet` key
    /// type instantiates the B-tree's code again in the demo's wasm.)
    pub(crate) unsent: Vec<u32>,
    /// The consumer's `process_once` table: by message id, whether it was handled.
    processed: Vec<bool>,
    /// Per order id (the server numbers orders from 1, so a vector).
    tallies: Vec<Tally>,
    /// A relay pass is scheduled.
    pub(crate) pass_pending: bool,
}

impl Outbox {
    /// The paid order's message, written now; its id.
    pub(crate) fn write(&mut self, order: OrderId, checkout: CheckoutId, now: u64) -> u32 {
        let id = self.messages.len() as u32;
        self.messages.push(OutboxMessage {
            order,
            checkout,
            written_at: now,
            sent_at: None,
            sends: 0,
        });
        self.unsent.push(id); // the largest id yet, so `unsent` stays sorted
        self.tally_mut(order).paid = true;
        id
    }

    /// The consumer's `process_once` table: records `message`'s id; false when it was
    /// recorded already (a duplicate, whose effect must not run again).
    pub(crate) fn record_processed(&mut self, message: u32) -> bool {
        let i = message as usize;
        if i >= self.processed.len() {
            self.processed.resize(i + 1, false);
        }
        !core::mem::replace(&mut self.processed[i], true)
    }

    /// The receipt itself (the effect), with no dedupe: what a consumer without one does on
    /// every delivery.
    pub(crate) fn send_receipt(&mut self, message: u32) -> u32 {
        let Some(order) = self.messages.get(message as usize).map(|m| m.order) else {
            return 0;
        };
        let tally = self.tally_mut(order);
        tally.receipts += 1;
        tally.receipts
    }

    /// The relay records the consumer's acknowledgement: the message will not be sent again.
    pub(crate) fn mark_sent(&mut self, message: u32, now: u64) {
        if let Ok(i) = self.unsent.binary_search(&message) {
            self.unsent.remove(i);
            if let Some(m) = self.messages.get_mut(message as usize) {
                m.sent_at = Some(now);
            }
        }
    }

    /// Receipts sent for `order` so far.
    pub fn receipts_for(&self, order: OrderId) -> u32 {
        self.tally(order).receipts
    }

    /// Receipts sent in all.
    pub fn receipts(&self) -> u64 {
        self.tallies.iter().map(|t| u64::from(t.receipts)).sum()
    }

    /// Messages still to be marked sent.
    pub fn unsent(&self) -> usize {
        self.unsent.len()
    }

    /// Orders whose receipts are not one per paid order (none for an unpaid one), with their
    /// tally, in order id order.
    pub fn miscounted(&self) -> impl Iterator<Item = (OrderId, Tally)> + '_ {
        self.tallies
            .iter()
            .enumerate()
            .filter(|(_, t)| t.receipts != u32::from(t.paid))
            .map(|(i, t)| (OrderId(i as u64), *t))
    }

    fn tally(&self, order: OrderId) -> Tally {
        self.tallies
            .get(order.0 as usize)
            .copied()
            .unwrap_or_default()
    }

    fn tally_mut(&mut self, order: OrderId) -> &mut Tally {
        let i = usize::try_from(order.0).unwrap_or(usize::MAX);
        if i >= self.tallies.len() {
            // Orders are numbered in sequence, so this grows by one slot at a time.
            self.tallies.resize(i.saturating_add(1), Tally::default());
        }
        &mut self.tallies[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_receipt_per_paid_order_counts_and_a_second_one_is_miscounted() {
        let mut o = Outbox::default();
        let m = o.write(OrderId(1), CheckoutId(0), 5);
        assert!(o.record_processed(m));
        o.send_receipt(m);
        assert!(!o.record_processed(m));
        assert_eq!(o.receipts_for(OrderId(1)), 1);
        assert_eq!(o.miscounted().count(), 0);
        o.send_receipt(m);
        assert_eq!(o.miscounted().collect::<Vec<_>>().len(), 1);
    }

    #[test]
    fn acknowledgements_in_any_order_leave_the_rest_unsent_in_id_order() {
        let mut o = Outbox::default();
        for checkout in 0..4 {
            o.write(OrderId(u64::from(checkout) + 1), CheckoutId(checkout), 5);
        }
        o.mark_sent(2, 10);
        o.mark_sent(0, 11);
        o.mark_sent(2, 12); // a late duplicate acknowledgement changes nothing
        o.mark_sent(9, 13); // no such message
        assert_eq!(o.unsent, vec![1, 3]);
        let sent: Vec<_> = o.messages.iter().map(|m| m.sent_at).collect();
        assert_eq!(sent, vec![Some(11), None, Some(10), None]);
        assert!(o.record_processed(3));
        assert!(o.record_processed(0));
        assert!(!o.record_processed(3));
        assert!(o.record_processed(1));
    }

    #[test]
    fn a_paid_order_without_receipt_is_miscounted_until_marked_and_received() {
        let mut o = Outbox::default();
        let m = o.write(OrderId(2), CheckoutId(1), 5);
        assert_eq!(o.unsent(), 1);
        assert_eq!(
            o.miscounted().collect::<Vec<_>>(),
            vec![(
                OrderId(2),
                Tally {
                    paid: true,
                    receipts: 0
                }
            )]
        );
        o.send_receipt(m);
        o.mark_sent(m, 9);
        assert_eq!(o.unsent(), 0);
        assert_eq!(o.messages[0].sent_at, Some(9));
        assert_eq!(o.miscounted().count(), 0);
    }
}
