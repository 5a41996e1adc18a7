//! The page's state, as plain data with reducers. Nothing here touches the DOM or storage, so
//! it is unit-tested natively (`cargo test -p idem-web`).

pub mod cart;
pub mod clock;
pub mod fields;
pub mod keyboard;
pub mod lab;
pub mod real;
pub mod run_log;
pub mod scenario;
pub mod sequence;
pub mod settings;
pub mod tour;
pub mod view;
