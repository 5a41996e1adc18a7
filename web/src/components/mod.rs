//! One component per file.

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
pub mod network;
pub mod properties;
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
