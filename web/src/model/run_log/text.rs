//! The run log as text: the URL hash a link carries, and the sessionStorage item a reload
//! reads. Hand-rolled `key=value&…` with numbers only (no base64, no JSON: a link stays
//! readable, and the bundle needs no JSON parser for it). A text that does not parse, or asks for
//! more than the page will replay, is an error with a short message; it never panics.
//!
//! ```text
//! v=1&seed=7&st=2&net=0x3000x0x40x120&srv=3000x86400000x0x0x0&c=0.0.p2_412.31.b0x50&t=900&e=57&sc=lost-response&pj=1
//! ```
//!
//! `net` and `srv` are the settings at time 0 (`net`: request loss, response loss, duplicate in
//! basis points, latency min and max in ms; `srv`: lock, retention in ms, save-response, crash,
//! slow as 0/1). `c` lists the inputs, `_`-separated, each `<at>.<events>.<command>`:
//!
//! | command | text |
//! |---|---|
//! | Pay: `StartCheckout` of the cart, the host's journal for same-key | `p<strategy>` |
//! | a batch: `n` × `StartCheckout` with a drawn amount, same place | `b<strategy>x<n>` |
//! | any other `StartCheckout` | `k<strategy>x<host journal 0/1>[x<amount>]` |
//! | `ReloadTab` / `Reload` | `r` / `l<checkout>` |
//! | `DropNextRequest` / `DropNextResponse` | `q` / `s` |
//! | `DeclineNextCharge`, `CrashNextAfterCharge`, `SlowNextWorker`, `TimeOutNextPaycoCall` | `d`, `x`, `w`, `t` |
//! | `Resend` | `o<checkout>x<other cart 0/1>x<after ms>` |
//! | `SetFaults` (probabilities in basis points, then ms) | `f<req>x<resp>x<dup>x<latency>x<jitter>x<crash>x<slow>x<reload>x<reuse>x<decline>x<payco timeout>` |
//! | `SetServer` (ms, then save-response 0/1) | `h<lock>x<retention>x<order>x<charge>x<save>x<slow extra>x<claim gap>x<policy>` |
//! | `SetClient` (ms) | `i<timeout>x<backoff base>x<backoff cap>x<window>x<reload>x<think>` |
//!
//! Probabilities travel in basis points, the page's own resolution: every probability the page
//! makes is a whole number of them, so it comes back bit for bit.

use idem_sim::{
    CheckoutId, ClientConfig, Command, ErrorPolicy, Faults, Input, ServerConfig, Strategy,
};

use super::RunLog;
use crate::model::cart;
use crate::model::fields::FULL;
use crate::model::settings::{
    basis_points, probability, NetworkSettings, ServerSettings, MAX_BATCH, MAX_MS, MAX_RETENTION_MS,
};

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

fn strategy_index(s: Strategy) -> u64 {
    match s {
        Strategy::NoKey => 0,
        Strategy::KeyPerAttempt => 1,
        Strategy::SameKey => 2,
    }
}

fn strategy_at(i: u64) -> Result<Strategy, TextError> {
    Strategy::ALL
        .get(i as usize)
        .copied()
        .ok_or(TextError("unknown strategy"))
}

fn push_num(out: &mut String, n: u64) {
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

/// Pay's checkout: the cart, in the host's journal when it keeps a key.
fn is_pay(strategy: Strategy, amount: Option<u32>, host_journal: bool) -> bool {
    amount == Some(cart::AMOUNT) && host_journal == (strategy == Strategy::SameKey)
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
        } if is_pay(*strategy, *amount, *host_journal) => {
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

/// A batch's checkout: drawn amount, the world's own journal.
fn batch_strategy(c: &Command) -> Option<Strategy> {
    match c {
        Command::StartCheckout {
            strategy,
            amount: None,
            host_journal: false,
        } => Some(*strategy),
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
            Some(s) => {
                out.push('b');
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
    out
}

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
    let [req, resp, dup, latency, jitter, crash, slow, reload, reuse, decline, timeout] =
        nums::<11>(text)?;
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
    })
}

fn server_config_from(text: &str) -> Result<ServerConfig, TextError> {
    let [lock, retention, order, charge, save, slow_extra, claim_gap, on_error] = nums::<8>(text)?;
    lock_and_retention(lock, retention)?;
    Ok(ServerConfig {
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
        "p" => {
            let strategy = strategy_at(num(rest)?)?;
            one(Command::StartCheckout {
                strategy,
                amount: Some(cart::AMOUNT),
                host_journal: strategy == Strategy::SameKey,
            })
        }
        "b" => {
            let [s, n] = nums::<2>(rest)?;
            if n == 0 || n > u64::from(MAX_BATCH) {
                return Err(TextError("a batch size out of range"));
            }
            let start = Command::StartCheckout {
                strategy: strategy_at(s)?,
                amount: None,
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
    let (mut scenario, mut projector) = (None, false);
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
            // Unknown keys are from a newer page: ignored, like unknown JSON members.
            _ => {}
        }
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
    Ok(Some(log))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::settings::{self, Settings};

    fn input(at: u64, after_events: u64, command: Command) -> Input {
        Input {
            at,
            after_events,
            command,
        }
    }

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
                amount: None,
                host_journal: false,
            };
            log.push(input(120, 7, start));
        }
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
            text.contains("_120.7.b0x50_"),
            "a batch is one entry: {text}"
        );
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
