// The idem-client JS package on a plain HTML page (tests/e2e/pages/client/index.html), with the
// network scripted by page.route: every attempt of one operation carries the same key and bytes.
//
// Layout expected from the webServer: /pkg/ = the SDK package folder (idem_client.js, *_bg.wasm),
// /client/ = tests/e2e/pages/client/.
import { test, expect, type Page, type Route } from '@playwright/test';

const NAME = 'checkout:cart-42';
const PAYLOAD = { currency: 'EUR', amount: 1299 };
const CANONICAL = '{"amount":1299,"currency":"EUR"}';

type Seen = { key: string | undefined; body: string | null; contentType: string | undefined };

/** Answers the n-th attempt with answers[n] (the last one repeats) and records what was sent. */
async function script(page: Page, answers: Array<(route: Route) => Promise<void>>): Promise<Seen[]> {
  const seen: Seen[] = [];
  await page.route('**/api/checkout', async (route) => {
    const request = route.request();
    const headers = request.headers();
    seen.push({
      key: headers['idempotency-key'],
      body: request.postData(),
      contentType: headers['content-type'],
    });
    const answer = answers[Math.min(seen.length - 1, answers.length - 1)];
    await answer(route);
  });
  return seen;
}

const ok = (body: object = { order: 'o-1' }, headers: Record<string, string> = {}) =>
  (route: Route) =>
    route.fulfill({ status: 201, contentType: 'application/json', headers, body: JSON.stringify(body) });

async function open(page: Page, query = '') {
  await page.goto(`/client/${query}`);
  await page.waitForFunction(() => (window as any).idemReady === true);
}

async function fresh(page: Page, query = '') {
  await open(page, query);
  await page.evaluate(() => localStorage.clear());
}

const submit = (page: Page) =>
  page.evaluate(([name, payload]) => (window as any).idem.submit(name, payload), [NAME, PAYLOAD] as const);

function expectOneKeySameBytes(seen: Seen[]) {
  const keys = new Set(seen.map((s) => s.key));
  expect(keys.size).toBe(1);
  expect([...keys][0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  for (const s of seen) {
    expect(s.body).toBe(CANONICAL);
    expect(s.contentType).toBe('application/json');
  }
}

test('an aborted request is retried with the same key and bytes', async ({ page }) => {
  await fresh(page);
  const seen = await script(page, [(route) => route.abort('connectionreset'), ok()]);
  const outcome = await submit(page);
  expect(outcome).toMatchObject({ kind: 'succeeded', status: 201, body: { order: 'o-1' }, attempts: 2 });
  expect(seen).toHaveLength(2);
  expectOneKeySameBytes(seen);
  expect(outcome.key).toBe(seen[0].key);
  // Final outcome: the journal record is gone.
  expect(await page.evaluate(() => (window as any).idem.pending())).toEqual([]);
});

test('409 then 200: waits, retries with the same key, reports the replay', async ({ page }) => {
  await fresh(page);
  const seen = await script(page, [
    (route) =>
      route.fulfill({
        status: 409,
        contentType: 'application/problem+json',
        headers: { 'Retry-After': '1' },
        body: JSON.stringify({ type: 'about:blank', title: 'In flight', status: 409 }),
      }),
    ok({ order: 'o-1' }, { 'Idempotent-Replayed': 'true' }),
  ]);
  const started = Date.now();
  const outcome = await submit(page);
  expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // Retry-After: 1 s was honoured
  expect(outcome).toMatchObject({ kind: 'replayed', status: 201, attempts: 2 });
  expectOneKeySameBytes(seen);
});

test('422 is rejected with its problem details and never retried', async ({ page }) => {
  await fresh(page);
  const seen = await script(page, [
    (route) =>
      route.fulfill({
        status: 422,
        contentType: 'application/problem+json',
        body: JSON.stringify({ type: 'about:blank', title: 'Key reused', status: 422, detail: 'different payload' }),
      }),
  ]);
  const outcome = await submit(page);
  expect(outcome).toMatchObject({ kind: 'rejected', status: 422, attempts: 1, problem: { status: 422 } });
  await page.waitForTimeout(1000);
  expect(seen).toHaveLength(1);
});

test('a reply slower than the attempt timeout is aborted and retried', async ({ page }) => {
  await fresh(page, '?timeout=1000');
  const seen = await script(page, [
    async (route) => {
      await new Promise((r) => setTimeout(r, 2000));
      await route.fulfill({ status: 201, body: '{}' }).catch(() => {}); // already aborted
    },
    ok(),
  ]);
  const outcome = await submit(page);
  expect(outcome).toMatchObject({ kind: 'succeeded', attempts: 2 });
  expect(seen).toHaveLength(2);
  expectOneKeySameBytes(seen);
});

test('a reload between attempts resumes the same key', async ({ page }) => {
  // A long backoff leaves time to reload after the first (failed) attempt.
  await fresh(page, '?backoff=5000');
  let firstSent: () => void;
  const first = new Promise<void>((r) => (firstSent = r));
  const seen = await script(page, [
    async (route) => {
      await route.fulfill({ status: 503, body: '' });
      firstSent();
    },
    ok(),
  ]);
  void submit(page).catch(() => {}); // the page (and this promise) goes away with the reload
  await first;
  const stored = await page.evaluate((name) => localStorage.getItem(`idem:${name}`), NAME);
  expect(JSON.parse(stored!)).toMatchObject({ key: seen[0].key, body: CANONICAL, attempts: 1, version: 1 });

  await page.reload();
  await page.waitForFunction(() => (window as any).idemReady === true);
  const pending = await page.evaluate(() => (window as any).idem.pending());
  expect(pending).toEqual([
    expect.objectContaining({ name: NAME, key: seen[0].key, attempts: 1, status: 'pending', payload: PAYLOAD }),
  ]);
  // Submitting the same operation again after the reload resumes it rather than minting a key.
  const outcome = await submit(page);
  expect(outcome).toMatchObject({ kind: 'succeeded', attempts: 2, key: seen[0].key });
  expect(seen).toHaveLength(2);
  expectOneKeySameBytes(seen);
});

test('a different payload while pending is refused, not sent under a new key', async ({ page }) => {
  await fresh(page, '?backoff=5000');
  let firstSent: () => void;
  const first = new Promise<void>((r) => (firstSent = r));
  const seen = await script(page, [
    async (route) => {
      await route.abort('failed');
      firstSent();
    },
  ]);
  void submit(page).catch(() => {});
  await first;
  await page.reload();
  await page.waitForFunction(() => (window as any).idemReady === true);
  const refused = await page.evaluate(
    (name) => (window as any).idem.submit(name, { amount: 1, currency: 'EUR' }),
    NAME,
  );
  expect(refused).toMatchObject({ error: 'pendingWithDifferentPayload' });
  expect(seen).toHaveLength(1);
});
