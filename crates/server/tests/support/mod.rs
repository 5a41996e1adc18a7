pub mod client;
pub mod postgres;
pub mod process;
