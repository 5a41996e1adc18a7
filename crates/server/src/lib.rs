//! idem-server: idem-store's rules behind real HTTP, on a real database.
//!
//! Skeleton only; the modules arrive with issue #11.
pub mod db;
