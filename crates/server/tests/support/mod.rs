pub mod client;
pub mod latency;
pub mod postgres;
pub mod process;
