//! idem-server over real HTTP on 127.0.0.1: the real binary (checkout and PayCo as child
//! processes), real SQLite files, a throwaway PostgreSQL, reqwest and raw TCP clients.
//! One test binary, so the crate links once for all of them.

#[path = "../support/mod.rs"]
mod support;

use support::client;

mod any_route;
mod bad_input;
mod challenge;
mod check;
mod completer;
mod concurrency;
mod crash;
mod decline;
mod demo;
mod example;
mod expired_key;
mod failpoints;
mod head_limits;
mod outbox;
mod path_params;
mod payco;
mod postgres_restart;
mod problems;
mod protocol;
mod stack;
mod two_step;
mod unknown_charge;
mod views;
