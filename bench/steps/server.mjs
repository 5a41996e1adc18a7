// Server figures: idem-server's example checkout on 127.0.0.1 with PayCo answered in-process
// (bench/server), on SQLite and on a throwaway PostgreSQL, in one run: keyed first requests/s,
// replays/s and 409s/s with p50/p99, the same route without a key, statements per request
// (counted from sqlx's query log), beside the database's own limit for the same statements:
// SQLite, the statements one keyed first request sent, run directly through the driver (sqlx,
// no idem_server::db, no HTTP) in a loop; PostgreSQL, the same statements as a pgbench custom
// script. Each backend runs twice: unpinned, and pinned (see below), the targets on the pinned
// run: keyed first requests >= 0.7x (PostgreSQL) / 0.85x (SQLite) that limit, every round above
// 0.6. The limit and the keyed first requests alternate three times in one run; the figure is the
// round with the median ratio. Replays and 409s: one statement per request. Wait mode: a burst
// figure per backend.
// Built with the server profile into target/bench.
import { figure, fmt, run, save, say } from './lib.mjs';

const STEP = 'server';
const N = Number(process.env.IDEM_BENCH_SERVER_REQUESTS ?? 3000);
const C = 16;
const env = { ...process.env, CARGO_TARGET_DIR: 'target/bench' };
const BIN = 'target/bench/server/idem-bench-server';

say(STEP, 'building bench/server (server profile)');
run('cargo', ['build', '--locked', '--profile', 'server', '-p', 'idem-bench-server'], { env, stdio: 'inherit' });

const figures = [];
const details = [];
// The server's share of the database (issue 30), measured as the machine runs it (everything
// on both cores) and pinned: this process on CPU 0, which holds the server, its load and the
// limit's client; PostgreSQL's cluster started on CPU 1 through IDEM_BENCH_DB_CPUS, so the server
// and pgbench each meet the database on a core of its own. SQLite runs inside the process, so
// pinned there means the server, its load, SQLite and the limit's driver loop all on CPU 0.
// (SQLite's engine can be moved to CPU 1 as well, IDEM_BENCH_DB_CPUS=1 on the sqlite run:
// bench/server/src/pin.rs; both sides then run slower, every statement's hand-off between sqlx's
// threads crossing cores, and the ratio is no better: bench/FINDINGS.md.)
const PINNED_TARGET = { sqlite: 0.85, postgres: 0.7 };
const ROUND_FLOOR = 0.6;
for (const backend of ['sqlite', 'postgres']) {
  const measured = {};
  for (const pinned of [false, true]) {
    say(STEP, `${backend}${pinned ? ' (pinned)' : ''}: ${N} requests per phase, ${C} concurrent`);
    const out = pinned
      ? run('taskset', ['-c', '0', BIN, backend, String(N), String(C)], {
          // PostgreSQL's cluster on CPU 1; SQLite stays on CPU 0 with the rest (see above).
          env: backend === 'postgres' ? { ...process.env, IDEM_BENCH_DB_CPUS: '1' } : process.env,
        })
      : run(BIN, [backend, String(N), String(C)]);
    // The checkout prints its listening line first; the result is the last line.
    const r = JSON.parse(out.trim().split('\n').pop());
    const { sent, ...shown } = r;
    if (shown.pgbench) delete shown.pgbench.script;
    say(STEP, JSON.stringify(shown));
    if (backend === 'postgres' && !r.pgbench?.tps) throw new Error('pgbench gave no tps (see its output above)');
    measured[pinned ? 'pinned' : 'shared'] = r;
  }
  const r = measured.shared;
  const p = measured.pinned;
  const lat = (x) => `p50 ${fmt(x.p50_ms)} ms, p99 ${fmt(x.p99_ms)} ms`;
  // Statements on the request's path, and the pool's release probes after it (PostgreSQL).
  const stmts = (x) =>
    `${fmt(x.statements_per_request)} statements/request` +
    (x.release_probes_per_request ? ` + ${fmt(x.release_probes_per_request)} release probes off its path` : '');
  const pg = backend === 'postgres';
  const limitOf = (x) => (pg ? x.pgbench.tps : x.raw.rps);
  const limitName = pg
    ? 'pgbench, custom script of the same statements'
    : 'the same statements through the driver (sqlx) in a loop';
  const rounds = (x) => x.first.ratios.map((v) => v.toFixed(2)).join(', ');
  const firstValue = (x) =>
    `${fmt(x.first.rps)}/s (${lat(x.first)}; ${stmts(x.first)} logged, ${x.raw.statements_per_request} with BEGIN/COMMIT) vs ${fmt(limitOf(x))}/s; ` +
    `the median of ${x.first.ratios.length} alternating rounds, whose ratios were ${rounds(x)}`;
  figures.push(
    figure({
      id: `server.${backend}.first.pinned`,
      name: `Server (${backend}), keyed first requests/s vs the database's limit (${limitName}), **pinned**: ${pg ? 'PostgreSQL on CPU 1, the server with its load (and pgbench) on CPU 0' : 'the whole process (server, load, SQLite) and the limit\'s loop on CPU 0'}`,
      value: firstValue(p),
      target: `≥ ${PINNED_TARGET[backend]}×, every round > ${ROUND_FLOOR}`,
      ratio: p.first.rps / limitOf(p),
      limit: PINNED_TARGET[backend],
      better: 'higher',
      also: p.first.ratios.every((v) => v > ROUND_FLOOR),
    }),
    figure({
      id: `server.${backend}.first`,
      name: `Server (${backend}), keyed first requests/s vs the database's limit (${limitName}), unpinned: both cores shared by everything`,
      value: firstValue(r),
      ratio: r.first.rps / limitOf(r),
    }),
    figure({
      id: `server.${backend}.replay`,
      name: `Server (${backend}), replays/s`,
      value: `${fmt(r.replay.rps)}/s (${lat(r.replay)}; ${stmts(r.replay)})`,
      target: '1 statement on its path',
      ratio: r.replay.statements_per_request,
      limit: 1,
    }),
    figure({
      id: `server.${backend}.conflict`,
      name: `Server (${backend}), 409s/s on a key in flight`,
      value: `${fmt(r.conflict.rps)}/s (${lat(r.conflict)}; ${stmts(r.conflict)})`,
      target: '1 statement on its path',
      ratio: r.conflict.statements_per_request,
      limit: 1,
    }),
    figure({
      id: `server.${backend}.wait`,
      name: `Server (${backend}), wait mode: bursts of ${r.wait_burst.duplicates} duplicates of one key in flight (its PayCo call held ${r.wait_burst.first_held_ms} ms), answered its replay instead of a 409`,
      value: `${fmt(r.wait_burst.answers_per_s)} answers/s over ${r.wait_burst.bursts} bursts (p50 ${fmt(r.wait_burst.p50_ms)} ms, p99 ${fmt(r.wait_burst.p99_ms)} ms; ${Object.entries(r.wait_burst.statuses).map(([k, v]) => `${v} × ${k}`).join(', ')})`,
    }),
    figure({
      id: `server.${backend}.unkeyed`,
      name: `Server (${backend}), the same route without a key (no idem), requests/s`,
      value: `${fmt(r.unkeyed.rps)}/s (${lat(r.unkeyed)}; ${stmts(r.unkeyed)}); keyed first is ${fmt(r.first.rps / r.unkeyed.rps)}× of it`,
    }),
    figure({
      id: `server.${backend}.storage`,
      name: `Server (${backend}), the database side alone: the same statements through the driver, and through idem_server::db, in a loop`,
      value: `driver ${fmt(r.raw.rps)}/s; idem_server::db ${fmt(r.direct.rps)}/s (${fmt(r.direct.rps / r.raw.rps)}× the driver)` +
        (pg ? `; pgbench ${fmt(r.pgbench.tps)}/s` : ''),
    }),
  );
  details.push(
    `**${backend}**, as the server sent them (recorded from sqlx's query log; the database's ` +
      `limit runs exactly these, \`BEGIN\`/\`COMMIT\` around the claim's and, on SQLite, the commit's):\n\n` +
      r.sent.map((s, i) => `${i + 1}. \`${s.replace(/\s+/g, ' ')}\``).join('\n'),
  );
}
save(STEP, {
  step: STEP,
  figures,
  details: ['### Server: the statements of one keyed first request', '', ...details.flatMap((d) => [d, ''])].join('\n'),
});
