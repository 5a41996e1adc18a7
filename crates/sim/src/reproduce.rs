//! The command lines a run prints to be run again (`reproduce:`): `idem-lab` with the config's
//! source (a preset or a file, shell-quoted) and every option that changes the run. Pure text
//! from a config: the world prints it, the lab and the sweep choose it.

use crate::bug::Bug;
use crate::config::SimConfig;

/// Where a lab run's config came from, so its reproduction line can name it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigSource {
    /// A named preset (`--preset NAME`).
    Preset(String),
    /// A JSON file (`--config PATH`), as the path was given.
    File(String),
}

/// How every printed reproduction line starts.
pub const COMMAND_PREFIX: &str = "cargo run --release -p idem-sim --bin idem-lab --";

/// `s` as one POSIX shell word: bare when it has no special characters, else single-quoted.
pub fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./-:=@%+,".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        return s.to_owned();
    }
    ["'", &s.replace('\'', r"'\''"), "'"].concat()
}

/// The command line that reproduces a lab run: its config's source (preset or file), then
/// every option that changes the run (seed, orders, bugs; `--json` only changes the output).
/// Without a source the config came from code, and the line names only seed, orders and bugs.
pub fn lab_command(config: &SimConfig, source: Option<&ConfigSource>) -> String {
    let mut cmd = String::from(COMMAND_PREFIX);
    match source {
        Some(ConfigSource::Preset(p)) => {
            cmd.push_str(" --preset ");
            cmd.push_str(&shell_word(p));
        }
        Some(ConfigSource::File(path)) => {
            cmd.push_str(" --config ");
            cmd.push_str(&shell_word(path));
        }
        None => {}
    }
    cmd.push_str(&format!(
        " --seed {} --orders {}",
        config.seed, config.workload.orders
    ));
    for b in &config.bugs {
        cmd.push_str(" --bug ");
        cmd.push_str(b.name());
    }
    cmd
}

/// The command line that reproduces one sweep seed.
pub fn sweep_command(seed: u64, orders: u32, bugs: &[Bug]) -> String {
    let mut cmd = format!(
        "{} sweep --first-seed {seed} --seeds 1 --orders {orders}",
        COMMAND_PREFIX
    );
    for b in bugs {
        cmd.push_str(" --bug ");
        cmd.push_str(b.name());
    }
    cmd
}
