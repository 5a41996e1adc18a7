// UI figures: the demo vs the minimal Yew page (bench/minimal-yew), measured by
// tests/bench/ui.spec.ts in Debian's Chromium in one Playwright run. Ratios are demo / minimal.
import { readFileSync } from 'node:fs';
import { figure, fmt, run, save, say } from './lib.mjs';

const STEP = 'ui';
say(STEP, 'npx playwright test --config tests/bench/playwright.config.ts');
run('npx', ['playwright', 'test', '--config', 'tests/bench/playwright.config.ts'], { stdio: 'inherit' });
const r = JSON.parse(readFileSync('target/bench/results/ui-raw.json', 'utf8'));
for (const k of ['demo.firstFrame', 'minimal.firstFrame', 'demo.rows', 'minimal.rows']) {
  if (!r[k]) throw new Error(`ui-raw.json: missing ${k}`);
}
const ms = (x) => `${fmt(x)} ms`;
// The longtask API reports only tasks over 50 ms: none reported means "under 50 ms", and the
// ratio counts such a page as 50 ms.
const task = (x) => (x > 0 ? ms(x) : 'none > 50 ms');
const floor50 = (x) => Math.max(x, 50);
const [df, mf] = [r['demo.firstFrame'].medianMs, r['minimal.firstFrame'].medianMs];
const [dr, mr] = [r['demo.rows'], r['minimal.rows']];
const figures = [
  figure({
    id: 'ui.firstFrame',
    name: 'UI: first interactive frame after load (median of 15 cold loads), demo vs minimal Yew',
    value: `${ms(df)} vs ${ms(mf)}`,
    target: '≤ 1.5× minimal',
    ratio: df / mf,
    limit: 1.5,
  }),
  figure({
    id: 'ui.longestTask',
    name: 'UI: longest main-thread task, 1,000 rows at the fastest speed, demo vs minimal Yew',
    value: `${task(dr.longestTaskMs)} vs ${task(mr.longestTaskMs)}`,
    target: '≤ 1.5× minimal',
    ratio: floor50(dr.longestTaskMs) / floor50(mr.longestTaskMs),
    limit: 1.5,
    note: `long tasks: ${dr.longTasks} vs ${mr.longTasks}; demo settled ${fmt(dr.settledMs)} ms after the click`,
  }),
  figure({
    id: 'ui.medianFrame',
    name: 'UI: median frame time, 1,000 rows at the fastest speed, demo vs minimal Yew',
    value: `${ms(dr.medianFrameMs)} vs ${ms(mr.medianFrameMs)} (p95 ${ms(dr.p95FrameMs)} vs ${ms(mr.p95FrameMs)})`,
    target: '≤ 1.25× minimal',
    ratio: dr.medianFrameMs / mr.medianFrameMs,
    limit: 1.25,
  }),
];
save(STEP, { figures, raw: r });
