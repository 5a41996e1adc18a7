//! The checkout's transactional outbox: an `order.paid` message per paid order, written in
//! the same fenced commit as the order's settlement and the saved answer ([`table::paid`],
//! carried by `Db::finish_with`), and a relay ([`relay`]) that delivers unsent messages over
//! HTTP to a consumer (idem-server's `receipts` service, or any other speaking [`wire`]) and
//! marks each sent only after the consumer acknowledged it.
//!
//! What it guarantees: a message exists if and only if its order was paid (a declined order,
//! a fenced worker, a crash before the commit leave none), and every message is delivered
//! at least once. What it does not: deliver once (a relay killed between the consumer's
//! acknowledgement and its own mark sends the message again, and two servers sharing
//! PostgreSQL may both send it), or in order across those resends. A consumer must record
//! the message id in the same transaction as its effect and skip one it has seen, as
//! `consumer::Consumer::process_once` does.

pub mod relay;
pub mod table;
pub mod wire;
