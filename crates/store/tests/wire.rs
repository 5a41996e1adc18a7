//! The store writes exactly the responses of the shared wire table (`tests/common/wire.rs`),
//! which the client's tests read back. Runs natively and in Chromium.

#[cfg(target_arch = "wasm32")]
use wasm_bindgen_test::wasm_bindgen_test as test;
#[cfg(target_arch = "wasm32")]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

#[allow(dead_code)] // the client reads the fields the store does not
mod common {
    pub mod wire;
}

use common::wire::CASES;
use idem_store::http::{self, HttpResponse};
use idem_store::{Begin, RequestError, SavedResponse};

fn response(name: &str) -> HttpResponse {
    match name {
        "in flight, 1 500 ms left" => http::response_for(&Begin::InFlight {
            retry_after_ms: 1_500,
        }),
        "lease lost" => Some(http::lease_lost()),
        "mismatch" => http::response_for(&Begin::Mismatch),
        "key expired" => http::response_for(&Begin::KeyExpired),
        "missing key" => Some(http::problem_for(&RequestError::MissingKey)),
        "body too large" => Some(http::problem_for(&RequestError::BodyTooLarge {
            len: 70_000,
            limit: 65_536,
        })),
        "no token" => Some(http::unauthorized(
            http::Challenge::TokenMissing,
            "missing bearer token",
        )),
        "unknown token" => Some(http::unauthorized(
            http::Challenge::TokenInvalid,
            "unknown bearer token",
        )),
        "replay" => http::response_for(&Begin::Replay(SavedResponse::json(
            201,
            br#"{"order":17}"#.to_vec(),
        ))),
        other => panic!("no store decision for wire case {other:?}"),
    }
    .expect("a decision with a canned response")
}

#[test]
fn the_store_writes_the_shared_wire_table() {
    for case in CASES {
        let r = response(case.name);
        assert_eq!(r.status, case.status, "{}", case.name);
        let headers: Vec<(&str, &str)> = r
            .headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect();
        assert_eq!(headers, case.headers, "{}", case.name);
        assert_eq!(String::from_utf8_lossy(&r.body), case.body, "{}", case.name);
    }
}
