//! The real binaries as child processes: `idem-server serve` (the checkout) and
//! `idem-server payco`, each on a free port of 127.0.0.1 that it reports on stdout, killed
//! (SIGKILL) when dropped.

#![allow(dead_code)]

use std::{path::Path, process::Stdio, time::Duration};

use tokio::{
    io::{AsyncBufReadExt, BufReader, Lines},
    process::{Child, ChildStderr, Command},
};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_idem-server");

/// The bearer tokens the tests' checkout and PayCo accept, as `TOKEN=TENANT`.
pub const TENANT_A: (&str, &str) = ("token-a", "tenant-a");
pub const TENANT_B: (&str, &str) = ("token-b", "tenant-b");
pub const MERCHANT: (&str, &str) = ("merchant-token", "shop");

/// A running service.
pub struct Service {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// `None` once handed to [`forward_stderr`](Self::forward_stderr).
    stderr: Option<Lines<BufReader<ChildStderr>>>,
}

impl Service {
    /// Start `idem-server ARGS… --listen 127.0.0.1:0` and wait until it says where it listens.
    pub async fn start(args: &[String]) -> Service {
        Self::start_on("127.0.0.1:0", args).await
    }

    /// Like [`start`](Self::start) on a given listen address (to restart on the same port).
    pub async fn start_on(listen: &str, args: &[String]) -> Service {
        let mut child = Command::new(BIN)
            .args(args)
            .args(["--listen", listen])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn idem-server");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
        let mut stdout = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), stdout.next_line())
            .await
            .expect("the service reports its address within 30 s")
            .expect("read stdout")
            .expect("the service printed its address before exiting");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_owned();
        // Keep draining stdout so the child never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = stdout.next_line().await {} });
        Service {
            child,
            url,
            stderr: Some(stderr),
        }
    }

    /// PayCo on its own SQLite file in `dir`.
    pub async fn payco(dir: &Path) -> Service {
        let db = format!("sqlite:{}", dir.join("payco.db").display());
        Self::start(&args(&[
            "payco",
            "--database",
            &db,
            "--merchant",
            &format!("{}={}", MERCHANT.0, MERCHANT.1),
        ]))
        .await
    }

    /// The receipts service (the outbox's consumer) on `database`, with the tests' tenants and
    /// the relay's default token; `extra` after (`--failpoint consumer-after-effect=crash`).
    pub async fn receipts(database: &str, extra: &[&str]) -> Service {
        Self::start(&receipts_args(database, extra)).await
    }

    /// `host:port` of [`url`](Self::url).
    pub fn addr(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    /// Wait (up to `within`) for a stderr line containing `needle`; the lines before it are
    /// returned for diagnosis.
    pub async fn wait_for_stderr(&mut self, needle: &str, within: Duration) -> Vec<String> {
        let mut seen = Vec::new();
        let stderr = self.stderr();
        let found = tokio::time::timeout(within, async {
            while let Ok(Some(line)) = stderr.next_line().await {
                let hit = line.contains(needle);
                seen.push(line);
                if hit {
                    return true;
                }
            }
            false
        })
        .await;
        assert!(
            matches!(found, Ok(true)),
            "no stderr line with {needle:?}; saw {seen:#?}"
        );
        seen
    }

    /// Read the stderr lines written so far (waiting up to 300 ms for more) and fail if one
    /// contains `needle`.
    pub async fn assert_no_stderr(&mut self, needle: &str) {
        let mut seen = Vec::new();
        let stderr = self.stderr();
        while let Ok(Ok(Some(line))) =
            tokio::time::timeout(Duration::from_millis(300), stderr.next_line()).await
        {
            seen.push(line);
        }
        assert!(
            !seen.iter().any(|l| l.contains(needle)),
            "stderr has {needle:?}: {seen:#?}"
        );
    }

    fn stderr(&mut self) -> &mut Lines<BufReader<ChildStderr>> {
        self.stderr
            .as_mut()
            .expect("stderr is read here unless it was forwarded")
    }

    /// Hand every stderr line, now and later, to `sink` (a log), so that a long run never
    /// blocks the child on a full pipe. The `*_stderr` methods cannot be used afterwards.
    pub fn forward_stderr(&mut self, mut sink: impl FnMut(String) + Send + 'static) {
        let Some(mut stderr) = self.stderr.take() else {
            return;
        };
        tokio::spawn(async move {
            while let Ok(Some(line)) = stderr.next_line().await {
                sink(line);
            }
        });
    }

    /// Send `signal` (`STOP`, `CONT`, ...) to the process with `kill -s`.
    pub fn signal(&self, signal: &str) {
        let sent = std::process::Command::new("kill")
            .args(["-s", signal, &self.pid().to_string()])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -s {signal} {}", self.pid());
    }

    /// Whether the process has exited (without waiting).
    pub fn has_exited(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_)))
    }

    /// The child's process id (to send it a signal).
    pub fn pid(&self) -> u32 {
        self.child.id().expect("the service is running")
    }

    /// Wait up to `within` for the process to exit; its exit status.
    pub async fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        tokio::time::timeout(within, self.child.wait())
            .await
            .expect("the service exits in time")
            .expect("wait for the service")
    }

    /// SIGKILL the process and reap it (nothing to do if it already exited).
    pub async fn kill(mut self) {
        if self.has_exited() {
            return;
        }
        self.child.kill().await.expect("SIGKILL the service");
    }
}

/// The checkout's arguments for a database and a PayCo, with the tests' tenants.
pub fn checkout_args(database: &str, payco: &Service, extra: &[&str]) -> Vec<String> {
    let mut v = args(&[
        "serve",
        "--database",
        database,
        "--payco",
        &payco.url,
        "--payco-token",
        MERCHANT.0,
        "--tenant",
        &format!("{}={}", TENANT_A.0, TENANT_A.1),
        "--tenant",
        &format!("{}={}", TENANT_B.0, TENANT_B.1),
    ]);
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// The receipts service's arguments (see [`Service::receipts`]).
pub fn receipts_args(database: &str, extra: &[&str]) -> Vec<String> {
    let mut v = args(&[
        "receipts",
        "--database",
        database,
        "--sender",
        "relay-token=checkout",
        "--tenant",
        &format!("{}={}", TENANT_A.0, TENANT_A.1),
        "--tenant",
        &format!("{}={}", TENANT_B.0, TENANT_B.1),
    ]);
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// [`checkout_args`] with PayCo reached at `payco_url` (a proxy in front of `payco`).
pub fn checkout_args_via(
    database: &str,
    payco: &Service,
    payco_url: &str,
    extra: &[&str],
) -> Vec<String> {
    let mut args = checkout_args(database, payco, extra);
    let at = args.iter().position(|a| a == "--payco").expect("--payco") + 1;
    args[at] = payco_url.to_owned();
    args
}

pub fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

/// Runs `idem-server` with `a`, which must make it refuse to start (exit non-zero within 20 s
/// instead of serving); its stderr, for the test to read the reason in.
pub async fn refused_to_start(a: &[&str]) -> String {
    let child = Command::new(BIN)
        .args(args(a))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("run the binary");
    let out = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("it must refuse to start, not serve")
        .expect("wait for the binary");
    assert!(!out.status.success(), "it must refuse to start");
    String::from_utf8_lossy(&out.stderr).into_owned()
}
