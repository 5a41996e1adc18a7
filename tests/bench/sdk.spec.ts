// How long a checkout page waits for the SDK: from the module script's first line to `submit`
// being callable (tests/bench/sdk-pages/sdk.html: import the glue, `init()` fetches and
// instantiates the wasm, `new IdempotentClient`), beside the same measurement around an empty
// module from the same server (empty.html). Cold loads, alternating pages, each in a fresh
// context (no HTTP cache, no compiled-wasm cache, no localStorage), as the UI figures' first
// interactive frame. Writes target/bench/results/sdk-raw.json; bench/steps/sdk.mjs makes the row.
import { mkdirSync, writeFileSync } from 'node:fs';
import { test } from '@playwright/test';
import { SDK_PORT } from './sdk.config';

const LOADS = Number(process.env.IDEM_BENCH_SDK_LOADS ?? 9); // samples per page; the median counts

declare global {
  interface Window {
    __sdk?: { start: number; ready: number };
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : 0;
}

test('the SDK ready to submit vs an empty module, cold loads alternately', async ({ browser }) => {
  const pages = { sdk: 'sdk.html', empty: 'empty.html' } as const;
  const samples: Record<keyof typeof pages, number[]> = { sdk: [], empty: [] };
  for (let i = 0; i < LOADS; i++) {
    for (const name of Object.keys(pages) as (keyof typeof pages)[]) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(`http://127.0.0.1:${SDK_PORT}/${pages[name]}`);
      await page.waitForFunction(() => window.__sdk !== undefined, null, { timeout: 60_000 });
      if (errors.length) throw new Error(`${pages[name]}: ${errors.join('; ')}`);
      const { start, ready } = await page.evaluate(() => window.__sdk!);
      samples[name].push(ready - start);
      await context.close();
    }
  }
  const results = Object.fromEntries(
    Object.entries(samples).map(([name, xs]) => [name, { medianMs: median(xs), samples: xs }]),
  );
  for (const [name, r] of Object.entries(results)) {
    console.log(`${name}: median ${r.medianMs.toFixed(1)} ms of [${r.samples.map((s) => s.toFixed(1))}]`);
  }
  mkdirSync('target/bench/results', { recursive: true });
  writeFileSync('target/bench/results/sdk-raw.json', JSON.stringify(results, null, 2) + '\n');
});
