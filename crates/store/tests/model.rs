//! The model test (`shared/model.rs`) over the in-memory `Store`: 10,000 random runs of
//! claim / save / commit / fail / release / advance time / prune, checked step by step.
#![cfg(not(target_arch = "wasm32"))]

mod shared;

use proptest::prelude::*;

use idem_store::Store;
use shared::model::{config, op, run};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(10_000))]

    #[test]
    fn the_store_follows_the_model(config in config(), ops in prop::collection::vec(op(), 1..40)) {
        run(&mut Store::new(config), config, ops)?;
    }
}
