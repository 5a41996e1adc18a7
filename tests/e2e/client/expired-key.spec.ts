// The expired-key guard, end to end: the SDK (real Chromium, real fetch, real localStorage) sends
// Repeatability-First-Sent on every attempt (cross origin too: idem-server's CORS allows it); a
// retry that comes after the server pruned the key (retention 1.5 s here) is refused with 412
// instead of charged again, the SDK reports an unknown outcome with the reason, keeps the same
// key, and reconcile says the key expired.
import { countKinds, expect, submit, test } from './real-server';
import type { Page } from '@playwright/test';

test.use({
  serverArgs: ['--retention-ms', '1500', '--prune-interval-ms', '200', '--first-sent-tolerance-ms', '0'],
});

const NAME = 'checkout:cart-late';
const PAYLOAD = { cart: 'cart-late', amount: 3100, card: 'tok_visa' };
/** The retry comes 3 s after the first attempt timed out (1 s): past the server's retention. */
const LATE_RETRY = { initialBackoffMs: 3_000, maxBackoffMs: 3_000, attemptTimeoutMs: 1_000, jitter: false, retryWindowMs: 20_000 };

/** The `Repeatability-First-Sent` of every checkout POST the page sends, in order (`(none)` when absent). */
function firstSentHeaders(page: Page): string[] {
  const headers: string[] = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && request.url().endsWith('/api/checkout')) {
      headers.push(request.headers()['repeatability-first-sent'] ?? '(none)');
    }
  });
  return headers;
}

test('a retry past the server’s retention is refused, not charged again, and reported unknown with the reason', async ({ page, idem }) => {
  await idem.open(page, { policy: LATE_RETRY });
  const headers = firstSentHeaders(page);
  // The first attempt commits (one charge) and its answer is held past the attempt's timeout
  // (a cut connection would not do: Chromium resends a POST on a connection closed unanswered).
  await idem.arm([{ fault: 'hold-response', hold_ms: 8_000 }]);
  const outcome = await submit(page, NAME, PAYLOAD);
  expect(outcome).toMatchObject({
    kind: 'unknown',
    attempts: 2,
    lastError: 'key expired: reconcile before paying again',
  });
  // Both attempts said the same first-sent time, an HTTP-date.
  expect(headers).toHaveLength(2);
  expect(headers[0]).toMatch(/^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
  expect(headers[1]).toBe(headers[0]);
  expect(Math.abs(Date.parse(headers[0]) - Date.now())).toBeLessThan(30_000);
  // One charge, and the late retry was answered without a claim.
  const charges = await idem.chargesPerOrder();
  expect(Object.values(charges)).toEqual([1]);
  const events = await idem.events();
  expect(countKinds(events, outcome.key)).toMatchObject({ claimed: 1, saved: 1, rejected: 1 });
  // The record stays, under the same key; submitting again does not mint a new one.
  expect(await page.evaluate(() => (window as any).sdk.pending())).toEqual([
    expect.objectContaining({ name: NAME, key: outcome.key, status: 'unknown' }),
  ]);
  // Reconcile: the server no longer knows the key, and the SDK says why.
  const reconciled = await page.evaluate(
    (name) => (window as any).attempt((window as any).sdk.reconcile(name)),
    NAME,
  );
  expect(reconciled).toMatchObject({ reconciled: 'keyExpired', kind: 'unknown', key: outcome.key });
  expect(Object.values(await idem.chargesPerOrder())).toEqual([1]);
});

test('sendFirstSent: false leaves the header out, and the guard with it: the late retry runs again', async ({ page, idem }) => {
  await idem.open(page, { policy: LATE_RETRY, sendFirstSent: false });
  const headers = firstSentHeaders(page);
  await idem.arm([{ fault: 'hold-response', hold_ms: 8_000 }]);
  const outcome = await submit(page, NAME, PAYLOAD);
  expect(headers).toEqual(['(none)', '(none)']);
  // What the guard is for: without the header the pruned key looks new, and the work runs twice.
  expect(outcome).toMatchObject({ kind: 'succeeded', attempts: 2 });
  expect(Object.values(await idem.chargesPerOrder())).toEqual([1, 1]);
});
