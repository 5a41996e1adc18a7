//! JavaScript bindings (wasm32, `js-api` feature): the `IdempotentClient` class and its
//! TypeScript declarations.
//!
//! - `client.rs`: the exported class and the run of one call (lock, start, fetch driver);
//! - `in_flight.rs`: concurrent calls of one page sharing one operation;
//! - `options.rs`: `ClientOptions` read and checked;
//! - `convert.rs`: outcomes, listings and errors as plain JS objects;
//! - `typescript.rs`: the declarations of those objects.

mod client;
mod convert;
mod in_flight;
mod options;
mod typescript;
