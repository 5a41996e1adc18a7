// One key and one server execution per operation, however many times it is submitted: twice in
// one page at once, from two tabs at the same instant (with and without the Web Locks API), and
// again after it settled. Against the scripted idempotency server (see idempotency-server.mjs
// for why a scripted one), which counts executions per key.
import { test, expect } from '@playwright/test';
import { keysOf, openClient, resetServer, serverLog, submit, submitAt, withoutWebLocks } from './harness';

const PAYLOAD = { currency: 'EUR', amount: 1299 };
const CHECKOUT = '/api/checkout';

test.beforeEach(async ({ request }) => {
  await resetServer(request);
});

for (const locks of [true, false]) {
  const browser = locks ? 'with Web Locks' : 'without Web Locks';

  test(`one page, double submit (${browser}): one request, one execution, one outcome`, async ({ context, page, request }) => {
    if (!locks) await withoutWebLocks(context);
    await openClient(page, CHECKOUT);
    expect(await page.evaluate(() => (window as any).sdk.constructor.hasWebLocks())).toBe(locks);
    await page.evaluate(() => localStorage.clear());
    const [a, b, other] = await page.evaluate(
      (payload) => {
        const { sdk, attempt } = window as any;
        return Promise.all([
          sdk.submit('checkout:double', payload),
          sdk.submit('checkout:double', { ...payload }),
          // Another cart under the name while the first runs: refused, nothing sent.
          attempt(sdk.submit('checkout:double', { ...payload, amount: 1 })),
        ]);
      },
      PAYLOAD,
    );
    expect(a).toMatchObject({ kind: 'succeeded', status: 201, attempts: 1 });
    expect(b).toEqual(a);
    expect(other).toMatchObject({ error: 'pendingWithDifferentPayload' });
    const log = await serverLog(request, CHECKOUT);
    expect(log.requests).toHaveLength(1);
    expect(log.executions).toEqual({ [a.key]: 1 });
  });

  test(`two tabs submit at the same instant (${browser}): one key, one execution, the second gets the first's answer`, async ({ context, request }) => {
    if (!locks) await withoutWebLocks(context);
    const tabs = [await context.newPage(), await context.newPage()];
    for (const tab of tabs) await openClient(tab, CHECKOUT);
    await tabs[0].evaluate(() => localStorage.clear());
    // Several rounds, each a new operation started in both tabs at the same wall-clock instant
    // (their timers fire within a millisecond of each other): both read an empty journal.
    for (let round = 0; round < 4; round++) {
      const name = `checkout:two-tabs-${round}`;
      const at = Date.now() + 400;
      const outcomes = await Promise.all(tabs.map((tab) => submitAt(tab, name, PAYLOAD, at)));
      const log = await serverLog(request, CHECKOUT);
      const sent = log.requests.filter((r) => outcomes.some((o: any) => o.key === r.key));
      expect(keysOf(sent), `round ${round}: keys sent`).toHaveLength(1);
      const [key] = keysOf(sent);
      expect(log.executions[key], `round ${round}: executions`).toBe(1);
      expect(outcomes.map((o: any) => o.key)).toEqual([key, key]);
      // One ran the work, the other was answered with the saved response.
      expect(outcomes.map((o: any) => o.kind).sort()).toEqual(['replayed', 'succeeded']);
      expect((outcomes[0] as any).body).toEqual((outcomes[1] as any).body);
    }
  });
}

test('a settled operation keeps its key: a duplicate submit is replayed, another payload refused until discard', async ({ page, request }) => {
  await openClient(page, CHECKOUT);
  await page.evaluate(() => localStorage.clear());
  const first = await submit(page, 'checkout:cart-7', PAYLOAD);
  expect(first).toMatchObject({ kind: 'succeeded', attempts: 1 });

  // Stored: the key and fingerprint, not the payload, not the answer.
  const stored = await page.evaluate(() => localStorage.getItem('idem:checkout:cart-7'));
  expect(JSON.parse(stored!)).toMatchObject({ version: 2, key: first.key, state: { status: 'settled', httpStatus: 201 } });
  expect(stored).not.toContain('1299');
  expect(stored).not.toContain(first.body.order);
  expect(await page.evaluate(() => (window as any).sdk.pending())).toEqual([]);
  const settled = await page.evaluate(() => (window as any).sdk.settled());
  expect(settled).toEqual([expect.objectContaining({ name: 'checkout:cart-7', key: first.key, status: 201, attempts: 1 })]);
  expect(settled[0].expiresAt - settled[0].createdAt).toBe(24 * 60 * 60 * 1000);

  // After a reload, the same payload (other key order) goes out under the same key: replayed.
  await page.reload();
  await openClient(page, CHECKOUT);
  const again = await submit(page, 'checkout:cart-7', { amount: 1299, currency: 'EUR' });
  expect(again).toMatchObject({ kind: 'replayed', key: first.key, body: first.body, attempts: 2 });

  // Another payload under the name is refused, and nothing is sent.
  const refused = await submit(page, 'checkout:cart-7', { currency: 'EUR', amount: 5 });
  expect(refused).toMatchObject({ error: 'settledWithDifferentPayload' });
  let log = await serverLog(request, CHECKOUT);
  expect(log.requests).toHaveLength(2);
  expect(keysOf(log.requests)).toEqual([first.key]);
  expect(log.executions).toEqual({ [first.key]: 1 });

  // Discarded (pay again with another card): a new operation, a new key, a new execution.
  expect(await page.evaluate(() => (window as any).sdk.discard('checkout:cart-7'))).toBe(true);
  const other = await submit(page, 'checkout:cart-7', { currency: 'EUR', amount: 5 });
  expect(other).toMatchObject({ kind: 'succeeded' });
  expect(other.key).not.toBe(first.key);
  log = await serverLog(request, CHECKOUT);
  expect(log.executions).toEqual({ [first.key]: 1, [other.key]: 1 });
});

test('another tab sees the operation settle through watch()', async ({ context, request }) => {
  const [a, b] = [await context.newPage(), await context.newPage()];
  await openClient(a, CHECKOUT);
  await openClient(b, CHECKOUT);
  await a.evaluate(() => localStorage.clear());
  await b.evaluate(() => {
    (window as any).changes = [];
    (window as any).sdk.watch((change: unknown) => (window as any).changes.push(change));
  });
  const outcome = await submit(a, 'checkout:watched', PAYLOAD);
  await expect.poll(() => b.evaluate(() => (window as any).changes.length)).toBeGreaterThanOrEqual(2);
  const changes = await b.evaluate(() => (window as any).changes);
  expect(changes[0]).toMatchObject({ name: 'checkout:watched', record: { key: outcome.key, status: 'pending' }, settled: null });
  expect(changes.at(-1)).toMatchObject({ name: 'checkout:watched', record: null, settled: { key: outcome.key, status: 201 } });
  expect((await serverLog(request, CHECKOUT)).requests).toHaveLength(1);
});

test('the Web Lock of an operation is named with the configured storage prefix', async ({ page }) => {
  await openClient(page, `${CHECKOUT}?workMs=1500`, { storagePrefix: 'shop-a:' });
  const held = await page.evaluate(async (payload) => {
    const sdk = (window as any).sdk;
    const running = sdk.submit('checkout:prefixed', payload);
    // Let the call take its lock, then look at what the browser holds.
    await new Promise((r) => setTimeout(r, 200));
    const { held } = await navigator.locks.query();
    await running;
    return held.map((lock: any) => lock.name);
  }, PAYLOAD);
  expect(held).toEqual(['shop-a:checkout:prefixed']);
});
