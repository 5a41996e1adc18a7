// Waits the SDK takes from the server: a `Retry-After: 0` (or tiny) never makes a tight loop,
// an HTTP-date is honoured, and a wait past setTimeout's 2^31-1 ms limit is not fired at once.
// Against the scripted server (idempotency-server.mjs), because idem-server never answers any
// of these: its Retry-After is the lease's whole seconds left, at least 1 and at most lock_ms
// (so never 0, never a date, never 24.8 days). Everything a real server can produce is in
// sdk.spec.ts, one-key.spec.ts and reconcile.spec.ts, against idem-server.
import { test, expect, type Page } from '@playwright/test';
import { openClient, resetServer, serverLog, submit } from './harness';

const PAYLOAD = { currency: 'EUR', amount: 1299 };

test.beforeEach(async ({ page, request }) => {
  await resetServer(request);
  await page.goto('/client/');
  await page.evaluate(() => localStorage.clear());
});

/** Gaps between consecutive attempts (ms), and attempts per second over the run. */
function rate(times: number[]) {
  const gaps = times.slice(1).map((t, i) => t - times[i]);
  const perSecond = (times.length - 1) / ((times.at(-1)! - times[0]) / 1000);
  return { gaps, perSecond };
}

test('409 with Retry-After: 0 on every attempt: the default policy backs off, never a tight loop', async ({ page, request }) => {
  // The default policy (0.5 s floor, doubling to 5 s, jitter) with a 12 s window, so it ends.
  await openClient(page, '/api/always-409?retryAfter=0', { policy: { retryWindowMs: 12_000 } });
  const outcome = await submit(page, 'checkout:zero', PAYLOAD);
  expect(outcome).toMatchObject({ kind: 'unknown', lastError: 'status 409' });
  const times = (await serverLog(request, '/api/always-409')).requests.map((r) => r.at);
  const { gaps, perSecond } = rate(times);
  console.log(`Retry-After: 0, default policy: ${times.length} attempts in ${times.at(-1)! - times[0]} ms, ` +
    `${perSecond.toFixed(2)} attempts/s, gaps ${gaps.join(', ')} ms`);
  // 0.5 s, then [0.5, 1], [1, 2], [2, 4], [2.5, 5] s...: at most about 6 attempts in 12 s.
  expect(outcome.attempts).toBe(times.length);
  expect(times.length).toBeGreaterThanOrEqual(4);
  expect(times.length).toBeLessThanOrEqual(7);
  expect(Math.min(...gaps)).toBeGreaterThanOrEqual(490);
  expect(perSecond).toBeLessThanOrEqual(2);
});

test('409 with Retry-After: 0 and a flat 0.5 s backoff: exactly the floor, 2 attempts per second', async ({ page, request }) => {
  await openClient(page, '/api/always-409?retryAfter=0', {
    policy: { maxBackoffMs: 500, jitter: false, retryWindowMs: 5_000 },
  });
  const outcome = await submit(page, 'checkout:floor', PAYLOAD);
  expect(outcome).toMatchObject({ kind: 'unknown' });
  const times = (await serverLog(request, '/api/always-409')).requests.map((r) => r.at);
  const { gaps, perSecond } = rate(times);
  console.log(`Retry-After: 0, floor only: ${times.length} attempts, ${perSecond.toFixed(2)} attempts/s`);
  expect(times.length).toBeGreaterThanOrEqual(8);
  expect(times.length).toBeLessThanOrEqual(10);
  for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(490);
  expect(perSecond).toBeLessThanOrEqual(2.05);
});

test('Retry-After as an HTTP-date is waited for', async ({ page, request }) => {
  await openClient(page, '/api/retry-at?seconds=3');
  const outcome = await submit(page, 'checkout:dated', PAYLOAD);
  expect(outcome).toMatchObject({ kind: 'succeeded', attempts: 2 });
  const [first, second] = (await serverLog(request, '/api/retry-at')).requests.map((r) => r.at);
  // The date has whole seconds: 3 s ahead, truncated, is 2 to 3 s; the 0.5 s backoff would be
  // what an unread date gives.
  expect(second - first).toBeGreaterThanOrEqual(1_900);
  expect(second - first).toBeLessThan(3_500);
});

/** Counts the page's setTimeout calls (the SDK's timers go through it) in `window.timers`. */
async function countTimers(page: Page) {
  await page.addInitScript(() => {
    const setTimeout = window.setTimeout;
    (window as any).timers = 0;
    (window as any).setTimeout = function (this: unknown, ...args: unknown[]) {
      (window as any).timers++;
      return setTimeout.apply(this, args as any);
    };
  });
}

test('a Retry-After past setTimeout\'s limit is waited for, not fired at once', async ({ page, request }) => {
  await countTimers(page);
  // 2,147,484 s = 2^31 ms + 352 ms: one more than a timer can hold. A 100-day window admits it.
  await openClient(page, '/api/always-409?retryAfter=2147484', { policy: { retryWindowMs: 8_640_000_000 } });
  // Started, not awaited: it waits for 24.8 days.
  await page.evaluate(() => {
    (window as any).sdk.submit('checkout:far', { amount: 1 }).catch(() => {});
  });
  await expect.poll(async () => (await serverLog(request, '/api/always-409')).requests.length).toBe(1);
  const armed = await page.evaluate(() => (window as any).timers);
  await page.waitForTimeout(2_000);
  expect((await serverLog(request, '/api/always-409')).requests).toHaveLength(1);
  // One clamped timer is armed for the wait; a delay that overflowed would fire at once and be
  // re-armed again and again (hundreds of timers a second).
  const fired = (await page.evaluate(() => (window as any).timers)) - armed;
  expect(fired).toBeLessThanOrEqual(2);
});
