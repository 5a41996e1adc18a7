//! A checkout and its PayCo, started as the real binary.

#![allow(dead_code)]

use tempfile::TempDir;

use crate::support::{
    postgres::Postgres,
    process::{checkout_args, Service},
};

/// PayCo (on a SQLite file in a temporary folder) and one checkout, on a SQLite file there
/// too or on a database of its own on the shared PostgreSQL cluster.
pub struct Stack {
    pub dir: TempDir,
    pub payco: Service,
    pub server: Service,
}

impl Stack {
    /// Start both; `extra` goes to the checkout (`--lock-ms 500`, `--failpoint …`).
    pub async fn sqlite(extra: &[&str]) -> Stack {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let payco = Service::payco(dir.path()).await;
        let server = Service::start(&checkout_args(&Self::checkout_db(&dir), &payco, extra)).await;
        Stack { dir, payco, server }
    }

    /// Like [`sqlite`](Self::sqlite), the checkout on a fresh database `name` of the shared
    /// PostgreSQL cluster.
    pub async fn postgres(name: &str, extra: &[&str]) -> Stack {
        let url = Postgres::shared().fresh_database(name).await;
        let dir = tempfile::tempdir().expect("a temporary folder");
        let payco = Service::payco(dir.path()).await;
        let server = Service::start(&checkout_args(&url, &payco, extra)).await;
        Stack { dir, payco, server }
    }

    /// The checkout's database URL in `dir`.
    pub fn checkout_db(dir: &TempDir) -> String {
        format!("sqlite:{}", dir.path().join("checkout.db").display())
    }

    pub fn url(&self) -> &str {
        &self.server.url
    }
}
