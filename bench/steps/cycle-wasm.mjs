// Times the claim -> save -> replay cycle compiled to wasm32 (bench/cycle) in node, the same
// loops and the same best-of-rounds rule as the native `idem-bench-cycle time`.
//
//   node bench/steps/cycle-wasm.mjs MODULE.wasm KEYS ROUNDS   -> {"map": ns/op, "store": ...}
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const [file, keysArg, roundsArg] = process.argv.slice(2);
const keys = Number(keysArg);
const rounds = Number(roundsArg);
if (!file || !(keys > 0) || !(rounds > 0)) {
  console.error('usage: node bench/steps/cycle-wasm.mjs MODULE.wasm KEYS ROUNDS');
  process.exit(2);
}
const { instance } = await WebAssembly.instantiate(readFileSync(file), {});
const { fixture_new, fixture_run, fixture_free } = instance.exports;
// Codes are indexes into Variant::ALL (bench/cycle/src/lib.rs); 0 is the setup-only baseline.
const VARIANTS = ['map', 'store', 'store-noevents', 'store-hashed'];
const fixture = fixture_new(keys);
const out = {};
VARIANTS.forEach((name, i) => {
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const start = performance.now();
    const replays = fixture_run(fixture, i + 1);
    best = Math.min(best, performance.now() - start);
    if (replays !== keys) throw new Error(`${name}: ${replays} replays for ${keys} keys`);
  }
  out[name] = Number(((best * 1e6) / (keys * 3)).toFixed(3));
});
fixture_free(fixture);
console.log(JSON.stringify(out));
