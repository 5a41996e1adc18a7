//! idem-sim: a seeded, deterministic, discrete-event world of checkouts against idem-store.
//!
//! Clients (one checkout = one order) retry through a lossy network; a server runs idem-store
//! and a checkout handler (claim → create order → charge PayCo with `charge:<orderId>` → save);
//! PayCo records every charge. Faults are data ([`Faults`]), classic bugs are toggles
//! ([`Bug`]), every change to a running world is an [`Input`], every attempt and every
//! message lands in a Jepsen-style [`History`], and a checker turns the run into a
//! [`Verdict`]. How the parts fit: `ARCHITECTURE.md` at the repository's root.
//!
//! # What this crate does not do
//!
//! It reads no clock, draws no OS randomness and iterates no hash map: time is a `u64` of
//! virtual milliseconds advanced event by event ([`World::step`], [`World::run_until`]), and
//! every random choice comes from one seeded ChaCha8 stream. It does no I/O; the `idem-lab`
//! binary (native only) prints what the library computes. The same seed and config give the
//! same history, byte for byte, natively and on wasm32 ([`World::history_hash`]).
//!
//! ```
//! use idem_sim::{presets, Strategy, World};
//!
//! let mut config = presets::preset("lesson").unwrap();
//! config.workload.orders = 20;
//! config.workload.strategy = Strategy::SameKey;
//! let mut world = World::new(config);
//! let verdict = world.finish();
//! assert!(verdict.is_clean(), "{verdict:?}");
//! assert_eq!(world.double_charged(), 0);
//! ```
#![warn(missing_docs)]

pub mod bug;
pub mod checker;
pub mod config;
pub mod counters;
pub mod history;
pub mod ids;
pub mod lab;
pub mod network;
pub mod outbox;
pub mod payco;
pub mod presets;
pub mod properties;
pub mod queue;
pub mod receipt;
pub mod reproduce;
pub mod rng;
pub mod scenario;
pub mod world;

pub use bug::Bug;
pub use checker::{Verdict, Violation};
pub use config::{
    ClientConfig, ErrorPolicy, Faults, HistoryDetail, ServerConfig, SimConfig, Strategy, Workload,
};
pub use counters::Counters;
pub use history::{
    AttemptRecord, AttemptResult, CheckoutOutcome, CheckoutRecord, Decision, Fate, History,
    InfoCause, Message, MessageId, MessageKind, Party, PaycoDecision, Step, StepKind, WorkEnd,
};
pub use ids::{CheckoutId, OrderId};
pub use payco::{Charge, ChargeId, ChargeKey, PayCo};
pub use properties::{Breach, Properties, Property};
pub use receipt::Receipt;
pub use scenario::{Effect, Pause, Scenario, ScenarioRun, SCENARIOS};
pub use world::{op_name, Command, Drive, HistoryExport, Input, StoreOp, World, EXPORT_FORMAT};

/// Errors at the simulator's boundary (bad names, bad config, a journal that refuses a key).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// No preset by that name.
    #[error("unknown preset `{0}` (known: {known})", known = presets::names())]
    UnknownPreset(String),
    /// No classic bug by that name.
    #[error("unknown bug `{0}` (known: {known})", known = bug::names())]
    UnknownBug(String),
    /// The config is not valid JSON of [`SimConfig`].
    #[error("invalid config: {0}")]
    Config(String),
    /// The checkout could not start (its journal refused the key).
    #[error("checkout could not start: {0}")]
    Start(String),
    /// No checkout with that id.
    #[error("no checkout {0}")]
    NoSuchCheckout(u32),
}
