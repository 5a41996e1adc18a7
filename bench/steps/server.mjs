// Server figures: idem-server's example checkout on 127.0.0.1 with PayCo answered in-process
// (bench/server), on SQLite and on a throwaway PostgreSQL: keyed first requests/s, replays/s
// and 409s/s with p50/p99, the same route without a key, statements per request (counted from sqlx's query log), beside the
// database's own limit for the same statements (SQLite: the same sequence through
// idem_server::db in a loop; PostgreSQL: also pgbench with a custom script). Target: keyed
// first requests >= 0.5x that limit. Built with the server profile into target/bench.
import { figure, fmt, run, save, say } from './lib.mjs';

const STEP = 'server';
const N = 3000;
const C = 16;
const env = { ...process.env, CARGO_TARGET_DIR: 'target/bench' };
const BIN = 'target/bench/server/idem-bench-server';

say(STEP, 'building bench/server (server profile)');
run('cargo', ['build', '--locked', '--profile', 'server', '-p', 'idem-bench-server'], { env, stdio: 'inherit' });

const figures = [];
for (const backend of ['sqlite', 'postgres']) {
  say(STEP, `${backend}: ${N} requests per phase, ${C} concurrent`);
  // The checkout prints its listening line first; the result is the last line.
  const r = JSON.parse(run(BIN, [backend, String(N), String(C)]).trim().split('\n').pop());
  say(STEP, JSON.stringify(r));
  const lat = (p) => `p50 ${fmt(p.p50_ms)} ms, p99 ${fmt(p.p99_ms)} ms`;
  const limit = backend === 'postgres' && r.pgbench?.tps ? r.pgbench.tps : r.direct.rps;
  const limitName = backend === 'postgres' && r.pgbench?.tps ? 'pgbench custom script' : 'direct db loop';
  figures.push(
    figure({
      id: `server.${backend}.first`,
      name: `Server (${backend}), keyed first requests/s vs the database's limit (${limitName})`,
      value: `${fmt(r.first.rps)}/s (${lat(r.first)}; ${fmt(r.first.statements_per_request)} statements/request) vs ${fmt(limit)}/s`,
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
      id: `server.${backend}.unkeyed`,
      name: `Server (${backend}), the same route without a key (no idem), requests/s`,
      value: `${fmt(r.unkeyed.rps)}/s (${lat(r.unkeyed)}; ${fmt(r.unkeyed.statements_per_request)} statements/request); keyed first is ${fmt(r.first.rps / r.unkeyed.rps)}× of it`,
    }),
    figure({
      id: `server.${backend}.conflict`,
      name: `Server (${backend}), 409s/s on a key in flight`,
      value: `${fmt(r.conflict.rps)}/s (${lat(r.conflict)}; ${fmt(r.conflict.statements_per_request)} statements/request)`,
    }),
  );
  if (backend === 'postgres') {
    figures.push(
      figure({
        id: 'server.postgres.direct',
        name: 'Server (postgres), the same sequence through idem_server::db, no HTTP',
        value: `${fmt(r.direct.rps)}/s`,
      }),
    );
  }
}
save(STEP, { step: STEP, figures });
