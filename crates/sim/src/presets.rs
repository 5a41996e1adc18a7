//! Named fault presets: values of [`Faults`], like FoundationDB's named workloads. One table
//! ([`PRESETS`]) serves the lookup ([`preset`]), `idem-lab --help` ([`help`]) and the error
//! for an unknown name ([`names`]).

use crate::config::{Faults, SimConfig};
use crate::SimError;

/// A named set of faults.
#[derive(Clone, Debug)]
pub struct Preset {
    /// The name `--preset` takes.
    pub name: &'static str,
    /// What it does, in a few words.
    pub about: &'static str,
    /// Its faults (every other knob at its default).
    pub faults: Faults,
}

/// No fault at all (the defaults of [`Faults`], written so a table entry can start from it).
const CALM: Faults = Faults {
    drop_request: 0.0,
    drop_response: 0.0,
    duplicate: 0.0,
    latency_ms: 20,
    jitter_ms: 10,
    crash_after_charge: 0.0,
    slow_worker: 0.0,
    tab_reload: 0.0,
    reuse_key_other_cart: 0.0,
    decline: 0.0,
    payco_timeout: 0.0,
    relay_crash_after_send: 0.0,
    consumer_crash_after_effect: 0.0,
    duplicate_delivery: 0.0,
    reorder_delivery: 0.0,
};

/// Every preset, in the order `idem-lab --help` lists them; `lesson` is the default.
pub static PRESETS: [Preset; 6] = [
    Preset {
        name: "calm",
        about: "a perfect network and workers; retries never happen",
        faults: CALM,
    },
    Preset {
        name: "lossy",
        about: "10 % of requests and 10 % of responses lost",
        faults: Faults {
            drop_request: 0.10,
            drop_response: 0.10,
            ..CALM
        },
    },
    Preset {
        name: "lesson",
        about:
            "the lab table's conditions: 5 % of requests and 25 % of responses lost, 5 % \
                duplicated, 5 % of workers crash after the charge, 3 % run slow, 5 % of tabs reload",
        faults: Faults {
            drop_request: 0.05,
            drop_response: 0.25,
            duplicate: 0.05,
            crash_after_charge: 0.05,
            slow_worker: 0.03,
            tab_reload: 0.05,
            ..CALM
        },
    },
    Preset {
        name: "crashy",
        about: "workers crash after the charge (20 %) and run slow (10 %); the network is fine",
        faults: Faults {
            crash_after_charge: 0.20,
            slow_worker: 0.10,
            ..CALM
        },
    },
    Preset {
        name: "reorder",
        about: "heavy jitter (0-800 ms) and 20 % duplication: messages overtake each other",
        faults: Faults {
            duplicate: 0.20,
            jitter_ms: 800,
            ..CALM
        },
    },
    Preset {
        name: "chaos",
        about: "everything at once, including buggy pages that reuse a key for another cart and an outbox relay and consumer that crash, duplicate and reorder",
        faults: Faults {
            drop_request: 0.20,
            drop_response: 0.20,
            duplicate: 0.30,
            jitter_ms: 400,
            crash_after_charge: 0.10,
            slow_worker: 0.10,
            tab_reload: 0.10,
            reuse_key_other_cart: 0.05,
            relay_crash_after_send: 0.10,
            consumer_crash_after_effect: 0.10,
            duplicate_delivery: 0.20,
            reorder_delivery: 0.20,
            ..CALM
        },
    },
];

/// The preset called `name`, with the other fields at their defaults.
pub fn preset(name: &str) -> Result<SimConfig, SimError> {
    let found = PRESETS.iter().find(|p| p.name == name);
    let preset = found.ok_or_else(|| SimError::UnknownPreset(name.to_owned()))?;
    Ok(SimConfig {
        faults: preset.faults.clone(),
        ..SimConfig::default()
    })
}

/// The presets' names, comma-separated, in table order.
pub fn names() -> String {
    let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
    names.join(", ")
}

/// One line per preset, `name: about`, for `--help`.
pub fn help() -> String {
    let lines: Vec<String> = PRESETS
        .iter()
        .map(|p| format!("{}: {}", p.name, p.about))
        .collect();
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_preset_exists_and_differs() {
        let all: Vec<SimConfig> = PRESETS.iter().map(|p| preset(p.name).unwrap()).collect();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert!(matches!(preset("nope"), Err(SimError::UnknownPreset(_))));
    }

    #[test]
    fn calm_is_the_default_faults() {
        assert_eq!(CALM, Faults::default());
    }

    #[test]
    fn the_error_and_the_help_list_every_preset() {
        let error = preset("nope").unwrap_err().to_string();
        let help = help();
        for p in &PRESETS {
            assert!(error.contains(p.name), "{error}");
            assert!(help.contains(&format!("{}: ", p.name)), "{help}");
        }
    }
}
