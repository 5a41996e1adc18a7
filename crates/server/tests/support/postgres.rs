//! A throwaway PostgreSQL cluster for tests: `initdb` into a temporary folder, a free port on
//! 127.0.0.1, stopped (and its folder removed) on drop, and by a watchdog when the test process
//! ends without dropping it ([`Postgres::shared`] lives in a static, which is never dropped).
//!
//! `DATABASE_URL` set in the environment points [`Postgres::shared`] at that server instead, so a
//! developer or CI can use a server of their own. A test that needs PostgreSQL never skips: if the
//! binaries are missing, starting fails with a message saying how to install them
//! (`scripts/tools.sh test` does).
//!
//! PostgreSQL refuses to run as root; when the tests run as root (as CI does), every server
//! command runs as the `postgres` user through `runuser`.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// A running cluster this process started, or a server named by `DATABASE_URL`.
pub struct Postgres {
    url: String,
    cluster: Option<Cluster>,
}

struct Cluster {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
}

impl Postgres {
    /// One cluster for the whole test binary (or the `DATABASE_URL` server), started on first use.
    /// Tests that share it must use their own database or scope names.
    pub fn shared() -> &'static Postgres {
        static SHARED: OnceLock<Postgres> = OnceLock::new();
        SHARED.get_or_init(|| match std::env::var("DATABASE_URL") {
            Ok(url) if url.starts_with("postgres") => Postgres { url, cluster: None },
            _ => Postgres::start(),
        })
    }

    /// A cluster of its own, for a test that stops or restarts the server.
    pub fn start() -> Postgres {
        let bin = pg_bin();
        let dir = std::env::temp_dir().join(format!(
            "idem-pg-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create the cluster's temporary folder");
        if is_root() {
            run(
                Command::new("chown").arg("postgres").arg(&dir),
                "chown the cluster folder",
            );
        }
        run(
            as_postgres(&bin.join("initdb"))
                .arg("-D")
                .arg(dir.join("data"))
                .args(["-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]),
            "initdb",
        );
        let cluster = Cluster {
            bin,
            dir,
            port: free_port(),
        };
        cluster.pg_ctl_start();
        cluster.stop_when_this_process_ends();
        let url = format!("postgres://postgres@127.0.0.1:{}/postgres", cluster.port);
        Postgres {
            url,
            cluster: Some(cluster),
        }
    }

    /// The connection URL (`postgres://postgres@127.0.0.1:PORT/postgres`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// A database of its own on this server, `NAME_<pid>` (dropped first if a run of the same
    /// process id left one): its URL.
    pub async fn fresh_database(&self, name: &str) -> String {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(self.url())
            .await
            .expect("connect to the cluster");
        let name = format!("{name}_{}", std::process::id());
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {name}"
        )))
        .execute(&mut conn)
        .await
        .expect("drop an old database");
        sqlx::query(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut conn)
            .await
            .expect("create the database");
        let base = self.url().rsplit_once('/').expect("a URL with a path").0;
        format!("{base}/{name}")
    }

    /// The server's log so far (what PostgreSQL itself wrote: warnings, errors), or `None`
    /// for a `DATABASE_URL` server, whose log this process cannot read.
    pub fn log(&self) -> Option<String> {
        let cluster = self.cluster.as_ref()?;
        Some(std::fs::read_to_string(cluster.dir.join("log")).unwrap_or_default())
    }

    /// Stops the server (fast shutdown: open connections are cut). Panics for a `DATABASE_URL`
    /// server, which this process does not own.
    pub fn stop(&self) {
        self.own()
            .pg_ctl(&["-m", "fast", "-w", "stop"], "pg_ctl stop");
    }

    /// Starts a stopped server again on the same port and data.
    pub fn resume(&self) {
        self.own().pg_ctl_start();
    }

    fn own(&self) -> &Cluster {
        self.cluster
            .as_ref()
            .expect("only a cluster this test started can be stopped")
    }
}

impl Cluster {
    fn pg_ctl_start(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("log");
        let log = log.to_string_lossy().into_owned();
        let args = ["-o", &options, "-l", &log, "-w", "start"];
        // `make bench`'s pinned measure (bench/steps/server.mjs): the server and every backend
        // it forks on the CPUs IDEM_BENCH_DB_CPUS names, its clients on the others.
        match std::env::var("IDEM_BENCH_DB_CPUS") {
            Ok(cpus) => {
                let mut cmd = Command::new("taskset");
                cmd.args(["-c", &cpus]);
                if is_root() {
                    cmd.args(["runuser", "-u", "postgres", "--"]);
                }
                cmd.arg(self.bin.join("pg_ctl"))
                    .arg("-D")
                    .arg(self.dir.join("data"))
                    .args(args);
                run(&mut cmd, "pg_ctl start (pinned)");
            }
            Err(_) => self.pg_ctl(&args, "pg_ctl start"),
        }
    }

    /// A detached shell that waits for this test process to end, then stops the server and
    /// removes its folder: statics are never dropped, and a panic or an abort skips `Drop`, so
    /// without it every test binary would leave a running server behind.
    fn stop_when_this_process_ends(&self) {
        let pg_ctl = self.bin.join("pg_ctl");
        let stop = if is_root() {
            "runuser -u postgres -- \"$1\" -D \"$2/data\" -m immediate -w stop"
        } else {
            "\"$1\" -D \"$2/data\" -m immediate -w stop"
        };
        let script = format!(
            "while kill -0 $0 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf \"$2\""
        );
        let spawned = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg(std::process::id().to_string())
            .arg(&pg_ctl)
            .arg(&self.dir)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn();
        // Without a watchdog the cluster still stops on drop; a leak is not worth failing a test.
        drop(spawned);
    }

    fn pg_ctl(&self, args: &[&str], what: &str) {
        run(
            as_postgres(&self.bin.join("pg_ctl"))
                .arg("-D")
                .arg(self.dir.join("data"))
                .args(args),
            what,
        );
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        if let Some(cluster) = &self.cluster {
            let _ = as_postgres(&cluster.bin.join("pg_ctl"))
                .arg("-D")
                .arg(cluster.dir.join("data"))
                .args(["-m", "immediate", "-w", "stop"])
                .output();
            let _ = std::fs::remove_dir_all(&cluster.dir);
        }
    }
}

static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// `IDEM_PG_BIN`, or the newest `/usr/lib/postgresql/*/bin` with an `initdb`.
fn pg_bin() -> PathBuf {
    if let Ok(bin) = std::env::var("IDEM_PG_BIN") {
        return PathBuf::from(bin);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("bin"))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    found.sort_by_key(|bin| version_of(bin));
    found.pop().unwrap_or_else(|| {
        panic!(
            "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin: \
             run `scripts/tools.sh test` (apt-get install postgresql), set IDEM_PG_BIN, \
             or point DATABASE_URL at a server"
        )
    })
}

fn version_of(bin: &Path) -> u32 {
    bin.parent()
        .and_then(|v| v.file_name())
        .and_then(|v| v.to_str())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn is_root() -> bool {
    // `id -u` avoids a libc dependency for one number.
    Command::new("id")
        .arg("-u")
        .output()
        .map(|out| out.stdout.starts_with(b"0\n"))
        .unwrap_or(false)
}

fn as_postgres(program: &Path) -> Command {
    if is_root() {
        let mut cmd = Command::new("runuser");
        cmd.args(["-u", "postgres", "--"]).arg(program);
        cmd
    } else {
        Command::new(program)
    }
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: could not run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port on 127.0.0.1")
}
