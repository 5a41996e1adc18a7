// Assembles BENCHMARKS.md from target/bench/results/{store,sim,bundle,ui,sdk,server}.json, the
// machine, the date, and bench/FINDINGS.md, and warns (stderr and in the file) when any ratio
// regressed by more than 10 % against the table committed at HEAD. A step that did not run in
// this run (`IDEM_BENCH_STEPS=server bench/run.sh`) is named as missing, its rows left out; the
// committed ratios of its figures are carried over into the new file's comparison line. No
// dependencies beyond node.
//
//   node bench/report.mjs [OUT=BENCHMARKS.md]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fmt, RESULTS } from './steps/lib.mjs';

const OUT = process.argv[2] ?? 'BENCHMARKS.md';
const STEPS = ['store', 'sim', 'bundle', 'ui', 'sdk', 'server'];
const TOLERANCE = 0.1;
const MARK = 'bench-ratios';

const sh = (cmd, args) => {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
};

const ran = STEPS.filter((s) => existsSync(`${RESULTS}/${s}.json`));
const skipped = STEPS.filter((s) => !ran.includes(s));
if (ran.length === 0) throw new Error(`no results in ${RESULTS}: no step ran`);
const results = ran.map((s) => JSON.parse(readFileSync(`${RESULTS}/${s}.json`, 'utf8')));
const figures = results.flatMap((r) => r.figures);

// The committed table's ratios, from the machine-readable comment at the end of the file.
const committed = sh('git', ['show', `HEAD:${OUT}`]);
const prevMatch = committed.match(new RegExp(`<!-- ${MARK} (\\{.*\\}) -->`));
const prev = prevMatch ? JSON.parse(prevMatch[1]) : {};
const regressions = [];
for (const f of figures) {
  const old = prev[f.id];
  if (typeof old !== 'number' || f.ratio === null) continue;
  const worse = f.better === 'lower' ? f.ratio > old * (1 + TOLERANCE) : f.ratio < old * (1 - TOLERANCE);
  if (worse) regressions.push(`${f.name}: ratio ${fmt(f.ratio)}, committed ${fmt(old)}`);
}

const cpu = cpus()[0]?.model ?? 'unknown';
const machine = [
  `${sh('nproc', [])} cores (${cpu})`,
  `${(totalmem() / 2 ** 30).toFixed(1)} GiB memory`,
  sh('rustc', ['--version']),
  `node ${process.version}`,
  sh('/usr/bin/chromium', ['--version']),
].join(', ');
const date = new Date().toISOString().replace(/\.\d+Z$/, ' UTC').replace('T', ' ');
const commit = sh('git', ['rev-parse', '--short', 'HEAD']);
const dirty = sh('git', ['status', '--porcelain', '--untracked-files=no']) ? ' plus uncommitted changes in the work tree' : '';

const verdict = (f) => (f.pass === null ? 'info' : f.pass ? '✅ pass' : '❌ miss');
const rows = figures.map(
  (f) => `| ${f.name} | ${f.value}${f.note ? ` (${f.note})` : ''} | ${f.target} | ${f.ratio === null ? '—' : `${fmt(f.ratio)}`} | ${verdict(f)} |`,
);
const missed = figures.filter((f) => f.pass === false);
const findings = existsSync('bench/FINDINGS.md') ? readFileSync('bench/FINDINGS.md', 'utf8').trim() : '';

const md = [
  '# Benchmarks',
  '',
  'Written by `make bench` (bench/run.sh, bench/report.mjs); do not edit by hand — the analysis',
  'below comes from bench/FINDINGS.md. Every figure is a ratio measured in the same run, so',
  'drift on these shared machines cancels out; the absolute values are for orientation.',
  '',
  `- **Date:** ${date}`,
  `- **Machine:** ${machine}`,
  `- **Code:** commit ${commit}${dirty}`,
  ...(skipped.length ? [`- **Steps not run in this run:** ${skipped.join(', ')} (their rows are missing; \`make bench\` runs every step)`] : []),
  '',
  '| figure | measured | target | ratio | result |',
  '|---|---|---|---:|---|',
  ...rows,
  '',
  `${figures.filter((f) => f.pass === true).length} of ${figures.filter((f) => f.pass !== null).length} targets met` +
    (missed.length ? `; missed: ${missed.map((f) => f.id).join(', ')}.` : '.'),
  '',
  regressions.length
    ? ['**Regressions of more than 10 % against the committed table:**', '', ...regressions.map((r) => `- ${r}`), ''].join('\n')
    : prevMatch
      ? 'No ratio regressed by more than 10 % against the committed table.\n'
      : 'No committed table to compare against yet.\n',
  '## How each figure is measured',
  '',
  '- **Store, instructions:** `bench/cycle` runs one loop per process under `valgrind --tool=callgrind`',
  '  (20,000 UUID keys: claim with `begin_with_fingerprint`, `save`, replay with `begin_with_fingerprint`;',
  '  the HashMap loop inserts, overwrites after a token check, and gets + clones the response). A',
  '  setup-only process is subtracted, so the figure is instructions per operation (3 per key).',
  '  Built with the workspace `bench` profile (opt-level 3, LTO) into `target/bench`.',
  '- **Store, wasm32 vs native:** the same crate as a plain wasm32 module (no wasm-bindgen glue),',
  '  `wasm-opt -O3`, timed in node 20 with `performance.now()` around each loop; the native binary',
  '  times the same loops with `Instant`. Five alternating native/wasm runs of five rounds each, best',
  '  round counts. Ratio = native ns/op ÷ wasm ns/op (throughput).',
  '- **Simulator:** `idem-lab bench --checkouts 1000000 --json` (crates/sim: lesson preset faults,',
  '  same-key strategy, worlds of 100,000 checkouts; then the same store operations replayed alone).',
  '- **Bundles:** gzip -9 and brotli q11 (node zlib) of the demo\'s `*.wasm + *.js` (`trunk build',
  '  --release`, as `make build`, into `target/bench/dist`) and of `target/sdk-pkg/*.wasm + *.js`',
  '  after `make sdk`; 1 KB = 1,000 bytes.',
  '- **UI:** `tests/bench/ui.spec.ts` in Debian\'s Chromium (headless, e2e launch flags). First',
  '  interactive frame: `performance.now()` in the animation frame after the first usable control',
  '  (`pay` / `ready`) appears, 15 cold loads each, alternating pages. Rows: demo at the fastest speed,',
  '  same-key, 20 % response loss, a batch of 1,000 checkouts; minimal page: 1,000 keyed rows of the',
  '  same shape, one in twenty changing every 16 ms. Long tasks (PerformanceObserver `longtask`) and',
  '  requestAnimationFrame gaps from the click until 4 s after all 1,000 rows are there.',
  '- **SDK load:** `tests/bench/sdk.spec.ts` in the same Chromium: `performance.now()` at the first',
  '  line of a page\'s module script and once `submit` is callable (`import` of the glue, `init()`',
  '  fetching and instantiating the wasm, `new IdempotentClient`), beside the same measurement',
  '  around an empty module from the same server; 9 cold loads each (fresh context), alternating.',
  '- **Server:** `bench/server` (`node bench/steps/server.mjs`): the example checkout in-process on',
  '  127.0.0.1 with PayCo a stub answered in-process, 16 closed-loop keep-alive clients, 3,000',
  '  requests per phase (keyed first, replay, 409, no key), statements counted from sqlx\'s query',
  '  log. The database\'s limit runs the statements one keyed first request sent, recorded from that',
  '  log, in the same transactions: through sqlx in a loop with the same concurrency (SQLite), as a',
  '  pgbench custom script, `-M prepared -c 16 -j 2` (PostgreSQL). Each backend runs twice:',
  '  **unpinned** (everything shares both cores) and **pinned** (`taskset -c 0` on the bench',
  '  process, which holds the server, its load and pgbench; PostgreSQL started under `taskset -c',
  '  1` through `IDEM_BENCH_DB_CPUS`, so both sides of the ratio meet the database on a core of its',
  '  own; SQLite runs inside the process, so pinned there means server, load, SQLite and the',
  '  limit\'s driver loop all on CPU 0; SQLite\'s own threads on CPU 1 instead was measured and',
  '  made both sides slower: bench/FINDINGS.md). The targets apply to the pinned rows. The load',
  '  speaks HTTP/1.1 through hyper\'s bare client connection, one per client. Wait mode:',
  '  a second checkout on the same database with `wait` 5 s; 10 bursts of 50 duplicates sent 20 ms',
  '  after a first request whose PayCo call the stub holds 200 ms; answers/s from each burst\'s',
  '  start to its last answer. The profile of where the rest goes is in crates/server/README.md',
  '  ("Benchmark").',
  '',
  ...results.filter((r) => r.details).map((r) => r.details),
  findings,
  '',
  `<!-- ${MARK} ${JSON.stringify({
    // Ratios of steps that did not run stay as committed, so the next full run compares to them.
    ...(skipped.length ? Object.fromEntries(Object.entries(prev).filter(([id]) => !figures.some((f) => f.id === id))) : {}),
    ...Object.fromEntries(figures.filter((f) => f.ratio !== null).map((f) => [f.id, Number(f.ratio.toFixed(4))])),
  })} -->`,
  '',
].join('\n');
writeFileSync(OUT, md);
console.log(`[bench report] wrote ${OUT}: ${rows.length} figures, ${missed.length} targets missed`);
for (const r of regressions) console.error(`[bench report] WARNING: regression of more than 10 %: ${r}`);
