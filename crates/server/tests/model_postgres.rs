//! The store's model test (`crates/store/tests/shared/model.rs`), as the same code, over
//! the PostgreSQL claim table: 150 cases (the in-memory store runs 10,000), each on one
//! database emptied (rows deleted, tokens restarted) and reopened under the case's
//! configuration.

#[path = "../../store/tests/shared/mod.rs"]
mod shared;
mod support;
mod tables;

use std::cell::RefCell;

use proptest::prelude::*;

use shared::model::{config, op, run};
use tables::{Kind, SqlClaims};

thread_local! {
    static TABLE: RefCell<Option<SqlClaims>> = const { RefCell::new(None) };
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn the_postgres_table_follows_the_model(config in config(), ops in prop::collection::vec(op(), 1..40)) {
        TABLE.with_borrow_mut(|slot| {
            let table = slot.get_or_insert_with(|| SqlClaims::new(Kind::Postgres, config));
            table.reset(config);
            run(table, config, ops)
        })?;
    }
}
