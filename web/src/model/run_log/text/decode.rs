//! Reading a run log's text (the format: `text/mod.rs`): every refusal is a [`TextError`],
//! never a panic.

use idem_sim::{
    CheckoutId, ClientConfig, Command, ErrorPolicy, Faults, Input, ServerConfig, Strategy,
};

use super::{strategy_at, TextError, MAX_CHECKOUTS, MAX_COMMANDS, MAX_EVENTS, VERSION};
use crate::model::cart;
use crate::model::fields::FULL;
use crate::model::run_log::RunLog;
use crate::model::settings::{
    probability, NetworkSettings, ServerSettings, Settings, MAX_BATCH, MAX_MS, MAX_RETENTION_MS,
};

fn num(text: &str) -> Result<u64, TextError> {
    if text.is_empty() || text.len() > 20 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(TextError("a number in the link is not a whole number"));
    }
    text.parse()
        .map_err(|_| TextError("a number in the link is too large"))
}

fn nums<const N: usize>(text: &str) -> Result<[u64; N], TextError> {
    let mut out = [0u64; N];
    let mut parts = text.split('x');
    for slot in &mut out {
        *slot = num(parts
            .next()
            .ok_or(TextError("a setting in the link is cut short"))?)?;
    }
    if parts.next().is_some() {
        return Err(TextError("a setting in the link has too many parts"));
    }
    Ok(out)
}

fn percent(bp: u64) -> Result<u32, TextError> {
    if bp > u64::from(FULL) {
        return Err(TextError("a loss or duplicate rate above 100 %"));
    }
    Ok(bp as u32)
}

fn chance(bp: u64) -> Result<f64, TextError> {
    percent(bp).map(probability)
}

fn ms(n: u64) -> Result<u64, TextError> {
    if n > MAX_MS {
        return Err(TextError("a duration in the link is over 10 minutes"));
    }
    Ok(n)
}

fn network_from(text: &str) -> Result<NetworkSettings, TextError> {
    let [req, resp, dup, min, max] = nums::<5>(text)?;
    if min > max || max > MAX_MS {
        return Err(TextError("latency out of range (min ≤ max ≤ 10 min)"));
    }
    Ok(NetworkSettings {
        request_loss: percent(req)?,
        response_loss: percent(resp)?,
        duplicate: percent(dup)?,
        latency_min_ms: min,
        latency_max_ms: max,
    })
}

fn flag(n: u64) -> Result<bool, TextError> {
    match n {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(TextError("a switch in the link is neither 0 nor 1")),
    }
}

fn policy(n: u64) -> Result<ErrorPolicy, TextError> {
    Ok(if flag(n)? {
        ErrorPolicy::SaveResponse
    } else {
        ErrorPolicy::ReleaseClaim
    })
}

fn lock_and_retention(lock: u64, retention: u64) -> Result<(), TextError> {
    if lock == 0 || lock > MAX_MS || retention > MAX_RETENTION_MS {
        return Err(TextError("lock or retention out of range"));
    }
    Ok(())
}

fn server_from(text: &str) -> Result<ServerSettings, TextError> {
    let [lock, retention, save, crash, slow] = nums::<5>(text)?;
    lock_and_retention(lock, retention)?;
    Ok(ServerSettings {
        lock_ms: lock,
        retention_ms: retention,
        policy: policy(save)?,
        crash_after_charge: flag(crash)?,
        slow_worker: flag(slow)?,
    })
}

fn faults_from(text: &str) -> Result<Faults, TextError> {
    // Eleven numbers before the outbox's faults existed (so older links still open, outbox
    // calm), fifteen since.
    let [req, resp, dup, latency, jitter, crash, slow, reload, reuse, decline, timeout, relay, consumer, dup_delivery, reorder] =
        match nums::<15>(text) {
            Ok(all) => all,
            Err(_) => {
                let [a, b, c, d, e, f, g, h, i, j, k] = nums::<11>(text)?;
                [a, b, c, d, e, f, g, h, i, j, k, 0, 0, 0, 0]
            }
        };
    if latency.saturating_add(jitter) > MAX_MS {
        return Err(TextError("latency out of range (min ≤ max ≤ 10 min)"));
    }
    Ok(Faults {
        drop_request: chance(req)?,
        drop_response: chance(resp)?,
        duplicate: chance(dup)?,
        latency_ms: latency,
        jitter_ms: jitter,
        crash_after_charge: chance(crash)?,
        slow_worker: chance(slow)?,
        tab_reload: chance(reload)?,
        reuse_key_other_cart: chance(reuse)?,
        decline: chance(decline)?,
        payco_timeout: chance(timeout)?,
        relay_crash_after_send: chance(relay)?,
        consumer_crash_after_effect: chance(consumer)?,
        duplicate_delivery: chance(dup_delivery)?,
        reorder_delivery: chance(reorder)?,
    })
}

fn server_config_from(text: &str) -> Result<ServerConfig, TextError> {
    // Eight numbers before the expired-key guard existed (so older links still open, guard
    // off), nine since.
    let [lock, retention, order, charge, save, slow_extra, claim_gap, on_error, guard] =
        match nums::<9>(text) {
            Ok(all) => all,
            Err(_) => {
                let [a, b, c, d, e, f, g, h] = nums::<8>(text)?;
                [a, b, c, d, e, f, g, h, 0]
            }
        };
    lock_and_retention(lock, retention)?;
    Ok(ServerConfig {
        expired_key_guard: match guard {
            0 => false,
            1 => true,
            _ => {
                return Err(TextError(
                    "the expired-key guard in the link is neither 0 nor 1",
                ))
            }
        },
        lock_ms: lock,
        retention_ms: retention,
        order_ms: ms(order)?,
        charge_ms: ms(charge)?,
        save_ms: ms(save)?,
        slow_extra_ms: ms(slow_extra)?,
        claim_gap_ms: ms(claim_gap)?,
        on_error: policy(on_error)?,
    })
}

fn client_from(text: &str) -> Result<ClientConfig, TextError> {
    let [timeout, base, cap, window, reload, think] = nums::<6>(text)?;
    Ok(ClientConfig {
        timeout_ms: ms(timeout)?,
        backoff_base_ms: ms(base)?,
        backoff_cap_ms: ms(cap)?,
        retry_window_ms: ms(window)?,
        reload_ms: ms(reload)?,
        think_ms: ms(think)?,
    })
}

fn checkout(n: u64) -> Result<CheckoutId, TextError> {
    if n >= MAX_CHECKOUTS {
        return Err(TextError("the link names a checkout it cannot have"));
    }
    Ok(CheckoutId(n as u32))
}

/// One entry's commands (a batch is several).
fn commands_from(text: &str) -> Result<(Command, u32), TextError> {
    let (code, rest) = text.split_at(text.len().min(1));
    let bare = |c: Command| {
        if rest.is_empty() {
            Ok((c, 1))
        } else {
            Err(TextError("unknown command in the link"))
        }
    };
    let one = |c: Command| Ok((c, 1));
    match code {
        // Pay: the host page's checkout. (Links written before Pay's no-key checkouts were
        // marked so said the same with `host_journal` off: a page without a key writes to no
        // journal, so they replay the same.)
        "p" => one(Command::StartCheckout {
            strategy: strategy_at(num(rest)?)?,
            amount: Some(cart::AMOUNT),
            host_journal: true,
        }),
        // A batch: `m` of the cart; `b`, from links written before batches charged the cart,
        // with amounts drawn by the world (so those links replay as they did).
        "b" | "m" => {
            let [s, n] = nums::<2>(rest)?;
            if n == 0 || n > u64::from(MAX_BATCH) {
                return Err(TextError("a batch size out of range"));
            }
            let start = Command::StartCheckout {
                strategy: strategy_at(s)?,
                amount: (code == "m").then_some(cart::AMOUNT),
                host_journal: false,
            };
            Ok((start, n as u32))
        }
        "k" => {
            let parts: Vec<&str> = rest.split('x').collect();
            let (s, journal, amount) = match parts[..] {
                [s, j] => (s, j, None),
                [s, j, a] => {
                    let a = u32::try_from(num(a)?)
                        .map_err(|_| TextError("a number in the link is too large"))?;
                    (s, j, Some(a))
                }
                _ => return Err(TextError("unknown command in the link")),
            };
            one(Command::StartCheckout {
                strategy: strategy_at(num(s)?)?,
                amount,
                host_journal: flag(num(journal)?)?,
            })
        }
        "r" => bare(Command::ReloadTab),
        "l" => one(Command::Reload {
            checkout: checkout(num(rest)?)?,
        }),
        "a" => one(Command::PayAgain {
            checkout: checkout(num(rest)?)?,
        }),
        "q" => bare(Command::DropNextRequest),
        "s" => bare(Command::DropNextResponse),
        "d" => bare(Command::DeclineNextCharge),
        "x" => bare(Command::CrashNextAfterCharge),
        "w" => bare(Command::SlowNextWorker),
        "t" => bare(Command::TimeOutNextPaycoCall),
        "o" => {
            let [c, other, after] = nums::<3>(rest)?;
            one(Command::Resend {
                checkout: checkout(c)?,
                other_cart: flag(other)?,
                after_ms: ms(after)?,
            })
        }
        "f" => one(Command::SetFaults(faults_from(rest)?)),
        "h" => one(Command::SetServer(server_config_from(rest)?)),
        "i" => one(Command::SetClient(client_from(rest)?)),
        _ => Err(TextError("unknown command in the link")),
    }
}

fn entry_from(text: &str, out: &mut Vec<Input>) -> Result<(), TextError> {
    let mut parts = text.splitn(3, '.');
    let at = num(parts.next().unwrap_or(""))?;
    let after_events = num(parts.next().ok_or(TextError("a command has no position"))?)?;
    let (command, n) = commands_from(parts.next().ok_or(TextError("a command is missing"))?)?;
    for _ in 0..n {
        out.push(Input {
            at,
            after_events,
            command: command.clone(),
        });
    }
    Ok(())
}

fn scenario_id(text: &str) -> Result<String, TextError> {
    let ok = !text.is_empty()
        && text.len() <= 48
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(text.to_string())
    } else {
        Err(TextError("the scenario name in the link is not valid"))
    }
}

/// A 1-based tour step in a link, 0-based.
fn tour_step(n: u64) -> Result<u8, TextError> {
    match n {
        1..=16 => Ok(n as u8 - 1),
        _ => Err(TextError("the tour has no such step")),
    }
}

/// The central tab a link opens on (its index in the tab bar).
fn tab_index(n: u64) -> Result<u8, TextError> {
    match n {
        0..=3 => Ok(n as u8),
        _ => Err(TextError("the page has no such tab")),
    }
}

/// Checkouts an input starts.
fn starts(c: &Command) -> u64 {
    u64::from(matches!(c, Command::StartCheckout { .. }))
}

/// The run a text describes (with or without a leading `#`). An empty text is `Ok(None)`.
pub fn decode(text: &str) -> Result<Option<RunLog>, TextError> {
    let text = text.strip_prefix('#').unwrap_or(text);
    if text.is_empty() {
        return Ok(None);
    }
    if text.len() > 64_000 {
        return Err(TextError("the link is too long"));
    }
    let (mut version, mut seed, mut strategy) = (None, None, Strategy::SameKey);
    let (mut network, mut server) = (None, None);
    let (mut inputs, mut now, mut events) = (Vec::new(), 0, 0);
    let (mut scenario, mut projector, mut tour, mut tab) = (None, false, None, 0);
    for pair in text.split('&') {
        let (k, v) = pair
            .split_once('=')
            .ok_or(TextError("the link is not key=value pairs"))?;
        match k {
            "v" => version = Some(v),
            "seed" => seed = Some(num(v)?),
            "st" => strategy = strategy_at(num(v)?)?,
            "net" => network = Some(network_from(v)?),
            "srv" => server = Some(server_from(v)?),
            "c" => {
                if v.split('_').count() > MAX_COMMANDS {
                    return Err(TextError("the link carries too many commands"));
                }
                inputs.clear();
                for entry in v.split('_') {
                    entry_from(entry, &mut inputs)?;
                    if inputs.len() as u64 > MAX_CHECKOUTS + MAX_COMMANDS as u64 {
                        return Err(TextError(
                            "the link asks for a larger run than the page replays",
                        ));
                    }
                }
            }
            "t" => now = num(v)?,
            "e" => events = num(v)?,
            "sc" => scenario = Some(scenario_id(v)?),
            "pj" => projector = flag(num(v)?)?,
            "tr" => tour = Some(tour_step(num(v)?)?),
            "tb" => tab = tab_index(num(v)?)?,
            // Unknown keys are from a newer page: ignored, like unknown JSON members.
            _ => {}
        }
    }
    if let (Some(step), None, None) = (tour, version, seed) {
        // `#tr=3`: the tour's step 3, run afresh from the default settings.
        let s = Settings::default();
        let mut log = RunLog::new(s.seed.value, s.strategy, s.network(), s.server());
        log.tour = Some(step);
        return Ok(Some(log));
    }
    if version != Some(VERSION) {
        return Err(TextError("the link is from another version of the page"));
    }
    let seed = seed.ok_or(TextError("the link has no seed"))?;
    let network = network.ok_or(TextError("the link has no network settings"))?;
    let server = server.ok_or(TextError("the link has no server settings"))?;
    let ordered = inputs
        .windows(2)
        .all(|w: &[Input]| w[0].at <= w[1].at && w[0].after_events <= w[1].after_events);
    let last = inputs.last().map_or((0, 0), |i| (i.at, i.after_events));
    if !ordered || last.0 > now || last.1 > events {
        return Err(TextError("the commands in the link are out of order"));
    }
    let checkouts: u64 = inputs.iter().map(|i| starts(&i.command)).sum();
    if checkouts > MAX_CHECKOUTS || events > MAX_EVENTS {
        return Err(TextError(
            "the link asks for a larger run than the page replays",
        ));
    }
    let mut log = RunLog::new(seed, strategy, network, server);
    log.inputs = inputs;
    log.now = now;
    log.events = events;
    log.scenario = scenario;
    log.projector = projector;
    log.tour = tour;
    log.tab = tab;
    Ok(Some(log))
}
