pub mod postgres;
pub mod process;
