// reconcile(name): when the retry window closes on an unknown outcome, the SDK asks the real
// idem-server's key-state endpoint (GET /api/keys/{key}, keyStateUrl's default next to the
// endpoint) and settles the operation from the answer.
import { countKinds, expect, submit, test } from './real-server';

const NAME = 'checkout:cart-9';
const PAYLOAD = { cart: 'cart-9', amount: 4200, card: 'tok_visa' };
/** One attempt, given up after 1 s: the outcome is unknown whenever that attempt is lost. */
const ONE_SHOT = { maxAttempts: 1, attemptTimeoutMs: 1_000, jitter: false };

const reconcile = (page: any, name: string) =>
  page.evaluate((name: string) => (window as any).attempt((window as any).sdk.reconcile(name)), name);

test('done: the work committed, the answer was lost; reconcile settles it with the saved answer', async ({ page, idem }) => {
  await idem.open(page, { policy: ONE_SHOT });
  // Committed, then held past the attempt's timeout: the SDK gives up not knowing.
  await idem.arm([{ fault: 'hold-response', hold_ms: 5_000 }]);
  const unknown = await submit(page, NAME, PAYLOAD);
  expect(unknown).toMatchObject({ kind: 'unknown', attempts: 1, lastError: 'timed out' });
  expect(await page.evaluate(() => (window as any).sdk.pending())).toEqual([
    expect.objectContaining({ name: NAME, key: unknown.key, status: 'unknown' }),
  ]);

  const reconciled = await reconcile(page, NAME);
  expect(reconciled).toMatchObject({
    reconciled: 'done',
    kind: 'replayed',
    status: 201,
    body: { status: 'paid', amount: 4200 },
    key: unknown.key,
    attempts: 1,
  });
  // Settled: no longer pending, its key kept for duplicates, and nothing was sent again.
  expect(await page.evaluate(() => (window as any).sdk.pending())).toEqual([]);
  expect(await page.evaluate(() => (window as any).sdk.settled())).toEqual([
    expect.objectContaining({ name: NAME, key: unknown.key, status: 201 }),
  ]);
  expect(countKinds(await idem.events(), unknown.key)).toEqual({ claimed: 1, saved: 1 });
  expect(await idem.chargesPerOrder()).toEqual({ [reconciled.body.order]: 1 });
  expect(await reconcile(page, NAME)).toBeNull();
});

test('in flight: the worker still holds the claim; reconcile says so with the lease age, and later says done', async ({ page, idem }) => {
  await idem.open(page, { policy: ONE_SHOT });
  await idem.arm([{ fault: 'slow-worker', hold_ms: 2_500 }]);
  const unknown = await submit(page, NAME, PAYLOAD);
  expect(unknown).toMatchObject({ kind: 'unknown', attempts: 1 });

  const busy = await reconcile(page, NAME);
  expect(busy).toMatchObject({ reconciled: 'inFlight', kind: 'unknown', key: unknown.key, attempts: 1 });
  expect(busy.leaseAgeMs).toBeGreaterThanOrEqual(900);
  expect(busy.leaseAgeMs + busy.leaseLeftMs).toBe(3_000);
  expect(busy.status).toBeUndefined();
  // The record stays as it was.
  expect(await page.evaluate(() => (window as any).sdk.pending())).toEqual([
    expect.objectContaining({ name: NAME, key: unknown.key, status: 'unknown' }),
  ]);

  await expect
    .poll(async () => (await reconcile(page, NAME))?.reconciled ?? 'settled', { timeout: 10_000 })
    .toBe('settled');
  expect(await page.evaluate(() => (window as any).sdk.settled())).toEqual([
    expect.objectContaining({ name: NAME, key: unknown.key, status: 201 }),
  ]);
  expect(Object.values(await idem.chargesPerOrder())).toEqual([1]);
});

test('not found: nothing reached the server; the record stays and resume() sends it under its key', async ({ page, idem }) => {
  await idem.open(page, { policy: ONE_SHOT });
  await idem.arm([{ fault: 'unavailable' }]);
  const unknown = await submit(page, NAME, PAYLOAD);
  expect(unknown).toMatchObject({ kind: 'unknown', attempts: 1, lastError: 'status 503' });

  const missing = await reconcile(page, NAME);
  expect(missing).toMatchObject({ reconciled: 'notFound', kind: 'unknown', key: unknown.key, lastError: 'status 503' });
  expect(await page.evaluate(() => (window as any).sdk.pending())).toEqual([
    expect.objectContaining({ name: NAME, key: unknown.key, status: 'unknown' }),
  ]);
  // The SDK sent nothing on its own; within the window the page may send it again, same key.
  expect(await idem.orders()).toEqual([]);
  await idem.open(page, { policy: { initialBackoffMs: 200, jitter: false } });
  const resumed = await page.evaluate((name) => (window as any).sdk.resume(name), NAME);
  expect(resumed).toMatchObject({ kind: 'succeeded', status: 201, key: unknown.key, attempts: 2 });
  expect(await idem.chargesPerOrder()).toEqual({ [resumed.body.order]: 1 });
});

test('released: the work failed and saved nothing; reconcile says so, and resume() sends it again under its key', async ({ page, idem }) => {
  await idem.open(page, { policy: ONE_SHOT });
  // PayCo declines; under release-claim (the server's default) the claim is released, and the
  // 402 is held past the attempt's timeout: the SDK gives up not knowing.
  await idem.arm([{ fault: 'hold-response', hold_ms: 5_000 }]);
  const declining = { ...PAYLOAD, card: 'tok_decline' };
  const unknown = await submit(page, NAME, declining);
  expect(unknown).toMatchObject({ kind: 'unknown', attempts: 1, lastError: 'timed out' });

  const released = await reconcile(page, NAME);
  expect(released).toMatchObject({ reconciled: 'released', kind: 'unknown', key: unknown.key, attempts: 1 });
  expect(released.status).toBeUndefined();
  // Nothing settled, nothing sent: the record stays for the page to send again.
  expect(await page.evaluate(() => (window as any).sdk.pending())).toEqual([
    expect.objectContaining({ name: NAME, key: unknown.key, status: 'unknown' }),
  ]);
  expect(countKinds(await idem.events(), unknown.key)).toEqual({ claimed: 1, released: 1 });

  // The key is free for this payload: the same key and bytes run the work again from its
  // order, and PayCo answers from its key (the same decline, no second call's decision).
  await idem.open(page, { policy: { initialBackoffMs: 200, jitter: false } });
  const resumed = await page.evaluate((name) => (window as any).sdk.resume(name), NAME);
  expect(resumed).toMatchObject({ kind: 'rejected', status: 402, key: unknown.key, attempts: 2 });
  expect(countKinds(await idem.events(), unknown.key)).toEqual({ claimed: 2, released: 2 });
  expect(await idem.orders()).toEqual([expect.objectContaining({ key: unknown.key, status: 'declined' })]);
  expect(await idem.ledger()).toEqual([expect.objectContaining({ outcome: 'declined' })]);
});

test('another request: the key holds another cart\'s answer; reconcile never takes it for this one', async ({ page, idem }) => {
  await idem.open(page, { policy: ONE_SHOT });
  // This page's only attempt never reaches the work (503): nothing is claimed under its key.
  await idem.arm([{ fault: 'unavailable' }]);
  const unknown = await submit(page, NAME, PAYLOAD);
  expect(unknown).toMatchObject({ kind: 'unknown', attempts: 1, lastError: 'status 503' });
  // Another body under the same key (a page that reuses a key for another cart) claims it
  // and is paid.
  const other = await fetch(`${idem.api}/api/checkout`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${idem.token}`, 'Content-Type': 'application/json', 'Idempotency-Key': unknown.key },
    body: JSON.stringify({ cart: 'cart-10', amount: 100, card: 'tok_visa' }),
  });
  expect(other.status).toBe(201);

  // The key's saved answer is cart-10's 201; cart-9 never ran under the key, and is told so:
  // the refusal any attempt of it would get, not the other cart's payment.
  const reconciled = await reconcile(page, NAME);
  expect(reconciled).toMatchObject({ reconciled: 'anotherRequest', kind: 'rejected', status: 422, key: unknown.key });
  expect(reconciled.problem.title).toContain('another request');
  expect(await page.evaluate(() => (window as any).sdk.pending())).toEqual([]);
  // What reconcile said is the server's truth: a retry of cart-9 under the key is 422, and
  // the one order is cart-10's.
  const retry = await fetch(`${idem.api}/api/checkout`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${idem.token}`, 'Content-Type': 'application/json', 'Idempotency-Key': unknown.key },
    body: JSON.stringify(PAYLOAD),
  });
  expect(retry.status).toBe(422);
  expect(await idem.orders()).toEqual([expect.objectContaining({ key: unknown.key, cart: 'cart-10' })]);
});

test('an endpoint that cannot answer a key state is an error, and nothing changes', async ({ page, idem }) => {
  // The checkout route itself is no key-state endpoint: GET there is 405.
  await idem.open(page, { policy: ONE_SHOT, keyStateUrl: `${idem.endpoint}?key={key}` });
  await idem.arm([{ fault: 'unavailable' }]);
  const unknown = await submit(page, NAME, PAYLOAD);
  expect(unknown).toMatchObject({ kind: 'unknown' });
  const failed = await reconcile(page, NAME);
  expect(failed).toMatchObject({ error: 'reconcileFailed' });
  expect(failed.message).toContain('405');
  expect(await page.evaluate(() => (window as any).sdk.pending())).toHaveLength(1);
  expect(await reconcile(page, 'checkout:never')).toBeNull();
  // A template without {key} is refused at construction.
  const refused = await page.evaluate(async () => {
    const { IdempotentClient } = await import('/pkg/idem_client.js' as string);
    try {
      new IdempotentClient({ endpoint: '/api/checkout', keyStateUrl: '/api/keys/' });
      return null;
    } catch (e: any) {
      return e.code;
    }
  });
  expect(refused).toBe('invalidOptions');
});
