//! The store's rule tests (`crates/store/tests/shared/rules.rs`), as the same code, over
//! the SQLite claim table: one fresh database file per test.

#[path = "../../store/tests/shared/mod.rs"]
mod shared;
mod support;
mod tables;

use tables::{Kind, SqlClaims};

rule_tests!(|config| SqlClaims::new(Kind::Sqlite, config));
