//! The run in the URL hash, so a link reproduces it: seed, settings, every command with the
//! time and event count it was applied at, the position reached, the scenario and projector
//! mode.
//!
//! Hand-rolled `key=value&…` with numbers only (no base64, no JSON: a link stays readable and the
//! bundle small). A hash that does not parse, or asks for more than the page will replay, is an
//! error with a short message; it never panics.
//!
//! ```text
//! v=1&seed=7&st=2&net=0x3000x0x40x120&srv=3000x86400000x0x0x0&c=0.0.p2_412.31.b0x50&t=900&e=57&sc=lost-response&pj=1
//! ```

use super::run_log::{Command, Entry, RunLog};
use super::settings::{
    NetworkSettings, Policy, ServerSettings, Strategy, MAX_BATCH, MAX_MS, MAX_RETENTION_MS,
};
use crate::model::fields::FULL;

/// Hash format version.
pub const VERSION: &str = "1";
/// Most commands a link may carry.
pub const MAX_COMMANDS: usize = 2_000;
/// Most checkouts a link may start (all batches together).
pub const MAX_CHECKOUTS: u64 = 20_000;
/// Most events a link may ask the page to replay.
pub const MAX_EVENTS: u64 = 2_000_000;

/// A run as a link carries it.
#[derive(Clone, Debug, PartialEq)]
pub struct Shared {
    /// The run log, `now`/`events` being the position in time.
    pub log: RunLog,
    /// The scenario's stable id, if one was picked.
    pub scenario: Option<String>,
    /// Projector mode.
    pub projector: bool,
}

/// Why a hash was refused (the message the page shows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShareError(pub &'static str);

fn strategy_index(s: Strategy) -> u8 {
    match s {
        Strategy::NoKey => 0,
        Strategy::KeyPerTry => 1,
        Strategy::SameKey => 2,
    }
}

fn strategy_at(i: u64) -> Result<Strategy, ShareError> {
    Strategy::ALL
        .get(i as usize)
        .copied()
        .ok_or(ShareError("unknown strategy"))
}

fn push_num(out: &mut String, n: u64) {
    out.push_str(&n.to_string());
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
        u64::from(s.policy == Policy::SaveResponse),
        u64::from(s.crash_after_charge),
        u64::from(s.slow_worker),
    ];
    join_x(out, &parts);
}

fn join_x(out: &mut String, parts: &[u64]) {
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push('x');
        }
        push_num(out, *p);
    }
}

fn command_text(out: &mut String, c: &Command) {
    match c {
        Command::Pay(s) => {
            out.push('p');
            push_num(out, u64::from(strategy_index(*s)));
        }
        Command::Batch(s, n) => {
            out.push('b');
            join_x(out, &[u64::from(strategy_index(*s)), u64::from(*n)]);
        }
        Command::ReloadTab => out.push('r'),
        Command::DropNextRequest => out.push('q'),
        Command::DropNextResponse => out.push('s'),
        Command::ReuseKeyOtherCart => out.push('u'),
        Command::DeclineNextCharge => out.push('d'),
        Command::Network(n) => {
            out.push('n');
            network_text(out, n);
        }
        Command::Server(s) => {
            out.push('v');
            server_text(out, s);
        }
    }
}

/// The hash (without `#`) for `shared`.
pub fn encode(shared: &Shared) -> String {
    let log = &shared.log;
    let mut out = String::with_capacity(96 + log.entries.len() * 12);
    out.push_str("v=");
    out.push_str(VERSION);
    out.push_str("&seed=");
    push_num(&mut out, log.seed);
    out.push_str("&st=");
    push_num(&mut out, u64::from(strategy_index(log.strategy)));
    out.push_str("&net=");
    network_text(&mut out, &log.network);
    out.push_str("&srv=");
    server_text(&mut out, &log.server);
    if !log.entries.is_empty() {
        out.push_str("&c=");
        for (i, e) in log.entries.iter().enumerate() {
            if i > 0 {
                out.push('_');
            }
            join_x_dot(&mut out, e.at, e.after_events);
            command_text(&mut out, &e.command);
        }
    }
    out.push_str("&t=");
    push_num(&mut out, log.now);
    out.push_str("&e=");
    push_num(&mut out, log.events);
    if let Some(id) = &shared.scenario {
        out.push_str("&sc=");
        out.push_str(id);
    }
    if shared.projector {
        out.push_str("&pj=1");
    }
    out
}

fn join_x_dot(out: &mut String, at: u64, events: u64) {
    push_num(out, at);
    out.push('.');
    push_num(out, events);
    out.push('.');
}

fn num(text: &str) -> Result<u64, ShareError> {
    if text.is_empty() || text.len() > 20 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ShareError("a number in the link is not a whole number"));
    }
    text.parse()
        .map_err(|_| ShareError("a number in the link is too large"))
}

fn nums<const N: usize>(text: &str) -> Result<[u64; N], ShareError> {
    let mut out = [0u64; N];
    let mut parts = text.split('x');
    for slot in &mut out {
        *slot = num(parts
            .next()
            .ok_or(ShareError("a setting in the link is cut short"))?)?;
    }
    if parts.next().is_some() {
        return Err(ShareError("a setting in the link has too many parts"));
    }
    Ok(out)
}

fn percent(bp: u64) -> Result<u32, ShareError> {
    if bp > u64::from(FULL) {
        return Err(ShareError("a loss or duplicate rate above 100 %"));
    }
    Ok(bp as u32)
}

fn network_from(text: &str) -> Result<NetworkSettings, ShareError> {
    let [req, resp, dup, min, max] = nums::<5>(text)?;
    if min > max || max > MAX_MS {
        return Err(ShareError("latency out of range (min ≤ max ≤ 10 min)"));
    }
    Ok(NetworkSettings {
        request_loss: percent(req)?,
        response_loss: percent(resp)?,
        duplicate: percent(dup)?,
        latency_min_ms: min,
        latency_max_ms: max,
    })
}

fn flag(n: u64) -> Result<bool, ShareError> {
    match n {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(ShareError("a switch in the link is neither 0 nor 1")),
    }
}

fn server_from(text: &str) -> Result<ServerSettings, ShareError> {
    let [lock, retention, policy, crash, slow] = nums::<5>(text)?;
    if lock == 0 || lock > MAX_MS || retention > MAX_RETENTION_MS {
        return Err(ShareError("lock or retention out of range"));
    }
    Ok(ServerSettings {
        lock_ms: lock,
        retention_ms: retention,
        policy: if flag(policy)? {
            Policy::SaveResponse
        } else {
            Policy::ReleaseClaim
        },
        crash_after_charge: flag(crash)?,
        slow_worker: flag(slow)?,
    })
}

fn command_from(text: &str) -> Result<Command, ShareError> {
    let (code, rest) = text.split_at(text.len().min(1));
    let bare = |c: Command| {
        if rest.is_empty() {
            Ok(c)
        } else {
            Err(ShareError("unknown command in the link"))
        }
    };
    match code {
        "p" => Ok(Command::Pay(strategy_at(num(rest)?)?)),
        "b" => {
            let [s, n] = nums::<2>(rest)?;
            if n == 0 || n > u64::from(MAX_BATCH) {
                return Err(ShareError("a batch size out of range"));
            }
            Ok(Command::Batch(strategy_at(s)?, n as u32))
        }
        "r" => bare(Command::ReloadTab),
        "q" => bare(Command::DropNextRequest),
        "s" => bare(Command::DropNextResponse),
        "u" => bare(Command::ReuseKeyOtherCart),
        "d" => bare(Command::DeclineNextCharge),
        "n" => Ok(Command::Network(network_from(rest)?)),
        "v" => Ok(Command::Server(server_from(rest)?)),
        _ => Err(ShareError("unknown command in the link")),
    }
}

fn entry_from(text: &str) -> Result<Entry, ShareError> {
    let mut parts = text.splitn(3, '.');
    let at = num(parts.next().unwrap_or(""))?;
    let after_events = num(parts
        .next()
        .ok_or(ShareError("a command has no position"))?)?;
    let command = command_from(parts.next().ok_or(ShareError("a command is missing"))?)?;
    Ok(Entry {
        at,
        after_events,
        command,
    })
}

fn scenario_id(text: &str) -> Result<String, ShareError> {
    let ok = !text.is_empty()
        && text.len() <= 48
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if ok {
        Ok(text.to_string())
    } else {
        Err(ShareError("the scenario name in the link is not valid"))
    }
}

/// The run a hash describes (with or without its leading `#`). An empty hash is `Ok(None)`.
pub fn decode(hash: &str) -> Result<Option<Shared>, ShareError> {
    let hash = hash.strip_prefix('#').unwrap_or(hash);
    if hash.is_empty() {
        return Ok(None);
    }
    if hash.len() > 64_000 {
        return Err(ShareError("the link is too long"));
    }
    let (mut version, mut seed, mut strategy) = (None, None, Strategy::SameKey);
    let (mut network, mut server) = (None, None);
    let (mut entries, mut now, mut events) = (Vec::new(), 0, 0);
    let (mut scenario, mut projector) = (None, false);
    for pair in hash.split('&') {
        let (k, v) = pair
            .split_once('=')
            .ok_or(ShareError("the link is not key=value pairs"))?;
        match k {
            "v" => version = Some(v),
            "seed" => seed = Some(num(v)?),
            "st" => strategy = strategy_at(num(v)?)?,
            "net" => network = Some(network_from(v)?),
            "srv" => server = Some(server_from(v)?),
            "c" => {
                if v.split('_').count() > MAX_COMMANDS {
                    return Err(ShareError("the link carries too many commands"));
                }
                entries = v.split('_').map(entry_from).collect::<Result<_, _>>()?;
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
        return Err(ShareError("the link is from another version of the page"));
    }
    let seed = seed.ok_or(ShareError("the link has no seed"))?;
    let network = network.ok_or(ShareError("the link has no network settings"))?;
    let server = server.ok_or(ShareError("the link has no server settings"))?;
    let ordered = entries
        .windows(2)
        .all(|w: &[Entry]| w[0].at <= w[1].at && w[0].after_events <= w[1].after_events);
    let last = entries.last().map_or((0, 0), |e| (e.at, e.after_events));
    if !ordered || last.0 > now || last.1 > events {
        return Err(ShareError("the commands in the link are out of order"));
    }
    let checkouts: u64 = entries
        .iter()
        .map(|e| match e.command {
            Command::Batch(_, n) => u64::from(n),
            Command::Pay(_) | Command::ReuseKeyOtherCart => 1,
            _ => 0,
        })
        .sum();
    if checkouts > MAX_CHECKOUTS || events > MAX_EVENTS {
        return Err(ShareError(
            "the link asks for a larger run than the page replays",
        ));
    }
    let mut log = RunLog::new(seed, strategy, network, server);
    log.entries = entries;
    log.now = now;
    log.events = events;
    log.scenario = scenario.clone();
    Ok(Some(Shared {
        log,
        scenario,
        projector,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::settings::Settings;

    fn sample() -> Shared {
        let s = Settings::default();
        let mut log = RunLog::new(42, Strategy::KeyPerTry, s.network(), s.server());
        log.push(0, 0, Command::Pay(Strategy::SameKey));
        log.push(120, 7, Command::Batch(Strategy::NoKey, 50));
        log.push(130, 9, Command::DropNextRequest);
        log.push(130, 9, Command::DropNextResponse);
        log.push(140, 10, Command::ReloadTab);
        log.push(150, 11, Command::ReuseKeyOtherCart);
        let mut net = s.network();
        net.response_loss = 3_000;
        log.push(200, 12, Command::Network(net));
        let mut srv = s.server();
        srv.policy = Policy::SaveResponse;
        srv.slow_worker = true;
        log.push(210, 13, Command::Server(srv));
        log.reached(9_000, 400);
        // A decoded log names its scenario too, so the world is rebuilt from it.
        log.scenario = Some("lost-response".into());
        Shared {
            log,
            scenario: Some("lost-response".into()),
            projector: true,
        }
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
    }

    #[test]
    fn a_plain_run_round_trips_and_stays_short() {
        let st = Settings::default();
        let s = Shared {
            log: RunLog::new(1, Strategy::SameKey, st.network(), st.server()),
            scenario: None,
            projector: false,
        };
        let text = encode(&s);
        assert!(text.len() < 80, "{text}");
        assert_eq!(decode(&text), Ok(Some(s)));
    }

    #[test]
    fn an_empty_hash_is_no_run() {
        assert_eq!(decode(""), Ok(None));
        assert_eq!(decode("#"), Ok(None));
    }

    #[test]
    fn malformed_hashes_are_errors_never_panics() {
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
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=5.0.r_4.0.r&t=9&e=9",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=5.3.r&t=1&e=1",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&e=99999999999",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&sc=<script>",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&pj=7",
            "v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.b2x5000_0.0.b2x5000_0.0.b2x5000_0.0.b2x5000_0.0.b2x5000",
            "é=ü&∑",
        ];
        for b in bad {
            assert!(decode(b).is_err(), "{b} should be refused");
        }
        // Every prefix of a valid hash either parses or is refused: never a panic.
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
