//! The scenarios, in menu order. Ids and order are stable: links and digit keys use them.

use super::{Effect, Fix, Pause, Scenario, Step, CART_CENTS};
use crate::bug::Bug;
use crate::config::{SimConfig, Strategy};
use crate::ids::CheckoutId;
use crate::world::Command;

const fn at(at: u64, command: Command) -> Step {
    Step { at, command }
}

/// Pay for the scenario's cart: a same-key checkout of [`CART_CENTS`], whose key goes to the
/// host's journal when there is one (the demo's localStorage, so its storage panel shows the
/// record the sequence diagram draws; natively, the world's own).
const PAY: Command = Command::StartCheckout {
    strategy: Strategy::SameKey,
    amount: Some(CART_CENTS),
    host_journal: true,
};

/// Pay, and the first answer is lost on its way back.
const LOST_ANSWER: &[Step] = &[at(0, Command::DropNextResponse), at(0, PAY)];

/// Pay for the cart without a key (the page's first strategy in the lesson).
const PAY_NO_KEY: Command = Command::StartCheckout {
    strategy: Strategy::NoKey,
    amount: Some(CART_CENTS),
    host_journal: false,
};

/// The customer presses Pay again on checkout 0.
const PAY_AGAIN: Command = Command::PayAgain {
    checkout: CheckoutId(0),
};

/// The page sends checkout 0's request again, now (`other_cart`: another cart).
const fn resend(other_cart: bool) -> Command {
    Command::Resend {
        checkout: CheckoutId(0),
        other_cart,
        after_ms: 0,
    }
}

fn quiet(_: &mut SimConfig) {}

fn no_bugs(c: &mut SimConfig) {
    c.bugs.clear();
}

fn short_retention(c: &mut SimConfig) {
    c.server.retention_ms = 500;
}

fn short_retention_guarded(c: &mut SimConfig) {
    short_retention(c);
    c.server.expired_key_guard = true;
}

/// The relay dies after each of a message's first sends, once the consumer's 2xx is back and
/// before it marks the message sent: its next pass sends the message again.
fn crashing_relay(c: &mut SimConfig) {
    c.faults.relay_crash_after_send = 1.0;
}

fn consumer_without_dedupe(c: &mut SimConfig) {
    crashing_relay(c);
    c.bugs.push(Bug::ConsumerWithoutDedupe);
}

fn long_retention(c: &mut SimConfig) {
    c.server.retention_ms = crate::config::ServerConfig::default().retention_ms;
}

fn new_key_per_attempt(c: &mut SimConfig) {
    c.bugs.push(Bug::NewKeyPerAttempt);
}

fn select_then_insert(c: &mut SimConfig) {
    // No jitter: the double click's two requests arrive in the same millisecond.
    c.faults.jitter_ms = 0;
    c.bugs.push(Bug::SelectThenInsert);
}

fn unfenced_writes(c: &mut SimConfig) {
    c.bugs.push(Bug::UnfencedWrites);
}

fn key_only_at_top_hop(c: &mut SimConfig) {
    c.bugs.push(Bug::KeyOnlyAtTopHop);
}

fn two_step_write(c: &mut SimConfig) {
    c.bugs.push(Bug::TwoStepWrite);
}

fn no_fingerprint_check(c: &mut SimConfig) {
    c.bugs.push(Bug::NoFingerprintCheck);
}

fn save_unknown_outcome(c: &mut SimConfig) {
    c.server.on_error = crate::config::ErrorPolicy::SaveResponse;
    c.bugs.push(Bug::SaveUnknownOutcome);
}

const FIX_BUG: &str = "Same seed, same faults, the bug switched off.";

/// Every scenario, in menu order.
pub static SCENARIOS: [Scenario; 18] = [
    Scenario {
        id: "lost-response",
        title: "Lost response",
        caption: "The server charges and saves, but its answer is lost. Watch the retry: same key, so the store replays the saved answer.",
        after_pause: "Replayed: the retry got the saved 201. PayCo charged once.",
        seed: 1,
        setup: quiet,
        script: LOST_ANSWER,
        pause: Pause::FirstReplay,
        expect: &[Effect::Charges(1), Effect::Replayed, Effect::DoubleCharged(false)],
        fix: None,
    },
    Scenario {
        id: "lost-request",
        title: "Lost request",
        caption: "The first request never reaches the server. Watch the claim table: nothing ran, so the retry runs the work once.",
        after_pause: "Paid on the retry: one claim, one charge.",
        seed: 1,
        setup: quiet,
        script: &[at(0, Command::DropNextRequest), at(0, PAY)],
        pause: Pause::Settled,
        expect: &[Effect::Charges(1), Effect::AttemptsAtLeast(2), Effect::DoubleCharged(false)],
        fix: None,
    },
    Scenario {
        id: "crash-after-charge",
        title: "Crash after the charge",
        caption: "The worker charges PayCo, then dies before saving. Watch the claim stay in flight until its lease goes stale and a retry takes it over.",
        after_pause: "Taken over: the new worker charged again with the downstream key charge:<order>, and PayCo deduped it. Still one charge.",
        seed: 1,
        setup: quiet,
        script: &[at(0, Command::CrashNextAfterCharge), at(0, PAY)],
        pause: Pause::Deduped,
        expect: &[Effect::Charges(1), Effect::TakenOver, Effect::Deduped],
        fix: None,
    },
    Scenario {
        id: "double-click",
        title: "Double click",
        caption: "A page without keys: Pay is clicked twice, 5 ms apart. Watch the second click send the cart again.",
        after_pause: "Charged twice: without a key the server cannot tell the second click from a new order. Same checkout, two charges.",
        seed: 1,
        setup: quiet,
        script: &[at(0, PAY_NO_KEY), at(5, PAY_AGAIN)],
        pause: Pause::DoubleCharge,
        expect: &[Effect::DoubleCharged(true), Effect::Charges(2)],
        fix: Some(Fix {
            caption: "Same seed, one key for the checkout: the second request carries it too. Watch it meet the first one's claim.",
            script: Some(&[at(0, PAY), at(5, resend(false))]),
            after_pause: "409 Conflict: the second request found the claim in flight and was told to retry later. Only one worker runs. (The demo's own Pay button goes further: with a key it resumes the pending checkout and sends nothing.)",
            setup: quiet,
            pause: Pause::Conflict,
            expect: &[Effect::Conflict, Effect::DoubleCharged(false)],
        }),
    },
    Scenario {
        id: "other-cart",
        title: "Same key, other cart (422)",
        caption: "After paying, a buggy page sends a different cart under the same key. Watch the store compare fingerprints.",
        after_pause: "422: same key, different request. Nothing ran; the first order keeps its one charge.",
        seed: 1,
        setup: quiet,
        script: &[
            at(0, PAY),
            at(300, resend(true)),
        ],
        pause: Pause::Mismatch,
        expect: &[Effect::Mismatch, Effect::Charges(1)],
        fix: None,
    },
    Scenario {
        id: "stale-lock",
        title: "Slow worker, stale lock",
        caption: "The worker is slower than lock_ms. Watch its lease go stale, a retry take the claim over, and the slow one come back.",
        after_pause: "Fenced: the zombie's save carried a lost lease and was refused. PayCo deduped its charge; one charge.",
        seed: 1,
        setup: quiet,
        script: &[at(0, Command::SlowNextWorker), at(0, PAY)],
        pause: Pause::Fenced,
        expect: &[Effect::TakenOver, Effect::Fenced, Effect::Charges(1)],
        fix: None,
    },
    Scenario {
        id: "short-retention",
        title: "Retention < retry window",
        caption: "Records are kept 500 ms, but the client retries after 1 s. Watch the answer get lost and the record get pruned before the retry.",
        after_pause: "Charged twice: the pruned key looked new, so the retry ran the work again.",
        seed: 1,
        setup: short_retention,
        script: LOST_ANSWER,
        pause: Pause::DoubleCharge,
        expect: &[Effect::DoubleCharged(true), Effect::Charges(2)],
        fix: Some(Fix {
            script: None,
            caption: "Same seed, retention back to 24 h: longer than any retry window.",
            after_pause: "Replayed: the record was still there. One charge.",
            setup: long_retention,
            pause: Pause::FirstReplay,
            expect: &[Effect::Charges(1), Effect::Replayed],
        }),
    },
    Scenario {
        id: "bug-new-key-per-attempt",
        title: "Bug: new key per attempt",
        caption: "The page mints a fresh key on every retry. Watch the lost answer's retry arrive as a stranger.",
        after_pause: "Charged twice: each key was new to the store, so both attempts ran.",
        seed: 1,
        setup: new_key_per_attempt,
        script: LOST_ANSWER,
        pause: Pause::DoubleCharge,
        expect: &[Effect::DoubleCharged(true), Effect::Charges(2)],
        fix: Some(Fix {
            caption: FIX_BUG,
            script: None,
            after_pause: "One key kept across retries: the retry was replayed. One charge.",
            setup: no_bugs,
            pause: Pause::FirstReplay,
            expect: &[Effect::Charges(1), Effect::Replayed],
        }),
    },
    Scenario {
        id: "bug-select-then-insert",
        title: "Bug: SELECT then INSERT",
        caption: "The claim reads, then inserts. A double click's two requests arrive together: watch both see nothing.",
        after_pause: "Charged twice: both requests passed the check before either inserted.",
        seed: 1,
        setup: select_then_insert,
        script: &[
            at(0, PAY),
            at(0, resend(false)),
        ],
        pause: Pause::DoubleCharge,
        expect: &[Effect::DoubleCharged(true), Effect::Charges(2)],
        fix: Some(Fix {
            caption: FIX_BUG,
            script: None,
            after_pause: "Insert-if-absent: the second request got 409. One charge.",
            setup: no_bugs,
            pause: Pause::Settled,
            expect: &[Effect::Charges(1), Effect::Conflict, Effect::DoubleCharged(false)],
        }),
    },
    Scenario {
        id: "bug-unfenced-writes",
        title: "Bug: unfenced save",
        caption: "A slow worker loses its lease and a retry takes over. Its save is not fenced: watch the zombie come back.",
        after_pause: "Wrong answer: the zombie overwrote the new owner's saved answer, and a client got a receipt that differs from the first.",
        seed: 1,
        setup: unfenced_writes,
        script: &[
            at(0, Command::SlowNextWorker),
            at(0, PAY),
            at(4_500, resend(false)),
        ],
        pause: Pause::WrongAnswer,
        expect: &[Effect::WrongAnswer(true), Effect::Charges(1)],
        fix: Some(Fix {
            caption: FIX_BUG,
            script: None,
            after_pause: "Fenced: the zombie's save was refused; the later replay is identical to the first answer.",
            setup: no_bugs,
            pause: Pause::At(4_600),
            expect: &[Effect::Fenced, Effect::Replayed, Effect::WrongAnswer(false)],
        }),
    },
    Scenario {
        id: "bug-key-only-at-top-hop",
        title: "Bug: key only at the top hop",
        caption: "The server charges PayCo without a downstream key. The worker crashes after the charge: watch the takeover charge again.",
        after_pause: "Charged twice: PayCo had no key to dedupe the takeover's charge.",
        seed: 1,
        setup: key_only_at_top_hop,
        script: &[at(0, Command::CrashNextAfterCharge), at(0, PAY)],
        pause: Pause::DoubleCharge,
        expect: &[Effect::DoubleCharged(true), Effect::TakenOver],
        fix: Some(Fix {
            caption: "Same seed, same crash, the charge:<order> key sent to PayCo.",
            script: None,
            after_pause: "PayCo deduped the takeover's charge on charge:<order>. One charge.",
            setup: no_bugs,
            pause: Pause::Deduped,
            expect: &[Effect::Charges(1), Effect::Deduped, Effect::DoubleCharged(false)],
        }),
    },
    Scenario {
        id: "bug-no-fingerprint-check",
        title: "Bug: replay on different params",
        caption: "No fingerprint check. After paying, a page sends another cart under the same key: watch what comes back.",
        after_pause: "Wrong answer: the other cart got the first cart's receipt, replayed as if it were its own.",
        seed: 1,
        setup: no_fingerprint_check,
        script: &[
            at(0, PAY),
            at(300, resend(true)),
        ],
        pause: Pause::WrongAnswer,
        expect: &[Effect::WrongAnswer(true), Effect::Charges(1)],
        fix: Some(Fix {
            caption: FIX_BUG,
            script: None,
            after_pause: "422: the fingerprint differs, the store refuses. No wrong answer.",
            setup: no_bugs,
            pause: Pause::Mismatch,
            expect: &[Effect::Mismatch, Effect::WrongAnswer(false)],
        }),
    },
    Scenario {
        id: "bug-two-step-write",
        title: "Bug: two-step write",
        caption: "The order is committed apart from the key's record. The worker crashes after the charge: watch the takeover find no order and make a new one.",
        after_pause: "Charged twice: the takeover had no recovery point, so it created a new order and charged it under a new PayCo key.",
        seed: 1,
        setup: two_step_write,
        script: &[at(0, Command::CrashNextAfterCharge), at(0, PAY)],
        pause: Pause::DoubleCharge,
        expect: &[Effect::DoubleCharged(true), Effect::TakenOver],
        fix: Some(Fix {
            caption: "Same seed, same crash, the order written in the claim's transaction (the recovery point).",
            script: None,
            after_pause: "The takeover resumed the same order and PayCo deduped its charge on charge:<order>. One charge.",
            setup: no_bugs,
            pause: Pause::Deduped,
            expect: &[Effect::Charges(1), Effect::Deduped, Effect::DoubleCharged(false)],
        }),
    },
    Scenario {
        id: "ambiguous-timeout",
        title: "The ambiguous timeout",
        caption: "A page without keys pays. The server charges, but its answer is lost. Watch the page's timer.",
        after_pause: "Timed out: the page has no answer. Was the card charged? PayCo says yes; the page cannot know.",
        seed: 1,
        setup: quiet,
        script: &[at(0, Command::DropNextResponse), at(0, PAY_NO_KEY)],
        pause: Pause::TimedOut,
        expect: &[Effect::Charges(1)],
        fix: None,
    },
    Scenario {
        id: "no-key-retry",
        title: "Retry without a key",
        caption: "The answer is lost and the page, without a key, tries again. Watch the retry arrive as a new order.",
        after_pause: "Charged twice: without a key the retry was just another payment.",
        seed: 1,
        setup: quiet,
        script: &[at(0, Command::DropNextResponse), at(0, PAY_NO_KEY)],
        pause: Pause::DoubleCharge,
        expect: &[Effect::DoubleCharged(true), Effect::Charges(2)],
        fix: Some(Fix {
            caption: "Same seed, same lost answer, one key for the checkout kept across retries.",
            script: Some(&[at(0, Command::DropNextResponse), at(0, PAY)]),
            after_pause: "Replayed: the retry carried the same key and got the saved 201. One charge.",
            setup: quiet,
            pause: Pause::FirstReplay,
            expect: &[Effect::Charges(1), Effect::Replayed, Effect::DoubleCharged(false)],
        }),
    },
    Scenario {
        id: "bug-save-unknown-outcome",
        title: "Bug: saving an unknown outcome",
        caption: "PayCo charges, but its answer never reaches the worker. The handler treats the timeout as a failure and, under save-response, saves its 502. Watch the retry.",
        after_pause: "Replayed the saved 502: PayCo charged the card, yet every retry is told \"outcome unknown\" for as long as the key lives. The saved answer can never learn the truth.",
        seed: 2,
        setup: save_unknown_outcome,
        script: &[at(0, Command::TimeOutNextPaycoCall), at(0, PAY)],
        pause: Pause::FirstReplay,
        expect: &[Effect::Charges(1), Effect::Replayed, Effect::DoubleCharged(false)],
        fix: Some(Fix {
            caption: "Same seed, same timeout, the claim released instead (whatever the policy): an unknown outcome is never saved.",
            script: None,
            after_pause: "The retry resumed the order and asked PayCo again under charge:<order>: PayCo answered its saved charge. Paid, one charge.",
            setup: no_bugs,
            pause: Pause::Deduped,
            expect: &[Effect::Charges(1), Effect::Deduped, Effect::DoubleCharged(false)],
        }),
    },
    Scenario {
        id: "expired-key-guard",
        title: "Expired key, guarded",
        caption: "Retention is 500 ms again and the answer is lost, but now every attempt says when it was first sent. First without the server's expired-key guard: watch the retry arrive after the record was pruned.",
        after_pause: "Charged twice: the pruned key looked new. The page did send its first-sent time; this server did not read it.",
        seed: 1,
        setup: short_retention,
        script: LOST_ANSWER,
        pause: Pause::DoubleCharge,
        expect: &[Effect::DoubleCharged(true), Effect::Charges(2)],
        fix: Some(Fix {
            script: None,
            caption: "Same seed, retention still 500 ms, the server's expired-key guard on.",
            after_pause: "412, not run again: no record was left, and the retry was first sent longer ago than retention. The page reports an honest unknown (reconcile before paying again). One charge.",
            setup: short_retention_guarded,
            pause: Pause::Settled,
            expect: &[Effect::Charges(1), Effect::KeyExpired, Effect::Unknown],
        }),
    },
    Scenario {
        id: "bug-consumer-without-dedupe",
        title: "Bug: a receipt per delivery",
        caption: "The order is paid once, and its save wrote an order.paid message to the outbox. The relay delivers it to the receipts consumer, then dies before marking it sent. This consumer sends a receipt for every delivery: watch the relay's next pass.",
        after_pause: "Two receipts for one order: the relay delivers at least once, and this consumer did the work again for a message it had handled.",
        seed: 1,
        setup: consumer_without_dedupe,
        script: &[at(0, PAY)],
        pause: Pause::DuplicateReceipt,
        expect: &[
            Effect::Charges(1),
            Effect::Receipts(2),
            Effect::DuplicateReceipt(true),
        ],
        fix: Some(Fix {
            script: None,
            caption: "Same seed, the relay still dies before marking, the consumer through process_once: the message id and the receipt recorded in one step.",
            after_pause: "Skipped: the redelivered message's id was recorded with its receipt. One receipt, however often the relay sends.",
            setup: no_bugs,
            pause: Pause::RedeliverySkipped,
            expect: &[
                Effect::Charges(1),
                Effect::Receipts(1),
                Effect::RedeliverySkipped,
                Effect::DuplicateReceipt(false),
            ],
        }),
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_kebab_case() {
        for (i, s) in SCENARIOS.iter().enumerate() {
            assert!(s.id.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'));
            assert_eq!(Scenario::by_id(s.id).map(Scenario::index), Some(i));
        }
    }

    #[test]
    fn a_runs_strategy_is_its_first_checkouts() {
        let strategy = |id, fixed| Scenario::by_id(id).and_then(|s| s.strategy(fixed));
        assert_eq!(strategy("lost-response", false), Some(Strategy::SameKey));
        assert_eq!(strategy("no-key-retry", false), Some(Strategy::NoKey));
        assert_eq!(strategy("no-key-retry", true), Some(Strategy::SameKey));
        assert_eq!(strategy("double-click", false), Some(Strategy::NoKey));
        assert_eq!(strategy("double-click", true), Some(Strategy::SameKey));
    }
}
