//! Named fault presets: values of [`SimConfig`], like FoundationDB's named workloads.

use crate::config::{Faults, SimConfig};
use crate::SimError;

/// The presets' names, in the order `idem-lab --help` lists them.
pub const PRESETS: [&str; 6] = ["calm", "lossy", "lesson", "crashy", "reorder", "chaos"];

/// The preset called `name`, with the other fields at their defaults.
///
/// - `calm`: a perfect network and workers; retries never happen.
/// - `lossy`: 10 % of requests and 10 % of responses lost.
/// - `lesson`: the lab table's conditions: 5 % requests and 25 % responses lost, 5 % duplicated,
///   5 % of workers crash after the charge, 3 % run slow, 5 % of tabs reload.
/// - `crashy`: workers crash after the charge (20 %) and run slow (10 %); the network is fine.
/// - `reorder`: heavy jitter (0–800 ms) and 20 % duplication: messages overtake each other.
/// - `chaos`: everything at once, including buggy pages that reuse a key for another cart.
pub fn preset(name: &str) -> Result<SimConfig, SimError> {
    let faults = match name {
        "calm" => Faults::default(),
        "lossy" => Faults {
            drop_request: 0.10,
            drop_response: 0.10,
            ..Faults::default()
        },
        "lesson" => Faults {
            drop_request: 0.05,
            drop_response: 0.25,
            duplicate: 0.05,
            crash_after_charge: 0.05,
            slow_worker: 0.03,
            tab_reload: 0.05,
            ..Faults::default()
        },
        "crashy" => Faults {
            crash_after_charge: 0.20,
            slow_worker: 0.10,
            ..Faults::default()
        },
        "reorder" => Faults {
            duplicate: 0.20,
            jitter_ms: 800,
            ..Faults::default()
        },
        "chaos" => Faults {
            drop_request: 0.20,
            drop_response: 0.20,
            duplicate: 0.30,
            jitter_ms: 400,
            crash_after_charge: 0.10,
            slow_worker: 0.10,
            tab_reload: 0.10,
            reuse_key_other_cart: 0.05,
            ..Faults::default()
        },
        _ => return Err(SimError::UnknownPreset(name.to_owned())),
    };
    Ok(SimConfig {
        faults,
        ..SimConfig::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_preset_exists_and_differs() {
        let all: Vec<SimConfig> = PRESETS.iter().map(|p| preset(p).unwrap()).collect();
        for (i, a) in all.iter().enumerate() {
            for b in &all[i + 1..] {
                assert_ne!(a, b);
            }
        }
        assert!(matches!(preset("nope"), Err(SimError::UnknownPreset(_))));
    }
}
