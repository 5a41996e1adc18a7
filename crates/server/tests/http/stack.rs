//! A checkout and its PayCo, started as the real binary.

#![allow(dead_code)]

use tempfile::TempDir;

use crate::support::process::{checkout_args, Service};

/// PayCo and one checkout on SQLite files in a temporary folder.
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

    /// The checkout's database URL in `dir`.
    pub fn checkout_db(dir: &TempDir) -> String {
        format!("sqlite:{}", dir.path().join("checkout.db").display())
    }

    pub fn url(&self) -> &str {
        &self.server.url
    }
}
