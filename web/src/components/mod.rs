//! One panel or piece per file: a Yew component where it keeps state (hooks) or skips
//! re-rendering on equal props; otherwise a plain function of what it shows, called from its
//! parent (each component type costs Yew's mount/reuse/update machinery in the bundle, about
//! 0.3–0.5 KB gzip; web/README.md "Bundle").

pub mod checkout;
pub mod claim_row;
pub mod claim_table;
pub mod event_feed;
pub mod field;
pub mod header;
pub mod help;
pub mod invariant;
pub mod keyboard;
pub mod lab_view;
pub mod ledger;
pub mod mode_switch;
pub mod network;
pub mod properties;
pub mod real_banner;
pub mod real_faults;
pub mod real_status;
pub mod scenario_bar;
pub mod sequence;
pub mod server;
pub mod server_controls;
pub mod share_bar;
pub mod storage_record;
pub mod time_controls;
pub mod timeline;
pub mod tour;
pub mod window;
