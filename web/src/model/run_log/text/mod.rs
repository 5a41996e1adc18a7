//! The run log as text: the URL hash a link carries, and the sessionStorage item a reload
//! reads. Hand-rolled `key=value&…` with numbers only (no base64, no JSON: a link stays
//! readable, and the bundle needs no JSON parser for it). A text that does not parse, or asks for
//! more than the page will replay, is an error with a short message; it never panics.
//!
//! ```text
//! v=1&seed=7&st=2&net=0x3000x0x40x120&srv=3000x86400000x0x0x0&c=0.0.p2_412.31.m0x50&t=900&e=57&sc=lost-response&pj=1&tb=1
//! ```
//!
//! The version stays 1: every text an older page wrote still means what it meant (a batch's
//! `b` entries keep their drawn amounts). `pj=1` is projector mode, `tr` the tour's step
//! (1-based), `tb` the central tab (its place in the tab bar; absent: the first).
//!
//! `net` and `srv` are the settings at time 0 (`net`: request loss, response loss, duplicate in
//! basis points, latency min and max in ms; `srv`: lock, retention in ms, save-response, crash,
//! slow as 0/1). `c` lists the inputs, `_`-separated, each `<at>.<events>.<command>`:
//!
//! | command | text |
//! |---|---|
//! | Pay: `StartCheckout` of the cart, the host page's (its journal) | `p<strategy>` |
//! | a batch: `n` × `StartCheckout` of the cart, the world's journal, same place | `m<strategy>x<n>` |
//! | a batch with drawn amounts (what batches were before they charged the cart; old links) | `b<strategy>x<n>` |
//! | any other `StartCheckout` | `k<strategy>x<host journal 0/1>[x<amount>]` |
//! | `ReloadTab` / `Reload` | `r` / `l<checkout>` |
//! | `PayAgain` (Pay pressed while the checkout is pending) | `a<checkout>` |
//! | `DropNextRequest` / `DropNextResponse` | `q` / `s` |
//! | `DeclineNextCharge`, `CrashNextAfterCharge`, `SlowNextWorker`, `TimeOutNextPaycoCall` | `d`, `x`, `w`, `t` |
//! | `Resend` | `o<checkout>x<other cart 0/1>x<after ms>` |
//! | `SetFaults` (probabilities in basis points, then ms) | `f<req>x<resp>x<dup>x<latency>x<jitter>x<crash>x<slow>x<reload>x<reuse>x<decline>x<payco timeout>x<relay crash>x<consumer crash>x<duplicate delivery>x<reorder delivery>` (eleven numbers, the outbox's four at 0, still read) |
//! | `SetServer` (ms, then save-response 0/1) | `h<lock>x<retention>x<order>x<charge>x<save>x<slow extra>x<claim gap>x<policy>` |
//! | `SetClient` (ms) | `i<timeout>x<backoff base>x<backoff cap>x<window>x<reload>x<think>` |
//!
//! Probabilities travel in basis points, the page's own resolution: every probability the page
//! makes is a whole number of them, so it comes back bit for bit.

mod decode;
mod encode;

use idem_sim::Strategy;

pub use decode::decode;
pub use encode::encode;

/// Format version.
pub const VERSION: &str = "1";
/// Most `c` entries a text may carry.
pub const MAX_COMMANDS: usize = 2_000;
/// Most checkouts a text may start (all inputs together).
pub const MAX_CHECKOUTS: u64 = 20_000;
/// Most events a text may ask the page to replay.
pub const MAX_EVENTS: u64 = 2_000_000;

/// Why a text was refused (the message the page shows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextError(pub &'static str);

pub(super) fn strategy_index(s: Strategy) -> u64 {
    match s {
        Strategy::NoKey => 0,
        Strategy::KeyPerAttempt => 1,
        Strategy::SameKey => 2,
    }
}

pub(super) fn strategy_at(i: u64) -> Result<Strategy, TextError> {
    Strategy::ALL
        .get(i as usize)
        .copied()
        .ok_or(TextError("unknown strategy"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cart;
    use crate::model::run_log::{input, RunLog};
    use crate::model::settings::{self, probability, Settings, MAX_BATCH};
    use idem_sim::{CheckoutId, ClientConfig, Command, ErrorPolicy};

    /// A log with every command the codec knows, the page's and the others.
    fn sample() -> RunLog {
        let s = Settings::default();
        let mut log = RunLog::new(42, Strategy::KeyPerAttempt, s.network(), s.server());
        let pay = Command::StartCheckout {
            strategy: Strategy::SameKey,
            amount: Some(cart::AMOUNT),
            host_journal: true,
        };
        log.push(input(0, 0, pay));
        for _ in 0..50 {
            let start = Command::StartCheckout {
                strategy: Strategy::NoKey,
                amount: Some(cart::AMOUNT),
                host_journal: false,
            };
            log.push(input(120, 7, start));
        }
        for _ in 0..3 {
            let drawn = Command::StartCheckout {
                strategy: Strategy::KeyPerAttempt,
                amount: None,
                host_journal: false,
            };
            log.push(input(120, 7, drawn));
        }
        let no_key_pay = Command::StartCheckout {
            strategy: Strategy::NoKey,
            amount: Some(cart::AMOUNT),
            host_journal: true,
        };
        log.push(input(120, 7, no_key_pay));
        let odd = Command::StartCheckout {
            strategy: Strategy::NoKey,
            amount: Some(17),
            host_journal: true,
        };
        log.push(input(121, 7, odd));
        let drawn = Command::StartCheckout {
            strategy: Strategy::SameKey,
            amount: None,
            host_journal: true,
        };
        log.push(input(121, 7, drawn));
        for c in [
            Command::DropNextRequest,
            Command::DropNextResponse,
            Command::ReloadTab,
            Command::Reload {
                checkout: CheckoutId(3),
            },
            Command::PayAgain {
                checkout: CheckoutId(0),
            },
            Command::DeclineNextCharge,
            Command::CrashNextAfterCharge,
            Command::SlowNextWorker,
            Command::TimeOutNextPaycoCall,
            Command::Resend {
                checkout: CheckoutId(0),
                other_cart: true,
                after_ms: 300,
            },
        ] {
            log.push(input(130, 9, c));
        }
        let mut net = s.network();
        net.response_loss = 3_000;
        net.request_loss = 1;
        let mut srv = s.server();
        srv.policy = ErrorPolicy::SaveResponse;
        srv.slow_worker = true;
        let mut faults = settings::faults(&net, &srv);
        faults.decline = probability(2_500);
        faults.relay_crash_after_send = probability(100);
        faults.consumer_crash_after_effect = probability(200);
        faults.duplicate_delivery = probability(300);
        faults.reorder_delivery = probability(400);
        log.push(input(200, 12, Command::SetFaults(faults)));
        log.push(input(
            210,
            13,
            Command::SetServer(settings::server_config(&srv)),
        ));
        log.push(input(220, 14, Command::SetClient(ClientConfig::default())));
        log.reached(9_000, 400);
        log.scenario = Some("lost-response".into());
        log.projector = true;
        log.tour = Some(4);
        log.tab = 1;
        log
    }

    #[test]
    fn round_trips() {
        let s = sample();
        let text = encode(&s);
        assert_eq!(decode(&text), Ok(Some(s.clone())));
        assert_eq!(
            decode(&format!("#{text}")),
            Ok(Some(s)),
            "the leading # is optional"
        );
        assert!(
            text.contains("_120.7.m0x50_120.7.b1x3_120.7.p0_"),
            "a batch is one entry, Pay's checkout another: {text}"
        );
        assert!(text.ends_with("&tb=1&tr=5"), "{text}");
    }

    #[test]
    fn an_old_links_faults_open_with_the_outbox_calm() {
        let head = "v=1&seed=1&st=0&net=0x0x0x20x30&srv=2000x86400000x0x0x0";
        let eleven = "f100x0x0x20x10x0x0x0x0x0x0";
        let log = decode(&format!("{head}&c=0.0.{eleven}&t=0&e=0"))
            .unwrap()
            .unwrap();
        let Command::SetFaults(f) = &log.inputs[0].command else {
            panic!("{:?}", log.inputs);
        };
        assert!(f.drop_request > 0.0);
        assert_eq!(f.relay_crash_after_send, 0.0);
        assert_eq!(f.reorder_delivery, 0.0);
        let twelve = "f100x0x0x20x10x0x0x0x0x0x0x5";
        assert!(decode(&format!("{head}&c=0.0.{twelve}&t=0&e=0")).is_err());
    }

    #[test]
    fn a_batch_charges_the_cart_and_an_old_links_batch_its_drawn_amounts() {
        let head = "v=1&seed=1&st=0&net=0x0x0x20x30&srv=2000x86400000x0x0x0";
        let amounts = |entry: &str| {
            let log = decode(&format!("{head}&c=0.0.{entry}&t=0&e=0"))
                .unwrap()
                .unwrap();
            log.inputs
                .iter()
                .map(|i| match i.command {
                    Command::StartCheckout { amount, .. } => amount,
                    _ => Some(0),
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(amounts("m0x2"), [Some(cart::AMOUNT); 2]);
        assert_eq!(
            amounts("b0x2"),
            [None, None],
            "an old link replays as it did"
        );
        // That a batch is written as `m` is the session's test
        // (`session::run::tests::a_batch_is_linked_as_charging_the_cart`).
    }

    #[test]
    fn a_plain_run_round_trips_and_stays_short() {
        let st = Settings::default();
        let log = RunLog::new(1, Strategy::SameKey, st.network(), st.server());
        let text = encode(&log);
        assert!(text.len() < 80, "{text}");
        assert_eq!(decode(&text), Ok(Some(log)));
    }

    #[test]
    fn a_batch_larger_than_a_link_entry_takes_several() {
        let st = Settings::default();
        let mut log = RunLog::new(1, Strategy::SameKey, st.network(), st.server());
        let start = Command::StartCheckout {
            strategy: Strategy::SameKey,
            amount: None,
            host_journal: false,
        };
        for _ in 0..(MAX_BATCH + 3) {
            log.push(input(5, 1, start.clone()));
        }
        log.reached(5, 1);
        let text = encode(&log);
        assert!(text.contains("&c=5.1.b2x5000_5.1.b2x3&"), "{text}");
        assert_eq!(decode(&text), Ok(Some(log)));
    }

    #[test]
    fn a_tour_step_alone_is_a_link_to_it() {
        let log = decode("#tr=3").unwrap().unwrap();
        assert_eq!(
            (log.tour, log.scenario, log.inputs.len()),
            (Some(2), None, 0)
        );
        assert!(encode(&sample()).contains("&tr=5"));
        assert!(decode("#tr=0").is_err());
        assert!(decode("#tr=99").is_err());
    }

    #[test]
    fn an_empty_text_is_no_run() {
        assert_eq!(decode(""), Ok(None));
        assert_eq!(decode("#"), Ok(None));
    }

    #[test]
    fn malformed_texts_are_errors_never_panics() {
        let good = encode(&sample());
        let bad = [
            "garbage",
            "v=1",
            "v=2&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0",
            "v=1&seed=-1&net=0x0x0x0x0&srv=1x1x0x0x0",
            "v=1&seed=99999999999999999999999&net=0x0x0x0x0&srv=1x1x0x0x0",
            "v=1&seed=1&net=20000x0x0x0x0&srv=1x1x0x0x0",
            "v=1&seed=1&net=0x0x0x9x1&srv=1x1x0x0x0",
            "v=1&seed=1&net=0x0x0x0&srv=1x1x0x0x0",
            "v=1&seed=1&net=0x0x0x0x0x0&srv=1x1x0x0x0",
            "v=1&seed=1&net=0x0x0x0x0&srv=0x1x0x0x0",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x2x0x0",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.z",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.p9",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.rr",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.b2x999999",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.b2x0",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.m2x0",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&tb=4",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=5.0.r_4.0.r&t=9&e=9",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=5.3.r&t=1&e=1",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&e=99999999999",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&sc=<script>",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&pj=7",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.b2x5000_0.0.b2x5000_0.0.b2x5000_0.0.b2x5000_0.0.b2x5000",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.f10001x0x0x0x0x0x0x0x0x0x0&t=1&e=1",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.f0x0x0x600000x1x0x0x0x0x0x0&t=1&e=1",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.h0x1x0x0x0x0x0x0&t=1&e=1",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.h1x1x0x0x0x0x0x2&t=1&e=1",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.i1x1x1x1x1x999999999&t=1&e=1",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.o99999999x1x0&t=1&e=1",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.o1x2x0&t=1&e=1",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.k0x1x99999999999&t=1&e=1",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.k0&t=1&e=1",
            "é=ü&∑",
        ];
        for b in bad {
            assert!(decode(b).is_err(), "{b} should be refused");
        }
        // Every prefix of a valid text either parses or is refused: never a panic.
        for i in 0..good.len() {
            if good.is_char_boundary(i) {
                let _ = decode(&good[..i]);
            }
        }
    }

    #[test]
    fn unknown_keys_are_ignored() {
        let s = sample();
        let text = format!("{}&future=thing", encode(&s));
        assert_eq!(decode(&text), Ok(Some(s)));
    }
}
