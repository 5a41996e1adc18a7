// The demo vs a minimal Yew page, in one run: time to the first interactive frame after load,
// and with 1,000 rows updating at the fastest speed, the longest main-thread task
// (PerformanceObserver 'longtask') and the median frame time (requestAnimationFrame deltas).
// Writes target/bench/results/ui-raw.json; bench/steps/ui.mjs turns it into table rows.
import { mkdirSync, writeFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { DEMO_PORT, MINIMAL_PORT } from './playwright.config';

const LOADS = 15; // first-interactive-frame samples per page; the median counts
const ROWS = 1000;
const HOLD_MS = 4000; // keep measuring this long after the rows are all there

declare global {
  interface Window {
    __bench: { ready: number | null; tasks: number[]; frames: number[] };
  }
}

/** Installed before any page script: records the first frame after `selector` is usable,
 *  every long task, and every gap between animation frames. */
async function instrument(page: Page, selector: string): Promise<void> {
  await page.addInitScript((sel) => {
    const b = (window.__bench = { ready: null as number | null, tasks: [] as number[], frames: [] as number[] });
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) b.tasks.push(e.duration);
    }).observe({ type: 'longtask', buffered: true });
    let last = 0;
    const frame = (t: number) => {
      if (last) b.frames.push(t - last);
      last = t;
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
    const usable = () => {
      const el = document.querySelector(sel) as HTMLButtonElement | null;
      return el !== null && !el.disabled;
    };
    const mo = new MutationObserver(() => {
      if (b.ready !== null || !usable()) return;
      mo.disconnect();
      // The next frame is the first one that paints the control with its handlers attached.
      requestAnimationFrame(() => {
        b.ready = performance.now();
      });
    });
    mo.observe(document, { childList: true, subtree: true, attributes: true });
  }, selector);
}

async function firstFrame(page: Page, url: string, selector: string): Promise<number> {
  await instrument(page, selector);
  await page.goto(url);
  await page.waitForFunction(() => window.__bench.ready !== null, null, { timeout: 60_000 });
  return page.evaluate(() => window.__bench.ready as number);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : 0;
}

function percentile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : 0;
}

async function reset(page: Page): Promise<void> {
  await page.evaluate(() => {
    window.__bench.tasks = [];
    window.__bench.frames = [];
  });
}

async function summary(page: Page) {
  const { tasks, frames } = await page.evaluate(() => window.__bench);
  return {
    longestTaskMs: tasks.length ? Math.max(...tasks) : 0,
    longTasks: tasks.length,
    medianFrameMs: median(frames),
    p95FrameMs: percentile(frames, 0.95),
    frames: frames.length,
  };
}

const results: Record<string, unknown> = {};

test.describe.configure({ mode: 'serial' });

const PAGES = [
  ['demo', `http://127.0.0.1:${DEMO_PORT}/`, '[data-testid="pay"]'],
  ['minimal', `http://127.0.0.1:${MINIMAL_PORT}/`, '[data-testid="ready"]'],
] as const;

test('first interactive frame, demo and minimal page alternately', async ({ browser }) => {
  const samples: Record<string, number[]> = { demo: [], minimal: [] };
  for (let i = 0; i < LOADS; i++) {
    for (const [name, url, selector] of PAGES) {
      // A fresh context each time: no HTTP cache, no compiled-wasm cache, no localStorage.
      const context = await browser.newContext();
      const page = await context.newPage();
      samples[name].push(await firstFrame(page, url, selector));
      await context.close();
    }
  }
  for (const [name] of PAGES) {
    const xs = samples[name];
    results[`${name}.firstFrame`] = { medianMs: median(xs), samples: xs };
    console.log(`${name} first interactive frame: median ${median(xs).toFixed(1)} ms of [${xs.map((s) => s.toFixed(0))}]`);
  }
});

test('demo: 1,000 claim rows at the fastest speed', async ({ page }) => {
  await instrument(page, '[data-testid="pay"]');
  await page.goto(`http://127.0.0.1:${DEMO_PORT}/`);
  await expect(page.getByTestId('pay')).toBeEnabled();
  await page.getByTestId('strategy').selectOption('same-key');
  await page.getByTestId('response-loss').fill('20');
  const speeds = await page.getByTestId('speed').locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  await page.getByTestId('speed').selectOption(speeds[speeds.length - 1]);
  const count = page.getByTestId('batch-count');
  if (!(await count.isVisible())) await page.getByText('Many checkouts, and a buggy page').click();
  await count.fill(String(ROWS));
  const play = page.getByTestId('play');
  if ((await play.getAttribute('aria-pressed')) !== 'true') await play.click();
  await reset(page);
  await page.getByTestId('batch-run').click();
  const clicked = Date.now();
  await expect(page.getByTestId('claim-count')).toHaveAttribute('data-total', String(ROWS), { timeout: 60_000 });
  await expect(page.getByTestId('stat-pending')).toHaveText('0', { timeout: 60_000 });
  const settledMs = Date.now() - clicked;
  await page.waitForTimeout(HOLD_MS);
  const s = { ...(await summary(page)), settledMs };
  results['demo.rows'] = s;
  console.log(`demo, ${ROWS} rows: ${JSON.stringify(s)}`);
});

test('minimal: 1,000 rows updating every 16 ms', async ({ page }) => {
  await instrument(page, '[data-testid="ready"]');
  await page.goto(`http://127.0.0.1:${MINIMAL_PORT}/`);
  await expect(page.getByTestId('ready')).toBeEnabled();
  await reset(page);
  await page.getByTestId('start').click();
  await expect(page.getByTestId('row')).toHaveCount(ROWS, { timeout: 60_000 });
  await page.waitForTimeout(HOLD_MS);
  const s = await summary(page);
  results['minimal.rows'] = s;
  console.log(`minimal, ${ROWS} rows: ${JSON.stringify(s)}`);
});

test.afterAll(() => {
  mkdirSync('target/bench/results', { recursive: true });
  writeFileSync('target/bench/results/ui-raw.json', JSON.stringify(results, null, 2) + '\n');
});
