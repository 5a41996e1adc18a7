//! Versioned schemas of the example's business tables (the checkout's `orders`, PayCo's
//! `ledger`), applied on start next to `db`'s claim table, each with its own sqlx migrations
//! table so the two histories never mix.

use sqlx::{
    migrate::{Migration, MigrationType, Migrator},
    SqlSafeStr,
};

use crate::{
    db::{Backend, Db},
    with_pool,
};

/// One versioned schema: a name for its migrations table and its SQL per backend.
pub struct Schema {
    /// The sqlx migrations table that records it, e.g. `_orders_migrations`.
    pub table: &'static str,
    /// Version 1, SQLite.
    pub sqlite: &'static str,
    /// Version 1, PostgreSQL.
    pub postgres: &'static str,
}

impl Schema {
    /// Apply what is not applied yet. Idempotent; safe with several servers starting at once
    /// (sqlx takes an advisory lock on PostgreSQL).
    pub async fn apply(&self, db: &Db) -> Result<(), sqlx::migrate::MigrateError> {
        let migrator = |sql: &'static str| {
            let mut m = Migrator::with_migrations(vec![Migration::new(
                1,
                "create".into(),
                MigrationType::Simple,
                sql.into_sql_str(),
                false,
            )]);
            m.dangerous_set_table_name(self.table);
            m
        };
        let sql = match db.backend() {
            Backend::Sqlite => self.sqlite,
            Backend::Postgres => self.postgres,
        };
        with_pool!(db, |pool| migrator(sql).run(pool).await)
    }
}
