// Helpers shared by the bench steps: run a command loudly, write a step's JSON result.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';

export const RESULTS = 'target/bench/results';

/** Run a command, inheriting stderr; its stdout as text. Throws (non-zero exit) on failure. */
export function run(cmd, args, opts = {}) {
  return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 28, ...opts });
}

/** Log a line the way every step does. */
export function say(step, text) {
  console.log(`[bench ${step}] ${text}`);
}

/**
 * A table row. `ratio` is what the target applies to; `better` says which way is good
 * ('lower' or 'higher'); `limit` is the target on the ratio. `pass` is null for rows without
 * a target (context only). `also`: a further condition the target states (false fails it).
 */
export function figure({ id, name, value, target, ratio, limit, better = 'lower', note = '', also = true }) {
  const pass =
    limit === undefined || limit === null || ratio === null || ratio === undefined
      ? null
      : (better === 'lower' ? ratio <= limit : ratio >= limit) && also;
  return { id, name, value, target: target ?? '—', ratio: ratio ?? null, limit: limit ?? null, better, pass, note };
}

/** Write target/bench/results/STEP.json. */
export function save(step, result) {
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(`${RESULTS}/${step}.json`, JSON.stringify(result, null, 2) + '\n');
  for (const f of result.figures) {
    const mark = f.pass === null ? 'info' : f.pass ? 'PASS' : 'MISS';
    say(step, `${mark}  ${f.name}: ${f.value}${f.ratio !== null ? `  (ratio ${fmt(f.ratio)}, target ${f.target})` : ''}`);
  }
}

/** A number with three significant digits, no exponent. */
export function fmt(x) {
  if (x === null || x === undefined) return '—';
  const a = Math.abs(x);
  const digits = a >= 100 ? 0 : a >= 10 ? 1 : a >= 1 ? 2 : 3;
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}
