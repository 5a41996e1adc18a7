//! idem-server: idem-store's rules behind real HTTP, on a real database.
//!
//! The HTTP half: an axum application whose idempotent routes read the scope (tenant), the
//! `Idempotency-Key` and the body ([`request`]), let the store decide (`idem_server::db`),
//! and answer with the store's wire values ([`wire`], `idem_store::http`). It serves the
//! example checkout ([`checkout`]) and PayCo, the payment provider it charges ([`payco`]),
//! each on its own port with its own database, and offers a generic tower layer for routes
//! whose work cannot share the claim's transaction ([`two_step`]).
//!
//! What it does not do: it holds no decision rule of its own (the decision table is
//! idem-store's), writes no SQL for the claim table (that is `db`), and hand-writes no error
//! body (problem details come from `idem_store::http` and [`problems`]). TLS is left to a
//! proxy in front.
#![warn(missing_docs)]

pub mod cors;
pub mod failpoint;
pub mod problems;
pub mod request;
pub mod serve;
pub mod wire;
