//! The page's state, as plain data with reducers. Nothing here touches the DOM or storage, so
//! it is unit-tested natively (`cargo test -p idem-web`).

pub mod clock;
pub mod fields;
pub mod run_log;
pub mod scenario;
pub mod settings;
pub mod view;
pub mod keyboard;
pub mod share;
pub mod lab_race;
pub mod timeline;
