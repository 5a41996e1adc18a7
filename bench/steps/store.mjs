// Store figures: callgrind instructions per operation of the claim -> save -> replay cycle vs a
// raw HashMap (target <= 2x), and the same cycle compiled to wasm32 in node vs native
// (throughput >= 0.67x), both from bench/cycle, built with the `bench` profile (opt-level 3,
// LTO) into target/bench so the shared target/release is left alone.
import { readFileSync } from 'node:fs';
import { figure, fmt, run, save, say } from './lib.mjs';

const STEP = 'store';
const CG_KEYS = 20_000;
const TIME_KEYS = 10_000;
const ROUNDS = 5;
const PAIRS = 5;
const env = { ...process.env, CARGO_TARGET_DIR: 'target/bench' };
const NATIVE = 'target/bench/release/idem-bench-cycle';
const WASM_RAW = 'target/bench/wasm32-unknown-unknown/release/idem_bench_cycle.wasm';
const WASM = 'target/bench/idem_bench_cycle.opt.wasm';

say(STEP, 'building bench/cycle natively and for wasm32 (bench profile)');
run('cargo', ['build', '--locked', '--profile', 'bench', '-p', 'idem-bench-cycle', '--bin', 'idem-bench-cycle'], { env, stdio: 'inherit' });
run('cargo', ['build', '--locked', '--profile', 'bench', '-p', 'idem-bench-cycle', '--lib', '--target', 'wasm32-unknown-unknown'], { env, stdio: 'inherit' });
// The demo's pipeline runs wasm-opt too (for size); here for speed. Features are those rustc
// enables by default on wasm32-unknown-unknown.
run('wasm-opt', ['-O3', '--enable-bulk-memory', '--enable-nontrapping-float-to-int', '--enable-sign-ext', '--enable-mutable-globals', '--enable-multivalue', '--enable-reference-types', WASM_RAW, '-o', WASM]);

// --- callgrind: one loop per process, minus the setup-only process.
const instr = {};
for (const v of ['setup', 'map', 'store', 'store-noevents', 'store-hashed']) {
  const out = `target/bench/callgrind.${v}.out`;
  run('valgrind', ['--tool=callgrind', '--quiet', `--callgrind-out-file=${out}`, NATIVE, 'once', v, String(CG_KEYS)]);
  const m = readFileSync(out, 'utf8').match(/^summary: (\d+)$/m);
  if (!m) throw new Error(`no summary line in ${out}`);
  instr[v] = Number(m[1]);
  say(STEP, `callgrind ${v}: ${instr[v]} Ir`);
}
const perOp = (v) => (instr[v] - instr.setup) / (CG_KEYS * 3);
const ir = Object.fromEntries(['map', 'store', 'store-noevents', 'store-hashed'].map((v) => [v, perOp(v)]));

// --- wall time: native and wasm alternately, best of all rounds each.
const best = { native: {}, wasm: {}, wasmRaw: {} };
const keep = (into, json) => {
  for (const [k, v] of Object.entries(JSON.parse(json))) into[k] = Math.min(into[k] ?? Infinity, v);
};
for (let i = 0; i < PAIRS; i++) {
  keep(best.native, run(NATIVE, ['time', String(TIME_KEYS), String(ROUNDS)]));
  keep(best.wasm, run('node', ['bench/steps/cycle-wasm.mjs', WASM, String(TIME_KEYS), String(ROUNDS)]));
  keep(best.wasmRaw, run('node', ['bench/steps/cycle-wasm.mjs', WASM_RAW, String(TIME_KEYS), String(ROUNDS)]));
}
say(STEP, `ns/op native ${JSON.stringify(best.native)}`);
say(STEP, `ns/op wasm (wasm-opt -O3) ${JSON.stringify(best.wasm)}`);
say(STEP, `ns/op wasm (rustc only) ${JSON.stringify(best.wasmRaw)}`);
const wasmStore = Math.min(best.wasm.store, best.wasmRaw.store);
const wasmMap = Math.min(best.wasm.map, best.wasmRaw.map);

const figures = [
  figure({
    id: 'store.instr',
    name: 'Store cycle, instructions/op vs raw HashMap (callgrind, default config)',
    value: `${fmt(ir.store)} vs ${fmt(ir.map)} Ir/op`,
    target: '≤ 2×',
    ratio: ir.store / ir.map,
    limit: 2,
  }),
  figure({
    id: 'store.instr.noevents',
    name: 'Store cycle with the event log off, vs raw HashMap (callgrind)',
    value: `${fmt(ir['store-noevents'])} Ir/op`,
    ratio: ir['store-noevents'] / ir.map,
  }),
  figure({
    id: 'store.instr.hashed',
    name: 'Store cycle with `begin` (fingerprint per request), vs raw HashMap (callgrind)',
    value: `${fmt(ir['store-hashed'])} Ir/op`,
    ratio: ir['store-hashed'] / ir.map,
  }),
  figure({
    id: 'store.wasm',
    name: 'Store cycle on wasm32 (node 20) vs native, throughput',
    value: `${fmt(wasmStore)} vs ${fmt(best.native.store)} ns/op`,
    target: '≥ 0.67×',
    ratio: best.native.store / wasmStore,
    limit: 0.67,
    better: 'higher',
  }),
  figure({
    id: 'map.wasm',
    name: 'Raw HashMap loop on wasm32 vs native, throughput (reference)',
    value: `${fmt(wasmMap)} vs ${fmt(best.native.map)} ns/op`,
    ratio: best.native.map / wasmMap,
    better: 'higher',
  }),
];
save(STEP, { figures, raw: { callgrindIr: instr, perOp: ir, nsPerOp: best, keys: { callgrind: CG_KEYS, time: TIME_KEYS } } });
