//! The lab: the lesson's table ([`table`]), swarm sweeps ([`sweep`]) and the benchmark
//! ([`bench`](mod@bench)). Pure functions of their arguments; the `idem-lab` binary only prints them.

#[cfg(not(target_arch = "wasm32"))]
pub mod bench;
pub mod sweep;
pub mod table;
