//! The store's rule tests (`crates/store/tests/shared/rules.rs`), as the same code, over
//! the PostgreSQL claim table: one fresh database per test on a throwaway cluster (or
//! `DATABASE_URL`).

#[path = "../../store/tests/shared/mod.rs"]
mod shared;
mod support;
mod tables;

use tables::{Kind, SqlClaims};

rule_tests!(|config| SqlClaims::new(Kind::Postgres, config));
