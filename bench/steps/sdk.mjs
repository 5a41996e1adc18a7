// SDK load figure: how long a checkout page waits for the SDK (module start to `submit`
// callable: the package's init resolved, an IdempotentClient constructed) vs an empty module
// from the same server, measured by tests/bench/sdk.spec.ts in Debian's Chromium. Needs the
// package from `make sdk` (target/sdk-pkg). An info row: no budget was set for it.
import { readFileSync } from 'node:fs';
import { figure, fmt, run, save, say } from './lib.mjs';

const STEP = 'sdk';
say(STEP, 'npx playwright test --config tests/bench/sdk.config.ts');
run('npx', ['playwright', 'test', '--config', 'tests/bench/sdk.config.ts'], { stdio: 'inherit' });
const r = JSON.parse(readFileSync('target/bench/results/sdk-raw.json', 'utf8'));
for (const k of ['sdk', 'empty']) {
  if (!r[k]) throw new Error(`sdk-raw.json: missing ${k}`);
}
const [s, e] = [r.sdk.medianMs, r.empty.medianMs];
const figures = [
  figure({
    id: 'sdk.ready',
    name: `SDK: module start to \`submit\` callable (init + \`new IdempotentClient\`, median of ${r.sdk.samples.length} cold loads), vs an empty module`,
    value: `${fmt(s)} ms vs ${fmt(e)} ms`,
    note: `the SDK's own ${fmt(s - e)} ms`,
  }),
];
save(STEP, { figures, raw: r });
