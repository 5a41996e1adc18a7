// Where the checkout server's CPU goes, from `perf script -F comm,ip,sym,dso` on stdin (a
// `perf record --call-graph dwarf` of the server process alone: bench/server/profile/run.sh).
//
// Each sample is first put in the task it belongs to, by a frame anywhere in its stack: a
// checkout request (the connection tasks `idem_server::serve::serve_until` spawns: hyper's
// server side, axum, the handler and everything it awaits inline: the database driver, the
// JSON, the fingerprint), sqlx's ping of a connection coming back to its pool, the PayCo call's
// client connection (hyper's client dispatch), the in-process PayCo stub (its own axum::serve
// connections), SQLite's connection threads, or the runtime alone. Inside a checkout request a
// sample is charged to the innermost frame that names a component; kernel, libc and runtime
// plumbing frames are skipped, so a syscall (and the kernel's loopback delivery behind it) or a
// malloc is charged to whoever made it.
//
//   perf script -i perf.data -F comm,ip,sym,dso | node bench/server/profile/classify.mjs [--detail PREFIX]
import { createInterface } from 'node:readline';

const COMPONENTS = [
  ['database: sqlx PostgreSQL driver (protocol, socket to the server)', /sqlx_postgres|sqlx_core::net/],
  ['database: sqlx SQLite (statement hand-off to the connection thread)', /sqlx_sqlite/],
  ['database: sqlx core (pool, query, arguments)', /sqlx_core|^sqlx::/],
  ['fingerprint (RFC 8785 canonical JSON + SHA-256)', /idem_store::fingerprint|serde_json_canonicalizer|sha2::|ryu_js/],
  ['JSON (serde_json: parameters, bodies)', /serde_json|^<serde::|serde::de|serde::ser|serde_core/],
  ['PayCo call, request side (reqwest)', /reqwest::|idem_server::checkout::payco_client/],
  ['tracing (request span, log filter)', /tracing_subscriber|tracing_core|^tracing::|<tracing::/],
  ['metrics (latency histogram, counters)', /idem_server::ops::metrics|prometheus_client/],
  ['idem-store (key, rules, wire)', /idem_store::/],
  ['idem-server handler and storage glue', /idem_server::/],
  ['HTTP server (hyper, axum, tower)', /hyper::|axum::|tower::|tower_http::|hyper_util::|^<?http::/],
  ['runtime (tokio wake-ups, timers)', /tokio::/],
];
const SKIP =
  /tokio::runtime::io::registration|tokio::io|tokio::net|mio::|^\[unknown\]$|^<?(core|alloc|std)::|__rust|malloc|free|realloc|calloc|^__?mem|^_int_|^__GI|pthread|^syscall$|^__libc|^epoll|^send|^recv|^write|^read|futures_util|futures_core|pin_project|^<futures|^<pin_project|parking_lot|^start_thread|^clone3?$|^__clone|^<?bytes::/;

const isKernel = ([, dso]) => dso.includes('kernel');

function innermost(frames) {
  for (const [sym, dso] of frames) {
    if (dso.includes('kernel') || SKIP.test(sym)) continue;
    for (const [name, rx] of COMPONENTS) if (rx.test(sym)) return name;
  }
  return 'other';
}

function classify(comm, frames) {
  const joined = frames.map(([s]) => s).join('\n');
  if (comm.startsWith('sqlx-sqlite')) {
    return /sqlite3/.test(joined)
      ? "SQLite's connection threads: SQLite itself (sqlite3, WAL, file I/O)"
      : "SQLite's connection threads: sqlx's worker loop (channels, wake-ups)";
  }
  if (joined.includes('return_to_pool')) return "database: sqlx's ping of each connection back in the pool (off the request's path)";
  if (joined.includes('idem_bench_server::load')) return 'load generator (in this process)';
  if (/hyper::proto::h1::dispatch::Client|hyper_util::client/.test(joined)) return 'PayCo call, connection (hyper client: socket I/O)';
  if (joined.includes('idem_bench_server::stub') || (joined.includes('axum::serve') && !joined.includes('serve_until'))) {
    return 'PayCo stub (the in-process PayCo: its server and handler)';
  }
  if (joined.includes('idem_server::')) return `checkout request: ${innermost(frames)}`;
  if (frames.length && frames.every(isKernel)) return 'kernel only (interrupts, scheduler)';
  if (joined.includes('tokio::runtime')) return 'runtime alone: park, epoll, wake-ups (no task on the stack)';
  return 'other / unresolved';
}

const detail = process.argv.includes('--detail') ? process.argv[process.argv.indexOf('--detail') + 1] : null;
const counts = new Map();
let total = 0;
let comm = null;
let frames = [];
const flush = () => {
  if (comm === null) return;
  total += 1;
  let key = classify(comm, frames);
  if (detail !== null) {
    if (!key.startsWith(detail)) return;
    const user = frames.filter((f) => !isKernel(f));
    key = [user[0]?.[0], ...user.filter(([s]) => !SKIP.test(s)).slice(0, 2).map(([s]) => s)].join(' < ').slice(0, 200);
  }
  counts.set(key, (counts.get(key) ?? 0) + 1);
};
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) {
    flush();
    comm = null;
    frames = [];
  } else if (!/^\s/.test(line)) {
    comm = line.trim().split(/\s+/)[0];
    frames = [];
  } else {
    const m = line.match(/^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$/);
    if (m) frames.push([m[1].replace(/\+0x[0-9a-f]+$/, ''), m[2]]);
  }
}
flush();
console.log(`samples: ${total}`);
for (const [name, n] of [...counts].sort((a, b) => b[1] - a[1]).slice(0, detail ? 15 : undefined)) {
  console.log(`${((100 * n) / total).toFixed(1).padStart(5)} %  ${name}`);
}
