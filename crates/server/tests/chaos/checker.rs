//! The checker: what every client was told, against what happened, read after a final
//! SIGKILL of every `serve` and a restart on the same database: PayCo's ledger (PayCo is the
//! payment provider; its rows are the money), the checkout's `/api/orders`, and each 2xx
//! key's state. The rules:
//!
//! - at most one charge per checkout (each payload of the run has an amount of its own, so
//!   PayCo's rows say whose they are even when the checkout lost its order);
//! - every charge is for an order the checkout still has;
//! - a 2xx names an order of this key and payload, charged exactly once, paid, and durable
//!   (the key's state after the restart is that answer, byte for byte);
//! - a 402 means not charged;
//! - a 422 means this payload never ran under that key (no order of it under the key);
//! - no other 4xx, and never a 500;
//! - every unknown outcome reconciles to the ledger's truth: the key's state, or the same
//!   request resent under the key, answers as above;
//! - on PostgreSQL, no pooled connection goes back to its pool inside a transaction: once the
//!   clients are done no session of the checkout's database is idle in a transaction, and
//!   PostgreSQL never logged a `BEGIN` inside an open transaction (`pg_sessions`), and no
//!   `serve` running at the end counts a connection its pool had to clean
//!   (`idem_db_connections_cleaned_total`, 0 while every transaction's guard holds).

use std::{collections::BTreeMap, fmt};

use idem_client::{KeyState, OutcomeKind};
use serde_json::Value;

use crate::{
    clients::{OpReport, Reconciled},
    plan::Payload,
};

/// One broken rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Violation {
    /// More than one charge for one checkout.
    DoubleCharge { cart: String, orders: Vec<i64> },
    /// PayCo charged an order the checkout no longer has (its row was lost).
    ChargeForLostOrder { order: i64 },
    /// Some attempt was answered 500.
    ServerError { op: String, statuses: Vec<u16> },
    /// A 2xx whose order is not paid and charged once, or not in the checkout at all.
    PaidButWrong {
        op: String,
        how: String,
        why: String,
    },
    /// A 2xx that is another payload's answer under the same key (reconciling could reach
    /// it before the key-state answer named the request holding the key, and the SDK checked
    /// it against its own payload).
    AnotherPayloadsAnswer {
        op: String,
        how: String,
        order: i64,
        cart: String,
    },
    /// A 2xx that did not survive the restart.
    PaidNotDurable { op: String, state: String },
    /// A 402, and yet the checkout was charged.
    DeclinedButCharged { op: String, orders: Vec<i64> },
    /// A 422 to a payload that did run under that key.
    MismatchButRan {
        op: String,
        order: i64,
        status: String,
        /// The first payload's claim was released and another payload claimed the key
        /// (issue 22: a release frees the key, not just the lease).
        released_then_reused: bool,
    },
    /// A final answer the workload never asks for (400, 401, 404...).
    UnexpectedAnswer { op: String, status: u16 },
    /// An unknown outcome that nothing could settle.
    NotReconciled { op: String, why: String },
    /// A connection of the checkout's pool sat inside a transaction after the run.
    IdleInTransaction { session: String },
    /// PostgreSQL received a `BEGIN` on a connection already inside a transaction.
    BeginInsideTransaction { log_line: String },
    /// A server's pool took back connections inside a transaction and had to clean them.
    PoolCleaned { server: String, count: u64 },
    /// An order with a number of receipts other than one if paid, none otherwise.
    Receipts {
        order: i64,
        status: String,
        receipts: usize,
    },
    /// Outbox messages the relay never got acknowledged after the run.
    OutboxNotDrained { unsent: i64 },
}

impl Violation {
    /// A short name for the kind of rule broken.
    pub fn kind(&self) -> &'static str {
        match self {
            Violation::DoubleCharge { .. } => "double charge",
            Violation::ChargeForLostOrder { .. } => "charge for a lost order",
            Violation::ServerError { .. } => "500",
            Violation::PaidButWrong { .. } => "2xx untrue",
            Violation::AnotherPayloadsAnswer { .. } => "another payload's 2xx",
            Violation::PaidNotDurable { .. } => "2xx not durable",
            Violation::DeclinedButCharged { .. } => "402 but charged",
            Violation::MismatchButRan { .. } => "422 but ran",
            Violation::UnexpectedAnswer { .. } => "unexpected answer",
            Violation::NotReconciled { .. } => "not reconciled",
            Violation::IdleInTransaction { .. } => "idle in transaction",
            Violation::BeginInsideTransaction { .. } => "BEGIN inside a transaction",
            Violation::PoolCleaned { .. } => "pool cleaned a connection",
            Violation::Receipts { .. } => "receipts",
            Violation::OutboxNotDrained { .. } => "outbox not drained",
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Violation::DoubleCharge { cart, orders } => {
                write!(
                    f,
                    "{cart} charged {} times: orders {orders:?}",
                    orders.len()
                )
            }
            Violation::ChargeForLostOrder { order } => write!(
                f,
                "PayCo charged order {order}, which /api/orders does not have"
            ),
            Violation::ServerError { op, statuses } => {
                write!(f, "{op} was answered 500 (statuses {statuses:?})")
            }
            Violation::PaidButWrong { op, how, why } => write!(f, "{op} {how}, but {why}"),
            Violation::AnotherPayloadsAnswer {
                op,
                how,
                order,
                cart,
            } => {
                write!(
                    f,
                    "{op} {how}, but order {order} is {cart}'s, another payload under the same key"
                )?;
                if how.contains("key state") {
                    write!(
                        f,
                        " (the SDK took another payload's saved answer from the key state for \
                         its own: the answer named no request, or the SDK did not compare)"
                    )?;
                }
                Ok(())
            }
            Violation::PaidNotDurable { op, state } => write!(
                f,
                "{op} was answered 2xx, but after the restart its key is {state}"
            ),
            Violation::DeclinedButCharged { op, orders } => {
                write!(
                    f,
                    "{op} was answered 402, but orders {orders:?} were charged"
                )
            }
            Violation::MismatchButRan {
                op,
                order,
                status,
                released_then_reused,
            } => {
                write!(
                    f,
                    "{op} was answered 422, but its payload ran under that key (order {order}, {status})"
                )?;
                if *released_then_reused {
                    write!(
                        f,
                        "; its claim was released and another payload claimed the key \
                         (issue 22: a release frees the key, not just the lease)"
                    )?;
                }
                Ok(())
            }
            Violation::UnexpectedAnswer { op, status } => {
                write!(
                    f,
                    "{op} got a final {status}, which no request of the run should"
                )
            }
            Violation::NotReconciled { op, why } => {
                write!(f, "{op}'s unknown outcome was not reconciled: {why}")
            }
            Violation::IdleInTransaction { session } => write!(
                f,
                "after the run PostgreSQL has a session of the checkout idle in a transaction \
                 (a pooled connection returned inside a transaction): {session}"
            ),
            Violation::PoolCleaned { server, count } => write!(
                f,
                "{server}'s pool took back {count} connection(s) inside a transaction and had \
                 to roll them back (idem_db_connections_cleaned_total): a transaction's guard \
                 missed"
            ),
            Violation::Receipts {
                order,
                status,
                receipts,
            } => write!(
                f,
                "order {order} ({status}) has {receipts} receipt(s): a paid order has one \
                 (its order.paid message processed once), any other none"
            ),
            Violation::OutboxNotDrained { unsent } => write!(
                f,
                "{unsent} outbox message(s) still unsent after the run: the relay never got \
                 them acknowledged"
            ),
            Violation::BeginInsideTransaction { log_line } => write!(
                f,
                "PostgreSQL got a BEGIN on a connection already inside a transaction (a pooled \
                 connection returned inside one): {log_line}"
            ),
        }
    }
}

/// One operation, with what became of it after the run.
pub struct Story {
    pub report: OpReport,
    /// The key's state read after the final restart, before any reconciliation.
    pub state_after: Result<KeyState, String>,
    /// How its outcome was settled, if it was unknown.
    pub reconciled: Option<Reconciled>,
}

/// What the checkout and PayCo hold after the run.
pub struct Truth {
    /// id → (key, cart, status), from `/api/orders`.
    orders: BTreeMap<i64, (String, String, String)>,
    /// order → how many `charged` ledger rows, and their amount.
    charges: BTreeMap<i64, (usize, i64)>,
    /// PostgreSQL's sessions of the checkout left idle in a transaction after the run.
    pub idle_in_transaction: Vec<String>,
    /// PostgreSQL's log lines warning of a `BEGIN` inside an open transaction.
    pub begins_inside_transactions: Vec<String>,
    /// `idem_db_connections_cleaned_total` of each `serve` running at the end (since its
    /// last start).
    pub pool_cleaned: Vec<(String, u64)>,
    /// order → its receipts, from the receipts service after the outbox was drained.
    receipts: BTreeMap<i64, usize>,
    /// Outbox messages still unsent then.
    unsent: i64,
}

impl Truth {
    /// From `/api/orders` and PayCo's `/ledger`, as JSON rows.
    pub fn read(orders: &[Value], ledger: &[Value]) -> Truth {
        let text = |row: &Value, name: &str| row[name].as_str().unwrap_or_default().to_owned();
        let orders = orders
            .iter()
            .filter_map(|row| {
                let id = row["id"].as_i64()?;
                Some((
                    id,
                    (text(row, "key"), text(row, "cart"), text(row, "status")),
                ))
            })
            .collect();
        let mut charges = BTreeMap::new();
        for row in ledger {
            let order = row["order"].as_i64();
            let amount = row["amount"].as_i64().unwrap_or_default();
            if let (Some(order), Some("charged")) = (order, row["outcome"].as_str()) {
                charges.entry(order).or_insert((0, amount)).0 += 1;
            }
        }
        Truth {
            orders,
            charges,
            idle_in_transaction: Vec::new(),
            begins_inside_transactions: Vec::new(),
            pool_cleaned: Vec::new(),
            receipts: BTreeMap::new(),
            unsent: 0,
        }
    }

    /// The receipts service's `GET /api/receipts` rows, and how many outbox messages were
    /// still unsent when they were read.
    pub fn read_receipts(&mut self, receipts: &Value, unsent: i64) {
        for row in receipts.as_array().into_iter().flatten() {
            if let Some(order) = row["order"].as_i64() {
                *self.receipts.entry(order).or_insert(0) += 1;
            }
        }
        self.unsent = unsent;
    }

    /// The charged orders of `payload`, from PayCo's rows alone (by amount: the checkout's
    /// own rows may be what was lost), one entry per charge.
    fn charged_orders_of(&self, payload: &Payload) -> Vec<i64> {
        let mut orders = Vec::new();
        for (&order, &(count, amount)) in &self.charges {
            if amount == payload.amount {
                orders.extend(std::iter::repeat_n(order, count));
            }
        }
        orders
    }

    /// This key's order of this cart, if it ran.
    fn order_of(&self, key: &str, cart: &str) -> Option<(i64, &str)> {
        self.orders
            .iter()
            .find(|(_, (k, c, _))| k == key && c == cart)
            .map(|(&id, (_, _, status))| (id, status.as_str()))
    }
}

/// Every broken rule of a run.
pub fn check(stories: &[Story], truth: &Truth, release_claim: bool) -> Vec<Violation> {
    let mut found = Vec::new();
    let payloads: BTreeMap<&str, &Payload> = stories
        .iter()
        .map(|s| (s.report.payload.cart.as_str(), &s.report.payload))
        .collect();
    for (cart, payload) in payloads {
        let orders = truth.charged_orders_of(payload);
        if orders.len() > 1 {
            found.push(Violation::DoubleCharge {
                cart: cart.to_owned(),
                orders,
            });
        }
    }
    for &order in truth.charges.keys() {
        if !truth.orders.contains_key(&order) {
            found.push(Violation::ChargeForLostOrder { order });
        }
    }
    for session in &truth.idle_in_transaction {
        found.push(Violation::IdleInTransaction {
            session: session.clone(),
        });
    }
    for log_line in &truth.begins_inside_transactions {
        found.push(Violation::BeginInsideTransaction {
            log_line: log_line.clone(),
        });
    }
    for (server, count) in &truth.pool_cleaned {
        if *count > 0 {
            found.push(Violation::PoolCleaned {
                server: server.clone(),
                count: *count,
            });
        }
    }
    if truth.unsent > 0 {
        found.push(Violation::OutboxNotDrained {
            unsent: truth.unsent,
        });
    }
    // One receipt per paid order, none for any other, and none for an order that is not there.
    let orders = truth.orders.keys().chain(truth.receipts.keys());
    for &order in orders.collect::<std::collections::BTreeSet<_>>() {
        let status = truth
            .orders
            .get(&order)
            .map_or("not in /api/orders", |(_, _, status)| status.as_str());
        let receipts = truth.receipts.get(&order).copied().unwrap_or(0);
        if receipts != usize::from(status == "paid") {
            found.push(Violation::Receipts {
                order,
                status: status.to_owned(),
                receipts,
            });
        }
    }
    for story in stories {
        check_story(story, truth, release_claim, &mut found);
    }
    found
}

fn check_story(story: &Story, truth: &Truth, release_claim: bool, found: &mut Vec<Violation>) {
    let report = &story.report;
    let mut statuses = report.statuses.clone();
    if let Some(Reconciled::Resent { statuses: more, .. }) = &story.reconciled {
        statuses.extend(more);
    }
    if statuses.contains(&500) {
        found.push(Violation::ServerError {
            op: report.label.clone(),
            statuses,
        });
    }
    let answer = |how: &str, kind: &OutcomeKind, found: &mut Vec<Violation>| {
        check_answer(report, how, kind, truth, release_claim, found)
    };
    match (&report.outcome, &story.reconciled) {
        (OutcomeKind::Unknown { .. }, Some(Reconciled::KeyState(kind))) => {
            answer("was reconciled from its key state to", kind, found)
        }
        (OutcomeKind::Unknown { .. }, Some(Reconciled::Resent { outcome, state, .. })) => {
            if matches!(outcome, OutcomeKind::Unknown { .. }) {
                found.push(Violation::NotReconciled {
                    op: report.label.clone(),
                    why: format!("key state {state:?}, and the resent request got no answer"),
                });
            } else {
                let how = format!("(key state {state:?}) was resent and answered");
                answer(&how, outcome, found)
            }
        }
        (OutcomeKind::Unknown { .. }, Some(Reconciled::Failed(why))) => {
            found.push(Violation::NotReconciled {
                op: report.label.clone(),
                why: why.clone(),
            })
        }
        (OutcomeKind::Unknown { .. }, None) => found.push(Violation::NotReconciled {
            op: report.label.clone(),
            why: "never asked".to_owned(),
        }),
        (kind, _) => {
            answer("was answered", kind, found);
            if matches!(
                kind,
                OutcomeKind::Succeeded { .. } | OutcomeKind::Replayed { .. }
            ) {
                check_durable(story, kind, found);
            }
        }
    }
}

/// One final answer against the truth.
fn check_answer(
    report: &OpReport,
    how: &str,
    kind: &OutcomeKind,
    truth: &Truth,
    release_claim: bool,
    found: &mut Vec<Violation>,
) {
    let op = report.label.clone();
    let (key, cart) = (report.key.as_str(), report.payload.cart.as_str());
    match kind {
        OutcomeKind::Succeeded { status, body } | OutcomeKind::Replayed { status, body } => {
            let how = format!("{how} {status} {}", String::from_utf8_lossy(body));
            let order = serde_json::from_slice::<Value>(body)
                .ok()
                .and_then(|v| v["order"].as_i64());
            let why = match order {
                None => Some("the body names no order".to_owned()),
                Some(order) => match truth.orders.get(&order) {
                    None => Some(format!("order {order} is not in /api/orders")),
                    Some((k, c, _)) if k == key && c != cart => {
                        found.push(Violation::AnotherPayloadsAnswer {
                            op,
                            how,
                            order,
                            cart: c.clone(),
                        });
                        return;
                    }
                    Some((k, c, _)) if k != key => {
                        Some(format!("order {order} is another key's ({k}, {c})"))
                    }
                    Some((_, _, status)) if status != "paid" => {
                        Some(format!("order {order} is {status}"))
                    }
                    Some(_) => match truth.charges.get(&order).map_or(0, |c| c.0) {
                        1 => None,
                        n => Some(format!("PayCo charged order {order} {n} times")),
                    },
                },
            };
            if let Some(why) = why {
                found.push(Violation::PaidButWrong { op, how, why });
            }
        }
        OutcomeKind::Rejected { status: 402, .. } => {
            let orders = truth.charged_orders_of(&report.payload);
            if !orders.is_empty() {
                found.push(Violation::DeclinedButCharged { op, orders });
            }
        }
        OutcomeKind::Rejected { status: 422, .. } => {
            if let Some((order, status)) = truth.order_of(key, cart) {
                found.push(Violation::MismatchButRan {
                    op,
                    order,
                    status: status.to_owned(),
                    released_then_reused: release_claim && status == "declined",
                });
            }
        }
        OutcomeKind::Rejected { status, .. } => found.push(Violation::UnexpectedAnswer {
            op,
            status: *status,
        }),
        OutcomeKind::Unknown { .. } => found.push(Violation::NotReconciled {
            op,
            why: "still unknown".to_owned(),
        }),
    }
}

/// A 2xx the run was told must be the key's saved answer after the restart, byte for byte.
fn check_durable(story: &Story, kind: &OutcomeKind, found: &mut Vec<Violation>) {
    let (OutcomeKind::Succeeded { status, body } | OutcomeKind::Replayed { status, body }) = kind
    else {
        return;
    };
    let holds = matches!(
        &story.state_after,
        Ok(KeyState::Done { status: s, body: b }) if s == status && b == body
    );
    if !holds {
        let state = match &story.state_after {
            Ok(KeyState::Done { status, body }) => {
                format!("done with {status} {}", String::from_utf8_lossy(body))
            }
            Ok(other) => format!("{other:?}"),
            Err(why) => format!("unreadable ({why})"),
        };
        found.push(Violation::PaidNotDurable {
            op: story.report.label.clone(),
            state,
        });
    }
}

#[cfg(test)]
mod tests {
    //! The checker on hand-made truths: each rule fires on the case it names and stays
    //! quiet on a run that kept the promise.

    use super::*;

    fn report(label: &str, key: &str, cart: &str, outcome: OutcomeKind) -> OpReport {
        OpReport {
            label: label.to_owned(),
            payload: Payload {
                cart: cart.to_owned(),
                amount: 100,
                card: "tok_visa",
            },
            key: key.to_owned(),
            statuses: Vec::new(),
            outcome,
        }
    }

    fn paid(order: i64) -> OutcomeKind {
        OutcomeKind::Succeeded {
            status: 201,
            body: format!(r#"{{"order":{order},"status":"paid"}}"#).into_bytes(),
        }
    }

    fn story(report: OpReport) -> Story {
        let state_after = match &report.outcome {
            OutcomeKind::Succeeded { status, body } => Ok(KeyState::Done {
                status: *status,
                body: body.clone(),
            }),
            _ => Ok(KeyState::NotFound),
        };
        Story {
            report,
            state_after,
            reconciled: None,
        }
    }

    fn truth(orders: &[(i64, &str, &str, &str)], charged: &[i64]) -> Truth {
        let orders: Vec<Value> = orders
            .iter()
            .map(|(id, key, cart, status)| {
                serde_json::json!({"id": id, "key": key, "cart": cart, "status": status})
            })
            .collect();
        let ledger: Vec<Value> = charged
            .iter()
            .map(|order| serde_json::json!({"order": order, "amount": 100, "outcome": "charged"}))
            .collect();
        let mut truth = Truth::read(&orders, &ledger);
        // The receipts service kept its promise: one receipt per paid order.
        let receipts: Vec<Value> = orders
            .iter()
            .filter(|o| o["status"] == "paid")
            .map(|o| serde_json::json!({"order": o["id"]}))
            .collect();
        truth.read_receipts(&Value::Array(receipts), 0);
        truth
    }

    #[test]
    fn receipts_other_than_one_per_paid_order_are_caught() {
        let stories = [story(report("c00.a", "k0", "cart-00", paid(1)))];
        let orders = [
            (1, "k0", "cart-00", "paid"),
            (2, "k1", "cart-01", "declined"),
        ];
        let mut twice = truth(&orders, &[1]);
        twice.read_receipts(&serde_json::json!([{"order": 1}]), 0);
        let found = check(&stories, &twice, true);
        assert_eq!(
            found,
            vec![Violation::Receipts {
                order: 1,
                status: "paid".into(),
                receipts: 2
            }]
        );
        let mut declined = truth(&orders, &[1]);
        declined.read_receipts(&serde_json::json!([{"order": 2}, {"order": 9}]), 3);
        let found = check(&stories, &declined, true);
        assert_eq!(
            kinds(&found),
            ["outbox not drained", "receipts", "receipts"],
            "{found:?}"
        );
    }

    fn kinds(found: &[Violation]) -> Vec<&'static str> {
        found.iter().map(Violation::kind).collect()
    }

    #[test]
    fn a_run_that_kept_the_promise_passes() {
        let stories = [story(report("c00.a", "k0", "cart-00", paid(1)))];
        let found = check(
            &stories,
            &truth(&[(1, "k0", "cart-00", "paid")], &[1]),
            true,
        );
        assert_eq!(found, vec![]);
    }

    #[test]
    fn two_charges_for_one_cart_are_caught() {
        let stories = [story(report("c00.a", "k0", "cart-00", paid(2)))];
        let t = truth(
            &[
                (1, "k0", "cart-00", "pending"),
                (2, "k0", "cart-00", "paid"),
            ],
            &[1, 2],
        );
        assert_eq!(kinds(&check(&stories, &t, true)), vec!["double charge"]);
    }

    #[test]
    fn a_double_charge_is_caught_even_when_the_checkout_lost_the_first_order() {
        let stories = [story(report("c00.a", "k0", "cart-00", paid(2)))];
        let t = truth(&[(2, "k0", "cart-00", "paid")], &[1, 2]);
        assert_eq!(
            kinds(&check(&stories, &t, true)),
            vec!["double charge", "charge for a lost order"]
        );
    }

    #[test]
    fn a_lost_order_and_a_2xx_that_did_not_last_are_caught() {
        let mut s = story(report("c00.a", "k0", "cart-00", paid(1)));
        s.state_after = Ok(KeyState::NotFound);
        let found = check(&[s], &truth(&[], &[1]), true);
        assert_eq!(
            kinds(&found),
            vec!["charge for a lost order", "2xx untrue", "2xx not durable"]
        );
    }

    #[test]
    fn a_422_to_a_payload_that_ran_names_issue_22_when_released() {
        let rejected = OutcomeKind::Rejected {
            status: 422,
            body: Vec::new(),
            problem: None,
        };
        let stories = [story(report("c00.a", "k0", "cart-00", rejected))];
        let t = truth(&[(1, "k0", "cart-00", "declined")], &[]);
        let found = check(&stories, &t, true);
        assert!(
            matches!(
                &found[..],
                [Violation::MismatchButRan {
                    released_then_reused: true,
                    ..
                }]
            ),
            "{found:?}"
        );
    }

    #[test]
    fn another_payloads_answer_reconciled_from_the_key_state_is_caught() {
        let unknown = OutcomeKind::Unknown { last_error: None };
        let mut s = story(report("c00.a", "k0", "cart-00", unknown));
        s.reconciled = Some(Reconciled::KeyState(paid(1)));
        let t = truth(&[(1, "k0", "cart-00-other", "paid")], &[1]);
        let found = check(&[s], &t, false);
        assert_eq!(kinds(&found), vec!["another payload's 2xx"], "{found:?}");
        assert!(
            found[0]
                .to_string()
                .contains("took another payload's saved answer"),
            "{}",
            found[0]
        );
    }

    #[test]
    fn a_402_for_a_charged_cart_and_a_500_are_caught() {
        let declined = OutcomeKind::Rejected {
            status: 402,
            body: Vec::new(),
            problem: None,
        };
        let mut r = report("c00.a", "k0", "cart-00", declined);
        r.statuses = vec![500, 402];
        let found = check(
            &[story(r)],
            &truth(&[(1, "k0", "cart-00", "paid")], &[1]),
            false,
        );
        assert_eq!(kinds(&found), vec!["500", "402 but charged"]);
    }

    #[test]
    fn an_unknown_outcome_must_be_reconciled_to_the_truth() {
        let unknown = OutcomeKind::Unknown { last_error: None };
        let mut s = story(report("c00.a", "k0", "cart-00", unknown.clone()));
        let found = check(&[s], &truth(&[], &[]), false);
        assert_eq!(kinds(&found), vec!["not reconciled"]);
        s = story(report("c00.a", "k0", "cart-00", unknown));
        s.reconciled = Some(Reconciled::KeyState(paid(1)));
        let t = truth(&[(1, "k0", "cart-00", "paid")], &[]);
        let found = check(&[s], &t, false);
        assert_eq!(kinds(&found), vec!["2xx untrue"], "{found:?}");
    }
}
