// Figures, not tests: the demo's real-server mode against a real idem-server and PayCo
// (./real.ts), printed, never asserted (speed targets belong to benchmarks; a loaded machine
// moves them). `npx playwright test --project timing tests/e2e/demo/real-measure.spec.ts`.
//
// - Pay click to the first attempt's request leaving: the checkout POST's `requestStart` as
//   Chromium reports it to Playwright (wall clock; the page's Resource Timing hides it for a
//   cross-origin request without Timing-Allow-Origin), against the click event's timestamp on
//   the same clock (`performance.timeOrigin + event.timeStamp`); beside it, when the page called
//   `fetch()` (Resource Timing's `startTime`, which cross-origin entries keep).
// - Event-stream lag: from the server's event (`at`, its wall clock) to the feed line being in
//   the DOM (`Date.now()` in a MutationObserver); server and browser share this machine's clock.
import { expect, test } from './real';

const ROUNDS = 20;

function summary(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1);
  return `median ${at(0.5)} ms, p90 ${at(0.9)} ms, min ${sorted[0].toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms (n=${ms.length})`;
}

test('real mode: Pay to the first request leaving, and the event stream\'s lag', async ({ page, real }) => {
  await page.addInitScript(() => {
    const w = window as any;
    w.lags = [];
    document.addEventListener('click', (e) => (w.clickedAt = performance.timeOrigin + e.timeStamp), true);
    new MutationObserver((records) => {
      const now = Date.now();
      const t0 = Number(document.querySelector('[data-testid=real-tenant]')?.getAttribute('data-t0'));
      for (const r of records) {
        for (const node of r.addedNodes) {
          const el = node as HTMLElement;
          if (el.getAttribute?.('data-testid') !== 'event' || !t0) continue;
          // The line's time, m:ss.mmm since the session's start.
          const [m, s] = (el.querySelector('.ev-at')?.textContent ?? '').split(':');
          w.lags.push(now - (t0 + Number(m) * 60_000 + Number(s) * 1000));
        }
      }
    }).observe(document, { childList: true, subtree: true });
  });
  // When each checkout POST's headers went out, wall clock.
  const sent: number[] = [];
  page.on('requestfinished', (r) => {
    if (r.method() === 'POST' && r.url().endsWith('/api/checkout')) sent.push(r.timing().startTime + r.timing().requestStart);
  });
  await real.enter(page);
  const leaving: number[] = [];
  const called: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    await page.getByTestId('pay').click();
    await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'paid', { timeout: 15_000 });
    const clicked: number = await page.evaluate(() => (window as any).clickedAt);
    await expect.poll(() => sent.filter((t) => t >= clicked).length).toBeGreaterThan(0);
    leaving.push(Math.min(...sent.filter((t) => t >= clicked)) - clicked);
    called.push(
      await page.evaluate((clicked) => {
        const entries = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
        const first = entries.find((e) => e.name.endsWith('/api/checkout') && performance.timeOrigin + e.startTime >= clicked)!;
        return performance.timeOrigin + first.startTime - clicked;
      }, clicked),
    );
  }
  const lags: number[] = await page.evaluate(() => (window as any).lags);
  console.log(`real mode, Pay click -> fetch() called:          ${summary(called)}`);
  console.log(`real mode, Pay click -> first request leaving: ${summary(leaving)}`);
  console.log(`real mode, server event -> feed line in the DOM: ${summary(lags)}`);
  expect(leaving).toHaveLength(ROUNDS);
});
