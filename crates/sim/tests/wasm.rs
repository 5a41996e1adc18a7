//! Determinism on wasm32: the same golden hashes as natively (tests/golden/history-hashes.txt,
//! verified natively by tests/determinism.rs).
#![cfg(target_arch = "wasm32")]

mod common;

use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn hashes_match_the_native_golden_file() {
    assert_eq!(common::golden_lines(), common::GOLDEN);
}
