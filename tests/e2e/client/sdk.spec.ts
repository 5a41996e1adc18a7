// The idem-client JS package in real Chromium against a real idem-server and PayCo (a fresh
// SQLite database per test, demo faults on: see real-server.ts): every failure here is one
// the server produces on request, and "one charge" is read from PayCo's own ledger.
//
// page.route appears once, for the only failures no server can produce (a refused
// connection, a name that does not resolve: there is no server to ask), and only for the
// first attempt; the retries go to the real server.
import type { Page, Request } from '@playwright/test';
import { countKinds, expect, submit, test } from './real-server';

const NAME = 'checkout:cart-42';
const PAYLOAD = { cart: 'cart-42', amount: 1299, card: 'tok_visa' };
const CANONICAL = '{"amount":1299,"card":"tok_visa","cart":"cart-42"}';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** Quick, unjittered retries, so each test stays short. */
const FAST = { initialBackoffMs: 200, maxBackoffMs: 1_000, jitter: false, attemptTimeoutMs: 5_000 };

type Sent = { key: string | undefined; body: string | null; at: number };

/** Records every checkout POST the page sends (what Chromium hands to the network). */
function watchCheckouts(page: Page): Sent[] {
  const sent: Sent[] = [];
  page.on('request', (request: Request) => {
    if (request.method() === 'POST' && request.url().endsWith('/api/checkout')) {
      sent.push({ key: request.headers()['idempotency-key'], body: request.postData(), at: Date.now() });
    }
  });
  return sent;
}

function expectOneKeySameBytes(sent: Sent[], key: string) {
  expect(key).toMatch(UUID);
  expect(sent.length).toBeGreaterThan(0);
  for (const s of sent) expect(s).toMatchObject({ key, body: CANONICAL });
}

test('a lost response after the commit: the retry is answered with the replay, one charge', async ({ page, idem }) => {
  await idem.open(page, { policy: FAST });
  const sent = watchCheckouts(page);
  const answers: number[] = [];
  page.on('response', (r) => r.request().method() === 'POST' && answers.push(r.status()));
  await idem.arm([{ fault: 'drop-response' }]);
  const outcome = await submit(page, NAME, PAYLOAD);
  // The browser saw no answer at all to the dropped attempt (no 5xx from anything in between).
  expect(answers).toEqual([201]);
  expect(outcome).toMatchObject({ kind: 'replayed', status: 201, body: { status: 'paid', amount: 1299 } });
  expectOneKeySameBytes(sent, outcome.key);
  // The retry is the SDK's (attempts 2), or Chromium's own: it resends a request whose reused
  // keep-alive connection closed unanswered, POST included (attempts 1). Same key either way.
  console.log(`lost response: the SDK sent ${outcome.attempts} attempt(s)`);
  expect([1, 2]).toContain(outcome.attempts);
  const events = countKinds(await idem.events(), outcome.key);
  expect(events).toMatchObject({ claimed: 1, saved: 1, replayed: 1 });
  expect(await idem.chargesPerOrder()).toEqual({ [outcome.body.order]: 1 });
  expect(await page.evaluate(() => (window as any).sdk.pending())).toEqual([]);
});

test('a reply slower than the attempt timeout is aborted and retried: the replay, one charge', async ({ page, idem }) => {
  await idem.open(page, { policy: { ...FAST, attemptTimeoutMs: 1_000 } });
  const sent = watchCheckouts(page);
  await idem.arm([{ fault: 'hold-response', hold_ms: 4_000 }]);
  const outcome = await submit(page, NAME, PAYLOAD);
  expect(outcome).toMatchObject({ kind: 'replayed', status: 201, attempts: 2 });
  expect(sent).toHaveLength(2);
  expectOneKeySameBytes(sent, outcome.key);
  expect(await idem.chargesPerOrder()).toEqual({ [outcome.body.order]: 1 });
});

test('a reload between attempts resumes the same key: pending() lists it, resume() finishes it', async ({ page, idem }) => {
  // The first attempt gets 503; the long backoff leaves time to reload before the second.
  await idem.open(page, { policy: { ...FAST, initialBackoffMs: 10_000, maxBackoffMs: 10_000 } });
  const sent = watchCheckouts(page);
  await idem.arm([{ fault: 'unavailable' }]);
  const refused = page.waitForResponse((r) => r.request().method() === 'POST' && r.status() === 503);
  void submit(page, NAME, PAYLOAD).catch(() => {}); // the page (and this promise) goes with the reload
  await refused;
  const key = sent[0].key!;
  const stored = await page.evaluate((name) => localStorage.getItem(`idem:${name}`), NAME);
  expect(JSON.parse(stored!)).toMatchObject({ key, body: CANONICAL, attempts: 1, version: 1 });

  await page.reload();
  await idem.open(page, { policy: FAST });
  const pending = await page.evaluate(() => (window as any).sdk.pending());
  expect(pending).toEqual([
    expect.objectContaining({ name: NAME, key, attempts: 1, status: 'pending', payload: PAYLOAD }),
  ]);
  const outcome = await page.evaluate((name) => (window as any).sdk.resume(name), NAME);
  expect(outcome).toMatchObject({ kind: 'succeeded', status: 201, attempts: 2, key });
  expectOneKeySameBytes(sent, key);
  expect(await idem.chargesPerOrder()).toEqual({ [outcome.body.order]: 1 });
  expect(await page.evaluate((name) => (window as any).sdk.resume(name), NAME)).toBeNull();
});

test('a slow worker: 409 with Retry-After, honoured, then the replay, one charge', async ({ page, idem }) => {
  // The worker holds its claim 2.5 s after PayCo's charge; the first attempt times out at 1 s,
  // the retry finds the claim in flight (409, Retry-After: the lease's seconds left).
  await idem.open(page, { policy: { ...FAST, attemptTimeoutMs: 1_000 } });
  const sent = watchCheckouts(page);
  const waits: Array<{ at: number; seconds: number }> = [];
  page.on('response', (r) => {
    if (r.request().method() === 'POST' && r.status() === 409) {
      waits.push({ at: Date.now(), seconds: Number(r.headers()['retry-after']) });
    }
  });
  await idem.arm([{ fault: 'slow-worker', hold_ms: 2_500 }]);
  const outcome = await submit(page, NAME, PAYLOAD);
  expect(outcome).toMatchObject({ kind: 'replayed', status: 201 });
  expectOneKeySameBytes(sent, outcome.key);
  expect(waits.length).toBeGreaterThanOrEqual(1);
  // Each 409's Retry-After was read (cross-origin: only because it is exposed) and waited for:
  // the next attempt left no sooner. Unread, the 200 ms backoff would have sent it at once.
  for (const wait of waits) {
    expect(wait.seconds).toBeGreaterThanOrEqual(1);
    const next = sent.find((s) => s.at > wait.at);
    expect(next, 'an attempt after the 409').toBeDefined();
    expect(next!.at - wait.at).toBeGreaterThanOrEqual(wait.seconds * 1000 - 100);
  }
  const events = countKinds(await idem.events(), outcome.key);
  expect(events.claimed).toBe(1);
  expect(events.rejected).toBeGreaterThanOrEqual(1);
  expect(await idem.chargesPerOrder()).toEqual({ [outcome.body.order]: 1 });
});

test('another payload under a reused key: 422, rejected, never retried', async ({ page, idem }) => {
  await idem.open(page, { policy: FAST });
  const first = await submit(page, NAME, PAYLOAD);
  expect(first).toMatchObject({ kind: 'succeeded', status: 201 });
  // A record that reuses that key for another cart (a bug in the page, or a hand-edited
  // record): the SDK sends what the record holds, and the server refuses it.
  const other = '{"amount":5,"card":"tok_visa","cart":"cart-7"}';
  await page.evaluate(
    async ([key, body]) => {
      const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(body));
      const fingerprint = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
      const record = { version: 1, name: 'checkout:reused', key, method: 'POST', body, fingerprint, attempts: 0, createdAt: Date.now(), state: { status: 'pending' } };
      localStorage.setItem('idem:checkout:reused', JSON.stringify(record));
    },
    [first.key, other] as const,
  );
  const sent = watchCheckouts(page);
  const refused = await page.evaluate(() => (window as any).sdk.resume('checkout:reused'));
  expect(refused).toMatchObject({ kind: 'rejected', status: 422, attempts: 1, key: first.key, problem: { status: 422 } });
  await page.waitForTimeout(1_500);
  expect(sent).toHaveLength(1);
  expect(countKinds(await idem.events(), first.key)).toEqual({ claimed: 1, saved: 1, rejected: 1 });
  expect(await idem.chargesPerOrder()).toEqual({ [first.body.order]: 1 });
});

test('a worker that crashed after the charge: its claim goes stale, the retry takes over, one charge', async ({ page, idem }) => {
  await idem.open(page, { policy: FAST });
  const sent = watchCheckouts(page);
  await idem.arm([{ fault: 'crash-after-charge' }]);
  const outcome = await submit(page, NAME, PAYLOAD);
  // The worker that took the stale claim over resumed the order and got PayCo's saved charge.
  expect(outcome).toMatchObject({ kind: 'succeeded', status: 201, body: { status: 'paid' } });
  expectOneKeySameBytes(sent, outcome.key);
  const events = countKinds(await idem.events(), outcome.key);
  expect(events).toMatchObject({ claimed: 1, taken_over: 1, saved: 1 });
  expect(await idem.chargesPerOrder()).toEqual({ [outcome.body.order]: 1 });
  expect((await idem.orders()).map((o) => o.status)).toEqual(['paid']);
});

test('a different payload while pending is refused, not sent under a new key', async ({ page, idem }) => {
  await idem.open(page, { policy: { ...FAST, initialBackoffMs: 10_000, maxBackoffMs: 10_000 } });
  const sent = watchCheckouts(page);
  await idem.arm([{ fault: 'unavailable' }]);
  const refused = page.waitForResponse((r) => r.request().method() === 'POST' && r.status() === 503);
  void submit(page, NAME, PAYLOAD).catch(() => {});
  await refused;
  await page.reload();
  await idem.open(page, { policy: FAST });
  const other = await submit(page, NAME, { ...PAYLOAD, amount: 1 });
  expect(other).toMatchObject({ error: 'pendingWithDifferentPayload' });
  expect(sent).toHaveLength(1);
  expect(await idem.orders()).toEqual([]);
});

test('an attempt timeout past setTimeout\'s limit does not abort the attempt at once', async ({ page, idem }) => {
  await page.addInitScript(() => {
    const setTimeout = window.setTimeout;
    (window as any).timers = 0;
    (window as any).setTimeout = function (this: unknown, ...args: unknown[]) {
      (window as any).timers++;
      return setTimeout.apply(this, args as any);
    };
  });
  await idem.open(page, { policy: { attemptTimeoutMs: 3_000_000_000 } });
  await idem.arm([{ fault: 'hold-response', hold_ms: 1_000 }]);
  const before = await page.evaluate(() => (window as any).timers);
  const outcome = await submit(page, NAME, PAYLOAD);
  // A deadline that overflowed setTimeout would abort at once: a timeout, a retry, a replay.
  expect(outcome).toMatchObject({ kind: 'succeeded', attempts: 1 });
  expect((await page.evaluate(() => (window as any).timers)) - before).toBeLessThanOrEqual(3);
});

// page.route only here: a refused connection and a name that does not resolve have no server to
// produce them. The first attempt fails in the browser; the retries reach the real server.
for (const [failure, error] of [
  ['a refused connection', 'connectionrefused'],
  ['a name that does not resolve', 'namenotresolved'],
] as const) {
  test(`${failure} is retried with the same key and bytes against the server`, async ({ page, idem }) => {
    await idem.open(page, { policy: FAST });
    const sent = watchCheckouts(page);
    let failed = 0;
    await page.route('**/api/checkout', async (route) => {
      if (route.request().method() === 'POST' && failed++ === 0) return route.abort(error);
      return route.continue();
    });
    const outcome = await submit(page, NAME, PAYLOAD);
    expect(outcome).toMatchObject({ kind: 'succeeded', status: 201, attempts: 2 });
    expect(sent).toHaveLength(2);
    expectOneKeySameBytes(sent, outcome.key);
    expect(await idem.chargesPerOrder()).toEqual({ [outcome.body.order]: 1 });
  });
}
