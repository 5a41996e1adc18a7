// Server figures: idem-server's example checkout on 127.0.0.1 with PayCo answered in-process
// (bench/server), on SQLite and on a throwaway PostgreSQL, in one run: keyed first requests/s,
// replays/s and 409s/s with p50/p99, the same route without a key, statements per request
// (counted from sqlx's query log), beside the database's own limit for the same statements:
// SQLite, the statements one keyed first request sent, run directly through the driver (sqlx,
// no idem_server::db, no HTTP) in a loop; PostgreSQL, the same statements as a pgbench custom
// script. Target: keyed first requests >= 0.5x that limit. The limit and the keyed first
// requests alternate three times in one run; the figure is the round with the median ratio.
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
for (const backend of ['sqlite', 'postgres']) {
  say(STEP, `${backend}: ${N} requests per phase, ${C} concurrent`);
  // The checkout prints its listening line first; the result is the last line.
  const r = JSON.parse(run(BIN, [backend, String(N), String(C)]).trim().split('\n').pop());
  const { sent, ...shown } = r;
  if (shown.pgbench) delete shown.pgbench.script;
  say(STEP, JSON.stringify(shown));
  const lat = (p) => `p50 ${fmt(p.p50_ms)} ms, p99 ${fmt(p.p99_ms)} ms`;
  const pg = backend === 'postgres';
  if (pg && !r.pgbench?.tps) throw new Error('pgbench gave no tps (see its output above)');
  const limit = pg ? r.pgbench.tps : r.raw.rps;
  const limitName = pg
    ? 'pgbench, custom script of the same statements'
    : 'the same statements through the driver (sqlx) in a loop';
  figures.push(
    figure({
      id: `server.${backend}.first`,
      name: `Server (${backend}), keyed first requests/s vs the database's limit (${limitName})`,
      value: `${fmt(r.first.rps)}/s (${lat(r.first)}; ${fmt(r.first.statements_per_request)} statements/request logged, ${r.raw.statements_per_request} with BEGIN/COMMIT) vs ${fmt(limit)}/s; ` +
        `the median of ${r.first.ratios.length} alternating rounds, whose ratios were ${r.first.ratios.map((x) => x.toFixed(2)).join(', ')}`,
      target: '≥ 0.5×',
      ratio: r.first.rps / limit,
      limit: 0.5,
      better: 'higher',
    }),
    figure({
      id: `server.${backend}.replay`,
      name: `Server (${backend}), replays/s`,
      value: `${fmt(r.replay.rps)}/s (${lat(r.replay)}; ${fmt(r.replay.statements_per_request)} statements/request)`,
    }),
    figure({
      id: `server.${backend}.conflict`,
      name: `Server (${backend}), 409s/s on a key in flight`,
      value: `${fmt(r.conflict.rps)}/s (${lat(r.conflict)}; ${fmt(r.conflict.statements_per_request)} statements/request)`,
    }),
    figure({
      id: `server.${backend}.unkeyed`,
      name: `Server (${backend}), the same route without a key (no idem), requests/s`,
      value: `${fmt(r.unkeyed.rps)}/s (${lat(r.unkeyed)}; ${fmt(r.unkeyed.statements_per_request)} statements/request); keyed first is ${fmt(r.first.rps / r.unkeyed.rps)}× of it`,
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
      sent.map((s, i) => `${i + 1}. \`${s.replace(/\s+/g, ' ')}\``).join('\n'),
  );
}
save(STEP, {
  step: STEP,
  figures,
  details: ['### Server: the statements of one keyed first request', '', ...details.flatMap((d) => [d, ''])].join('\n'),
});
