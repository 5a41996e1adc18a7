//! The consumer's lane of one checkout's trace: the `order.paid` message its save wrote to the
//! outbox, each relay delivery and acknowledgement (from `idem_sim::outbox`'s record of them),
//! what the consumer did with each delivery, and whether the relay marked the message sent or
//! died first — at-least-once delivery as the server's relay and `receipts` service run it.

use idem_sim::outbox::{Handled, HopKind};
use idem_sim::{CheckoutId, World};

use crate::model::sequence::{Hop, Lane, Mark, Msg, Trace};

/// Append checkout `c`'s outbox messages to `t`: arrows for the relay's calls, marks for the
/// write, the consumer's handling and the relay's mark (or its death).
pub(super) fn add(world: &World, c: CheckoutId, t: &mut Trace) {
    let outbox = world.outbox();
    for (m, message) in outbox.messages.iter().enumerate() {
        if message.checkout != c {
            continue;
        }
        let m = m as u32;
        let id = ["order-", &message.order.0.to_string(), "-paid"].concat();
        t.marks.push(Mark {
            at: message.written_at,
            lane: Lane::Server,
            kind: "outbox",
            text: ["outbox ← ", &id, " (in the save)"].concat(),
            on: None,
        });
        let mut sends = 0;
        let mut receipts = 0;
        for hop in outbox.hops.iter().filter(|h| h.message == m) {
            let at = t.msgs.len();
            let handled = outbox
                .deliveries
                .iter()
                .find(|d| d.message == m && d.at == hop.sent_at);
            let (kind, label, wire) = match hop.kind {
                HopKind::Delivery => {
                    sends += 1;
                    let label = ["relay #", &sends.to_string(), ": ", &id].concat();
                    let wire = [
                        "POST /deliveries (the outbox's relay)\n\nmessage ",
                        &id,
                        ": order.paid, order ",
                        &message.order.0.to_string(),
                    ]
                    .concat();
                    (Hop::Delivery, label, wire)
                }
                HopKind::Ack => {
                    let said = match handled.map(|d| d.handled) {
                        Some(Handled::Duplicate) => "duplicate",
                        _ => "applied",
                    };
                    let label = ["200 · ", said].concat();
                    let wire = ["HTTP 200\n\n", &id, ": ", said].concat();
                    (Hop::Ack, label, wire)
                }
            };
            t.msgs.push(Msg {
                hop: kind,
                sent_at: hop.sent_at,
                arrivals: [Some(hop.arrives_at), hop.again]
                    .into_iter()
                    .flatten()
                    .collect(),
                lost: false,
                late: false,
                label,
                wire,
            });
            match hop.kind {
                HopKind::Delivery => {
                    // What the consumer did at each arrival (a duplicated delivery arrives twice).
                    for d in outbox.deliveries.iter().filter(|d| {
                        d.message == m && (d.at == hop.arrives_at || Some(d.at) == hop.again)
                    }) {
                        let (kind, text) = match d.handled {
                            Handled::Duplicate => ("skipped", ["seen ", &id, ": skipped"].concat()),
                            Handled::Applied if receipts == 0 => {
                                ("receipt", "✉ receipt sent".into())
                            }
                            Handled::Applied => ("receipt-again", "✉ a second receipt sent".into()),
                        };
                        receipts += u32::from(d.handled == Handled::Applied);
                        let on = Some(at);
                        t.marks.push(Mark {
                            at: d.at,
                            lane: Lane::Receipts,
                            kind,
                            text,
                            on,
                        });
                        if d.crashed {
                            t.marks.push(Mark {
                                at: d.at,
                                lane: Lane::Receipts,
                                kind: "consumer-died",
                                text: "✝ died before its 200".into(),
                                on: None,
                            });
                        }
                    }
                }
                HopKind::Ack => {
                    let (kind, text) = if hop.relay_died {
                        ("relay-died", "✝ relay died before marking it sent")
                    } else if message.sent_at == Some(hop.arrives_at) {
                        ("marked-sent", "outbox: marked sent")
                    } else {
                        continue;
                    };
                    t.marks.push(Mark {
                        at: hop.arrives_at,
                        lane: Lane::Server,
                        kind,
                        text: text.into(),
                        on: Some(at),
                    });
                }
            }
        }
    }
}
