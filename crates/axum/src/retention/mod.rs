//! What idem stores and for how long, and the two ways rows leave: the [`pruner`] (rows past
//! retention, in batches, never a live claim) and [`tenant`] deletion (every row of one
//! tenant, the admin command `idem-server admin delete-tenant`).
//!
//! See the crate README's "Data and retention" for what each table holds.

pub mod pruner;
pub mod tenant;
