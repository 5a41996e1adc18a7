//! SQLite's engine on a core of its own, as PostgreSQL gets one in the pinned runs.
//!
//! sqlx runs each SQLite connection on a thread of its own (`sqlx-sqlite-worker-N`): every
//! statement's work inside SQLite (parsing, the B-tree, the WAL) happens there, and the async
//! side only sends it commands and awaits the answers. Those threads are SQLite's share of the
//! CPU, as PostgreSQL's backends are PostgreSQL's. With `IDEM_BENCH_DB_CPUS` set on a SQLite run
//! (under `taskset -c 0`), [`sqlite_engine`] moves each of them onto those CPUs as it appears,
//! so the server with its load, and the limit's loop, meet SQLite on a core of its own, both
//! sides of the ratio alike. An experiment, not a `make bench` row: on these machines every
//! hand-off between sqlx's threads then crosses cores, and both sides ran slower with the ratio
//! no better (bench/FINDINGS.md).
//!
//! Connections are opened lazily by the pools, so a watcher thread looks for new workers every
//! few milliseconds (a read of `/proc/self/task`; it sleeps in between, on the process's core).

use std::{collections::HashSet, fs, time::Duration};

/// The kernel keeps 15 bytes of a thread's name: what `sqlx-sqlite-worker-N` leaves.
const WORKER: &str = "sqlx-sqlite-wor";

/// How often the watcher looks for new connection threads.
const EVERY: Duration = Duration::from_millis(50);

/// Starts the watcher if `IDEM_BENCH_DB_CPUS` (a comma-separated list of CPU numbers) is set;
/// the CPUs it pins to, for the result's description.
pub fn sqlite_engine() -> Option<Vec<usize>> {
    let cpus: Vec<usize> = std::env::var("IDEM_BENCH_DB_CPUS")
        .ok()?
        .split(',')
        .map(|c| c.trim().parse().expect("IDEM_BENCH_DB_CPUS: CPU numbers"))
        .collect();
    let set = cpu_set(&cpus);
    std::thread::Builder::new()
        .name("bench-pin".into())
        .spawn(move || {
            let mut seen = HashSet::new();
            loop {
                for tid in new_workers(&mut seen) {
                    // SAFETY: `set` is a valid, initialised cpu_set_t of the size given.
                    let r =
                        unsafe { libc::sched_setaffinity(tid, std::mem::size_of_val(&set), &set) };
                    let e = std::io::Error::last_os_error();
                    // A connection closed since the look (ESRCH) needs no pinning.
                    if r != 0 && e.raw_os_error() != Some(libc::ESRCH) {
                        eprintln!("pin thread {tid}: {e}");
                        std::process::exit(1);
                    }
                }
                std::thread::sleep(EVERY);
            }
        })
        .expect("the pinning thread");
    Some(cpus)
}

fn cpu_set(cpus: &[usize]) -> libc::cpu_set_t {
    // SAFETY: cpu_set_t is a plain bit array; all zeroes is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: CPU_SET writes a bit inside `set` (it checks `cpu` against the set's size).
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    set
}

/// The thread ids of sqlx's SQLite connection threads in this process that are not in `seen`;
/// every thread looked at goes into `seen`, so a thread's name is read once (a look costs a
/// directory listing, not a file per thread).
fn new_workers(seen: &mut HashSet<libc::pid_t>) -> Vec<libc::pid_t> {
    let Ok(tasks) = fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .filter_map(|task| {
            let task = task.ok()?;
            let tid: libc::pid_t = task.file_name().to_str()?.parse().ok()?;
            if !seen.insert(tid) {
                return None;
            }
            let comm = fs::read_to_string(task.path().join("comm")).ok()?;
            (comm.trim_end() == WORKER).then_some(tid)
        })
        .collect()
}
