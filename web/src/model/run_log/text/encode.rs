//! Writing a run log as text (the format: `text/mod.rs`).

use idem_sim::{ClientConfig, Command, ErrorPolicy, Faults, ServerConfig, Strategy};

use super::{strategy_index, VERSION};
use crate::model::cart;
use crate::model::run_log::RunLog;
use crate::model::settings::{basis_points, NetworkSettings, ServerSettings, MAX_BATCH};

pub(super) fn push_num(out: &mut String, n: u64) {
    out.push_str(&n.to_string());
}

fn join_x(out: &mut String, parts: &[u64]) {
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push('x');
        }
        push_num(out, *p);
    }
}

fn network_text(out: &mut String, n: &NetworkSettings) {
    let parts = [
        u64::from(n.request_loss),
        u64::from(n.response_loss),
        u64::from(n.duplicate),
        n.latency_min_ms,
        n.latency_max_ms,
    ];
    join_x(out, &parts);
}

fn server_text(out: &mut String, s: &ServerSettings) {
    let parts = [
        s.lock_ms,
        s.retention_ms,
        u64::from(s.policy == ErrorPolicy::SaveResponse),
        u64::from(s.crash_after_charge),
        u64::from(s.slow_worker),
    ];
    join_x(out, &parts);
}

/// Pay's checkout: the cart, the host page's own.
fn is_pay(amount: Option<u32>, host_journal: bool) -> bool {
    amount == Some(cart::AMOUNT) && host_journal
}

fn bp(p: f64) -> u64 {
    u64::from(basis_points(p))
}

fn command_text(out: &mut String, c: &Command) {
    match c {
        Command::StartCheckout {
            strategy,
            amount,
            host_journal,
        } if is_pay(*amount, *host_journal) => {
            out.push('p');
            push_num(out, strategy_index(*strategy));
        }
        Command::StartCheckout {
            strategy,
            amount,
            host_journal,
        } => {
            out.push('k');
            join_x(out, &[strategy_index(*strategy), u64::from(*host_journal)]);
            if let Some(a) = amount {
                out.push('x');
                push_num(out, u64::from(*a));
            }
        }
        Command::ReloadTab => out.push('r'),
        Command::Reload { checkout } => {
            out.push('l');
            push_num(out, u64::from(checkout.0));
        }
        Command::PayAgain { checkout } => {
            out.push('a');
            push_num(out, u64::from(checkout.0));
        }
        Command::DropNextRequest => out.push('q'),
        Command::DropNextResponse => out.push('s'),
        Command::DeclineNextCharge => out.push('d'),
        Command::CrashNextAfterCharge => out.push('x'),
        Command::SlowNextWorker => out.push('w'),
        Command::TimeOutNextPaycoCall => out.push('t'),
        Command::Resend {
            checkout,
            other_cart,
            after_ms,
        } => {
            out.push('o');
            join_x(
                out,
                &[u64::from(checkout.0), u64::from(*other_cart), *after_ms],
            );
        }
        Command::SetFaults(f) => {
            out.push('f');
            let &Faults {
                drop_request,
                drop_response,
                duplicate,
                latency_ms,
                jitter_ms,
                crash_after_charge,
                slow_worker,
                tab_reload,
                reuse_key_other_cart,
                decline,
                payco_timeout,
                relay_crash_after_send,
                consumer_crash_after_effect,
                duplicate_delivery,
                reorder_delivery,
            } = f;
            join_x(
                out,
                &[
                    bp(drop_request),
                    bp(drop_response),
                    bp(duplicate),
                    latency_ms,
                    jitter_ms,
                    bp(crash_after_charge),
                    bp(slow_worker),
                    bp(tab_reload),
                    bp(reuse_key_other_cart),
                    bp(decline),
                    bp(payco_timeout),
                    bp(relay_crash_after_send),
                    bp(consumer_crash_after_effect),
                    bp(duplicate_delivery),
                    bp(reorder_delivery),
                ],
            );
        }
        Command::SetServer(s) => {
            out.push('h');
            let &ServerConfig {
                lock_ms,
                retention_ms,
                order_ms,
                charge_ms,
                save_ms,
                slow_extra_ms,
                claim_gap_ms,
                on_error,
                expired_key_guard,
            } = s;
            let save = u64::from(on_error == ErrorPolicy::SaveResponse);
            join_x(
                out,
                &[
                    lock_ms,
                    retention_ms,
                    order_ms,
                    charge_ms,
                    save_ms,
                    slow_extra_ms,
                    claim_gap_ms,
                    save,
                    u64::from(expired_key_guard),
                ],
            );
        }
        Command::SetClient(c) => {
            out.push('i');
            let &ClientConfig {
                timeout_ms,
                backoff_base_ms,
                backoff_cap_ms,
                retry_window_ms,
                reload_ms,
                think_ms,
            } = c;
            join_x(
                out,
                &[
                    timeout_ms,
                    backoff_base_ms,
                    backoff_cap_ms,
                    retry_window_ms,
                    reload_ms,
                    think_ms,
                ],
            );
        }
    }
}

/// A batch's checkout, the world's own journal: its entry code (`m`: the cart; `b`: a drawn
/// amount, as batches were before they charged the cart) and strategy.
fn batch_strategy(c: &Command) -> Option<(char, Strategy)> {
    match c {
        Command::StartCheckout {
            strategy,
            amount,
            host_journal: false,
        } => match amount {
            None => Some(('b', *strategy)),
            Some(a) if *a == cart::AMOUNT => Some(('m', *strategy)),
            Some(_) => None,
        },
        _ => None,
    }
}

fn position(out: &mut String, at: u64, events: u64) {
    push_num(out, at);
    out.push('.');
    push_num(out, events);
    out.push('.');
}

/// The text for `log`.
pub fn encode(log: &RunLog) -> String {
    let mut out = String::with_capacity(96 + log.inputs.len() * 12);
    out.push_str("v=");
    out.push_str(VERSION);
    out.push_str("&seed=");
    push_num(&mut out, log.seed);
    out.push_str("&st=");
    push_num(&mut out, strategy_index(log.strategy));
    out.push_str("&net=");
    network_text(&mut out, &log.network);
    out.push_str("&srv=");
    server_text(&mut out, &log.server);
    let mut rest = &log.inputs[..];
    let mut first = true;
    while let Some(input) = rest.first() {
        out.push_str(if first { "&c=" } else { "_" });
        first = false;
        position(&mut out, input.at, input.after_events);
        // A batch: consecutive identical starts at one place, one entry.
        let run = batch_strategy(&input.command).map_or(1, |_| {
            rest.iter()
                .take(MAX_BATCH as usize)
                .take_while(|i| i == &input)
                .count()
        });
        match batch_strategy(&input.command) {
            Some((code, s)) => {
                out.push(code);
                join_x(&mut out, &[strategy_index(s), run as u64]);
            }
            None => command_text(&mut out, &input.command),
        }
        rest = &rest[run..];
    }
    out.push_str("&t=");
    push_num(&mut out, log.now);
    out.push_str("&e=");
    push_num(&mut out, log.events);
    if let Some(id) = &log.scenario {
        out.push_str("&sc=");
        out.push_str(id);
    }
    if log.projector {
        out.push_str("&pj=1");
    }
    if log.tab != 0 {
        out.push_str("&tb=");
        push_num(&mut out, u64::from(log.tab));
    }
    if let Some(step) = log.tour {
        out.push_str("&tr=");
        push_num(&mut out, u64::from(step) + 1);
    }
    out
}
