pub mod canonical;
pub mod rng;
