// The demo's real-server mode, in Chromium, against a real idem-server and PayCo per test
// (./real.ts): real fetch from the page's origin to the server's (CORS), real localStorage,
// real time. What the page shows is checked against what the server itself answers to the
// tenant shown on screen.
import type { Page } from '@playwright/test';
import { axeViolations, shot } from './helpers';
import { armed, deadPort, expect, test, type RealDemo } from './real';

const PAID = /^(paid|replayed)$/;

test('Pay charges once: in the ledger panel, in PayCo\'s real ledger, under the tenant on screen', async ({ page, real }) => {
  const tenant = await real.enter(page);
  expect(tenant).toMatch(/^demo-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  // Real mode shows nothing of the simulated run.
  await expect(page.getByTestId('virtual-time')).toHaveCount(0);
  await expect(page.getByTestId('claim-table')).toHaveAttribute('data-rows', '0');

  await page.getByTestId('pay').click();
  const outcome = page.getByTestId('real-outcome');
  await expect(outcome).toHaveAttribute('data-state', 'paid', { timeout: 15_000 });
  const key = (await outcome.getAttribute('data-key'))!;
  expect(key).toMatch(/^[0-9a-f-]{36}$/);

  // The page's panels: one done claim under the tenant, one charge.
  await expect(page.getByTestId('ledger')).toHaveAttribute('data-orders', '1');
  await expect(page.getByTestId('ledger-row')).toHaveAttribute('data-charges', '1');
  const row = page.getByTestId('claim-row');
  await expect(row).toHaveAttribute('data-status', 'done');
  await expect(row).toHaveAttribute('data-key', key);
  await expect(row).toHaveAttribute('data-scope', tenant);
  await expect(page.getByTestId('invariant')).toHaveAttribute('data-ok', 'true');

  // The server, asked as the tenant shown on screen, has this very checkout.
  const views = real.views(tenant);
  const orders = await views.orders();
  expect(orders.map((o) => [o.key, o.status])).toEqual([[key, 'paid']]);
  expect(await views.chargesPerOrder()).toEqual({ [orders[0].id]: 1 });
  await expect(page.getByTestId('ledger-row')).toHaveAttribute('data-order', `#${orders[0].id}`);
  const events = await views.events();
  expect(events.length).toBeGreaterThan(0);
  expect(new Set(events.map((e) => e.scope))).toEqual(new Set([tenant]));
  // Every one of them is in the feed (newest first).
  const kinds = await page.getByTestId('event').evaluateAll((es) => es.map((e) => e.getAttribute('data-kind')));
  expect(kinds.reverse()).toEqual(events.map((e) => (e.kind.type === 'note' ? 'charged' : e.kind.type)));
});

test('drop-response: the connection closes after the commit, the retry is replayed, one charge', async ({ page, real }) => {
  const tenant = await real.enter(page);
  const views = real.views(tenant);
  await page.getByTestId('drop-next-response').click();
  await armed(views, ['drop-response']);
  await page.getByTestId('pay').click();
  // Chromium itself may resend the POST whose connection closed unanswered (same bytes, same
  // key): the replay then answers the SDK's first attempt. Either way the answer is the replay.
  await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'replayed', { timeout: 15_000 });
  const key = (await page.getByTestId('real-outcome').getAttribute('data-key'))!;
  await expect(page.locator('[data-testid=event][data-kind=replayed]')).toHaveCount(1);
  await expect(page.locator('[data-testid=event][data-kind=fault]')).toHaveCount(1);
  const events = (await views.events()).filter((e) => e.key === key);
  expect(events.filter((e) => e.kind.type === 'claimed')).toHaveLength(1);
  expect(events.filter((e) => e.kind.type === 'replayed').length).toBeGreaterThanOrEqual(1);
  expect(Object.values(await views.chargesPerOrder())).toEqual([1]);
  await expect(page.getByTestId('ledger-row')).toHaveAttribute('data-charges', '1');
  // The one-shot is used up: the page's next fault set (a worker toggle) leaves it out.
  await page.getByTestId('slow-worker').check();
  await armed(views, ['slow-worker']);
  await page.getByTestId('slow-worker').uncheck();
  await armed(views, []);
});

/** Pay with `crash-after-charge` armed: the worker dies after PayCo's charge; the fault is
 * turned off once it fired, so the retry that takes the stale claim over lives; paid. */
async function payThroughACrash(page: Page, views: ReturnType<RealDemo['views']>) {
  await page.getByTestId('crash-after-charge').check();
  await armed(views, ['crash-after-charge']);
  await page.getByTestId('pay').click();
  await expect(page.locator('[data-testid=event][data-kind=fault]')).toHaveCount(1, { timeout: 10_000 });
  await page.getByTestId('crash-after-charge').uncheck();
  await armed(views, []);
  await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'paid', { timeout: 15_000 });
}

test('crash-after-charge: the claim goes stale, a retry takes it over, PayCo answers its saved charge: one charge', async ({ page, real }) => {
  const tenant = await real.enter(page);
  const views = real.views(tenant);
  await payThroughACrash(page, views);
  await expect(page.getByTestId('count-takeover')).toHaveAttribute('data-count', '1');
  expect((await views.events()).filter((e) => e.kind.type === 'taken_over')).toHaveLength(1);
  expect(Object.values(await views.chargesPerOrder())).toEqual([1]);
  await expect(page.getByTestId('ledger-row')).toHaveAttribute('data-charges', '1');
});

test('503: refused before the claim, retried after Retry-After, paid once', async ({ page, real }) => {
  const tenant = await real.enter(page);
  const views = real.views(tenant);
  await page.getByTestId('unavailable-next').click();
  await armed(views, ['unavailable']);
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'paid', { timeout: 15_000 });
  // Two attempts left the page: the 503, then the one that paid.
  await expect(page.getByTestId('stat-attempts')).toHaveText('2');
  const events = await views.events();
  expect(events.filter((e) => e.kind.type === 'claimed')).toHaveLength(1);
  expect(events.some((e) => e.kind.type === 'note' && String(e.kind.text).startsWith('fault: unavailable'))).toBe(true);
  expect(Object.values(await views.chargesPerOrder())).toEqual([1]);
});

test('decline next charge: the next checkout pays with the declining test card, refused 402, nothing charged', async ({ page, real }) => {
  const tenant = await real.enter(page);
  await page.getByTestId('decline-next').click();
  await expect(page.getByTestId('decline-next')).toHaveAttribute('data-armed', 'true');
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'refused', { timeout: 15_000 });
  await expect(page.getByTestId('real-outcome')).toContainText('402');
  await expect(page.getByTestId('decline-next')).toHaveAttribute('data-armed', 'false');
  const views = real.views(tenant);
  expect((await views.ledger()).map((r) => r.outcome)).toEqual(['declined']);
  await expect(page.getByTestId('ledger')).toHaveAttribute('data-orders', '0');
  // The next one pays with the usual card.
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'paid', { timeout: 15_000 });
  await expect(page.getByTestId('ledger')).toHaveAttribute('data-orders', '1');
});

test('a reload mid-checkout resumes from localStorage with the same key and the same tenant', async ({ page, real }) => {
  const tenant = await real.enter(page);
  const views = real.views(tenant);
  // The answer is held past the attempt timeout: the page is reloaded while it waits.
  await page.getByTestId('hold-next-response').click();
  await armed(views, ['hold-response']);
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('storage-state')).toHaveText('pending');
  const key = (await page.getByTestId('storage-key').textContent())!;
  await expect(page.getByTestId('claim-row')).toHaveAttribute('data-key', key);
  await page.reload();
  await expect(page.getByTestId('real-link')).toHaveAttribute('data-state', 'up');
  await expect(page.getByTestId('real-tenant')).toHaveText(tenant);
  const outcome = page.getByTestId('real-outcome');
  await expect(outcome).toHaveAttribute('data-state', PAID, { timeout: 15_000 });
  await expect(outcome).toHaveAttribute('data-key', key);
  await expect(page.getByTestId('storage-key')).toHaveText(key);
  const orders = await views.orders();
  expect(orders.map((o) => o.key)).toEqual([key]);
  expect((await views.events()).filter((e) => e.kind.type === 'claimed')).toHaveLength(1);
  expect(Object.values(await views.chargesPerOrder())).toEqual([1]);
});

test('after a reload the counters and the stored record are the browser\'s and the server\'s, not this page load\'s', async ({ page, real }) => {
  const tenant = await real.enter(page);
  const views = real.views(tenant);
  const outcome = page.getByTestId('real-outcome');
  // Two checkouts: the first paid at once, the second refused by PayCo (402).
  await page.getByTestId('pay').click();
  await expect(outcome).toHaveAttribute('data-state', PAID, { timeout: 15_000 });
  await page.getByTestId('decline-next').click();
  await page.getByTestId('pay').click();
  await expect(outcome).toHaveAttribute('data-state', 'refused', { timeout: 15_000 });
  const before = {
    checkouts: await page.getByTestId('stat-checkouts').textContent(),
    attempts: await page.getByTestId('stat-attempts').textContent(),
    charges: await page.getByTestId('stat-charges').textContent(),
  };
  expect(before).toEqual({ checkouts: '2', attempts: '2', charges: '1' });
  const key = (await page.getByTestId('storage-key').textContent())!;

  await page.reload();
  await expect(page.getByTestId('real-link')).toHaveAttribute('data-state', 'up');
  await expect(page.getByTestId('stat-charges')).toHaveText(before.charges!);
  await expect(page.getByTestId('stat-checkouts')).toHaveText(before.checkouts!);
  await expect(page.getByTestId('stat-attempts')).toHaveText(before.attempts!);
  // The newest checkout and its record, as localStorage holds them.
  await expect(outcome).toHaveAttribute('data-name', 'co_2');
  await expect(outcome).toHaveAttribute('data-state', 'refused');
  await expect(page.getByTestId('storage-key')).toHaveText(key);
  // Nothing was sent again: one order per checkout, one charge.
  expect(await views.orders()).toHaveLength(2);
  expect(Object.values(await views.chargesPerOrder())).toEqual([1]);
  // The next checkout is co_3, not a second co_1.
  await page.getByTestId('pay').click();
  await expect(outcome).toHaveAttribute('data-state', PAID, { timeout: 15_000 });
  await expect(outcome).toHaveAttribute('data-name', 'co_3');
  await expect(page.getByTestId('stat-checkouts')).toHaveText('3');
});

test('an unknown outcome is reconciled through the key-state endpoint', async ({ page, real }) => {
  const tenant = await real.enter(page);
  const views = real.views(tenant);
  // Every worker crashes after the charge: no attempt ever gets an answer, the 20 s retry
  // window closes, and the page asks GET /api/keys/{key}.
  await page.getByTestId('crash-after-charge').check();
  await armed(views, ['crash-after-charge']);
  await page.getByTestId('pay').click();
  const outcome = page.getByTestId('real-outcome');
  await expect(outcome).toHaveAttribute('data-state', 'unknown', { timeout: 40_000 });
  const said = page.getByTestId('real-reconciled');
  await expect(said).toHaveAttribute('data-state', 'in_flight');
  await expect(said).toContainText('lease age');
  await expect(page.getByTestId('storage-state')).toContainText('unknown');
  // The claim is the server's: it says in flight too.
  const key = (await outcome.getAttribute('data-key'))!;
  const state = await fetch(`${real.api}/api/keys/${key}`, { headers: { Authorization: `Bearer ${tenant}` } });
  expect((await state.json()).state).toBe('in_flight');
  await page.getByTestId('real-reconcile').click();
  await expect(said).toHaveAttribute('data-state', 'in_flight');
});

test('switching back to the simulated mode shows nothing of real mode', async ({ page, real }) => {
  await page.goto(`/?server=${encodeURIComponent(real.api)}`);
  await expect(page.getByTestId('virtual-time')).toBeVisible();
  // The simulated run has a charge of its own first.
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('ledger')).toHaveAttribute('data-orders', '1', { timeout: 15_000 });
  await expect(page.getByTestId('ledger-row')).toHaveAttribute('data-order', 'co_1');
  await page.getByTestId('mode-real').check();
  await expect(page.getByTestId('real-link')).toHaveAttribute('data-state', 'up');
  const tenant = (await page.getByTestId('real-tenant').textContent())!;
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'paid', { timeout: 15_000 });
  await expect(page.getByTestId('ledger-row')).toHaveAttribute('data-order', /^#/);

  await page.getByTestId('mode-simulated').check();
  await expect(page.getByTestId('mode')).toHaveAttribute('data-mode', 'simulated');
  await expect(page.getByTestId('virtual-time')).toBeVisible();
  for (const hook of ['real-tenant', 'real-outcome', 'real-link', 'real-time', 'real-network-note', 'real-time-note', 'unavailable-next']) {
    await expect(page.getByTestId(hook)).toHaveCount(0);
  }
  await expect(page.locator(`[data-scope="${tenant}"]`)).toHaveCount(0);
  await expect(page.getByTestId('ledger-row')).toHaveAttribute('data-order', 'co_1');
  await expect(page.locator('body')).not.toContainText(tenant);
  await expect(page.getByTestId('request-loss')).toBeEnabled();
  await expect(page.getByTestId('strategy')).toBeEnabled();
});

test('real mode with no server says so plainly and offers the simulated mode', async ({ page }) => {
  // No idem-server here: a port nothing listens on.
  const server = `http://127.0.0.1:${await deadPort()}`;
  await page.goto(`/?server=${encodeURIComponent(server)}`);
  await expect(page.getByTestId('pay')).toBeEnabled();
  await page.getByTestId('mode-real').check();
  const down = page.getByTestId('real-down');
  await expect(down).toBeVisible();
  await expect(down).toContainText(`idem-server does not answer at ${server}`);
  await expect(page.getByTestId('real-link')).toHaveAttribute('data-state', 'down');
  await expect(page.getByTestId('pay')).toBeDisabled();
  await page.getByTestId('real-use-simulated').click();
  await expect(page.getByTestId('mode')).toHaveAttribute('data-mode', 'simulated');
  await expect(page.getByTestId('real-down')).toHaveCount(0);
  await expect(page.getByTestId('virtual-time')).toBeVisible();
  await expect(page.getByTestId('pay')).toBeEnabled();
});

// The sequence diagram in real mode: the same component and data-testids as the simulated one
// (./sequence.spec.ts), drawn from what the page sent and received and the server's events.
const arrows = (page: Page, sel = '') => page.locator(`[data-testid="seq-arrow"]${sel}`);
const mark = (page: Page, kind: string, lane: string) =>
  page.locator(`[data-testid="seq-mark"][data-kind="${kind}"][data-lane="${lane}"]`);

test('sequence, real mode: a dropped response is saved on the server, cut before the browser, the retry replayed', async ({ page, real }, testInfo) => {
  const tenant = await real.enter(page);
  const views = real.views(tenant);
  // Real mode offers the diagram beside the server's view (no timeline, no lab: no run).
  await expect(page.getByTestId('tab-timeline')).toHaveCount(0);
  await page.getByTestId('tab-sequence').click();
  await expect(page.getByTestId('sequence')).toHaveAttribute('data-checkouts', '0');
  await expect(page.getByTestId('sequence')).toContainText('No checkouts yet: press Pay.');
  await page.getByTestId('drop-next-response').click();
  await armed(views, ['drop-response']);
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'replayed', { timeout: 15_000 });
  const key = (await page.getByTestId('real-outcome').getAttribute('data-key'))!;
  const panel = page.getByTestId('sequence');
  await expect(panel).toHaveAttribute('data-checkout', 'co_1');
  await expect(panel).toHaveAttribute('data-checkouts', '1');
  // The server's event stream does not carry the outbox's relay: four lanes, no empty fifth.
  await expect(panel.locator('.seq-life')).toHaveCount(4);
  await expect(panel.locator('.seq-life.receipts')).toHaveCount(0);

  // The server's events: claimed, PayCo charged, saved 201; then the fault closed the
  // connection: the 201 is cut in the network, never reaching the browser.
  await expect(mark(page, 'claimed', 'server')).toHaveCount(1);
  await expect(mark(page, 'charged', 'payco')).toHaveCount(1);
  await expect(mark(page, 'saved', 'server')).toContainText('saved 201');
  await expect(mark(page, 'fault', 'server')).toContainText('drop-response');
  const cut = arrows(page, '[data-hop="response"][data-fate="lost"]');
  await expect(cut).toHaveCount(1);
  await expect(cut).toContainText('201 · ✂ lost response');
  // The first request arrived (the claim says so); whoever sent it again (the SDK's retry, or
  // Chromium resending on a closed connection), the answer that reached the page is the replay.
  const requests = arrows(page, '[data-hop="request"]');
  await expect(requests.first()).toHaveAttribute('data-fate', 'delivered');
  await expect(mark(page, 'replayed', 'server').first()).toBeVisible();
  // Drawn as what it was: the SDK's second attempt, or Chromium's own copy of the first, which
  // leaves below the cut answer (after the loss), never a duplicate of the first send.
  await expect(requests).toHaveCount(2);
  await expect(arrows(page, '[data-fate="duplicate"]')).toHaveCount(0);
  const sdkAttempts = await page.getByTestId('stat-attempts').textContent();
  const second = requests.nth(1);
  await expect(second).toContainText(sdkAttempts === '1' ? '#1 again: the browser resent it' : '#2 POST');
  const y = async (arrow: typeof second) => Number(await arrow.locator('line').first().getAttribute('y1'));
  expect(await y(second)).toBeGreaterThan(await y(cut));
  const replay = arrows(page, '[data-hop="response"][data-fate="delivered"]');
  await expect(replay).toHaveCount(1);
  await expect(replay).toContainText('201 replayed');
  await expect(mark(page, 'paid', 'browser')).toContainText('the saved answer');
  // The key went to localStorage before the first request left: its mark is above the arrow.
  const journal = mark(page, 'journal', 'browser');
  await expect(journal).toContainText(`localStorage ← key ${key.slice(0, 8)}`);
  const journalY = Number(await journal.locator('circle').getAttribute('cy'));
  const sendY = Number(await arrows(page, '[data-hop="request"]').first().locator('line').first().getAttribute('y1'));
  expect(journalY).toBeLessThan(sendY);
  await shot(page, testInfo, 'real-sequence-drop-response');
  expect(await axeViolations(page), 'real-mode sequence').toEqual([]);
});

test('sequence, real mode: a click on an arrow shows its request or response and what the page knew', async ({ page, real }) => {
  const tenant = await real.enter(page);
  const views = real.views(tenant);
  await page.getByTestId('tab-sequence').click();
  await page.getByTestId('unavailable-next').click();
  await armed(views, ['unavailable']);
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'paid', { timeout: 15_000 });
  const key = (await page.getByTestId('real-outcome').getAttribute('data-key'))!;
  const wire = page.getByTestId('seq-wire');
  const knew = page.getByTestId('seq-knew');
  await expect(arrows(page, '[data-hop="request"]')).toHaveCount(2);

  // The 503 the fault answered: status, Retry-After, body.
  await arrows(page, '[data-hop="response"]').first().click();
  await expect(page.getByTestId('seq-details')).toBeVisible();
  await expect(wire).toContainText(/^HTTP 503\nRetry-After: \d+\n\n/);
  await expect(knew).toContainText('answer: 503');
  // The retry: the bytes the page sent, the same key; it knew of the 503, not of the charge.
  await arrows(page, '[data-hop="request"]').nth(1).click();
  await expect(wire).toContainText('POST /api/checkout');
  await expect(wire).toContainText(`Authorization: Bearer ${tenant}`);
  await expect(wire).toContainText(`Idempotency-Key: ${key}`);
  await expect(wire).toContainText('"cart":"co_1"');
  await expect(knew).toContainText(`localStorage ← key ${key.slice(0, 8)}`);
  await expect(knew).toContainText('answer: 503');
  await expect(knew).not.toContainText('answer: 201');
  // The answer that paid, reached from the keyboard as the simulated mode's.
  await arrows(page, '[data-hop="response"]').last().focus();
  await expect(wire).toContainText(/^HTTP 201\n\n\{"order":\d+/);
  await expect(knew).toContainText('answer: 201');
  // PayCo's call: the page never sees it.
  await arrows(page, '[data-hop="call"]').click();
  await expect(wire).toContainText('POST /charges (PayCo)');
  await expect(knew).toContainText('The page never sees PayCo.');
});

test('sequence: switching real → simulated → real keeps nothing of the other mode\'s diagram', async ({ page, real }) => {
  await page.goto(`/?server=${encodeURIComponent(real.api)}`);
  // The simulated run's own checkout, with its details open.
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('ledger')).toHaveAttribute('data-orders', '1', { timeout: 15_000 });
  await page.getByTestId('tab-sequence').click();
  const panel = page.getByTestId('sequence');
  await expect(panel).toHaveAttribute('data-checkout', 'co_1');
  await arrows(page, '[data-hop="request"]').first().click();
  await expect(page.getByTestId('seq-wire')).not.toContainText('Authorization');

  await page.getByTestId('mode-real').check();
  await expect(page.getByTestId('real-link')).toHaveAttribute('data-state', 'up');
  const tenant = (await page.getByTestId('real-tenant').textContent())!;
  // Nothing of the simulated run: no checkout, no details, no arrow.
  await expect(page.getByTestId('tab-sequence')).toHaveAttribute('aria-selected', 'true');
  await expect(panel).toHaveAttribute('data-checkouts', '0');
  await expect(page.getByTestId('seq-details')).toHaveCount(0);
  await expect(arrows(page)).toHaveCount(0);
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'paid', { timeout: 15_000 });
  await expect(panel).toHaveAttribute('data-checkout', 'co_1');
  await arrows(page, '[data-hop="request"]').first().click();
  await expect(page.getByTestId('seq-wire')).toContainText(`Authorization: Bearer ${tenant}`);

  await page.getByTestId('mode-simulated').check();
  await expect(page.getByTestId('mode')).toHaveAttribute('data-mode', 'simulated');
  await expect(panel).toHaveAttribute('data-checkout', 'co_1');
  await expect(page.getByTestId('seq-details')).toHaveCount(0);
  await expect(page.locator('body')).not.toContainText(tenant);
  await arrows(page, '[data-hop="request"]').first().click();
  await expect(page.getByTestId('seq-wire')).toContainText('"cart":"co_1"');
  await expect(page.getByTestId('seq-wire')).not.toContainText('Authorization');

  await page.getByTestId('mode-real').check();
  await expect(page.getByTestId('real-link')).toHaveAttribute('data-state', 'up');
  await expect(page.getByTestId('seq-details')).toHaveCount(0);
  await expect(panel).toHaveAttribute('data-checkouts', '1');
  await expect(panel).toHaveAttribute('data-checkout', 'co_1');
  // Both modes' first checkout is co_1: this one is the real one, with the tenant's token.
  await arrows(page, '[data-hop="request"]').first().click();
  await expect(page.getByTestId('seq-wire')).toContainText(`Authorization: Bearer ${tenant}`);
});

test('the server stopping mid-session: after a grace the page says it stopped answering and offers the simulated mode', async ({ page, real }) => {
  await real.enter(page);
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'paid', { timeout: 15_000 });
  await real.kill();
  // At first the browser's event stream tries again by itself; then the page stops waiting.
  const link = page.getByTestId('real-link');
  await expect(link).toHaveAttribute('data-state', 'reconnecting');
  await expect(link).toHaveAttribute('data-state', 'down', { timeout: 10_000 });
  const down = page.getByTestId('real-down');
  await expect(down).toContainText(`idem-server stopped answering at ${real.api}`);
  await expect(page.getByTestId('pay')).toBeDisabled();
  await page.getByTestId('real-use-simulated').click();
  await expect(page.getByTestId('mode')).toHaveAttribute('data-mode', 'simulated');
  await expect(page.getByTestId('real-down')).toHaveCount(0);
  await expect(page.getByTestId('pay')).toBeEnabled();
});

/** Everything real mode shows that a reload or a server restart must not change: counters,
 * the feed, the claim table, the ledger, and the sequence diagram of the newest checkout. */
async function picture(page: Page) {
  const all = (sel: string, ...names: string[]) =>
    page.locator(sel).evaluateAll((es, names) => es.map((e) => names.map((n) => (n === 'text' ? e.textContent : e.getAttribute(n))).join(' ')), names);
  await page.getByTestId('tab-server').click();
  const server = {
    stats: await all('[data-testid^="stat-"]', 'data-testid', 'text'),
    counts: await all('[data-testid^="count-"]', 'data-testid', 'data-count'),
    feed: await all('[data-testid="event"]', 'data-kind'),
    claims: (await all('[data-testid="claim-row"]', 'data-key', 'data-status', 'data-scope')).sort(),
    ledger: await all('[data-testid="ledger-row"]', 'data-order', 'data-charges'),
  };
  await page.getByTestId('tab-sequence').click();
  const diagram = {
    sequence: await all('[data-testid="sequence"]', 'data-checkouts', 'data-checkout'),
    marks: await all('[data-testid="seq-mark"]', 'data-lane', 'data-kind'),
    arrows: await all('[data-testid="seq-arrow"]', 'data-hop', 'data-fate'),
  };
  await page.getByTestId('tab-server').click();
  return { ...server, ...diagram };
}

test('a reload and an idem-server restart show the same picture: counters, feed, claims, ledger, the diagram', async ({ page, real }) => {
  const tenant = await real.enter(page);
  const views = real.views(tenant);
  const outcome = page.getByTestId('real-outcome');
  // A worker dies after PayCo's charge; the page's retries meet 409s until the lease is stale,
  // then one takes the claim over: PayCo answers its saved charge.
  await payThroughACrash(page, views);
  // Then one PayCo declines: the newest checkout, refused 402.
  await page.getByTestId('decline-next').click();
  await page.getByTestId('pay').click();
  await expect(outcome).toHaveAttribute('data-state', 'refused', { timeout: 15_000 });
  await expect(page.getByTestId('count-takeover')).toHaveAttribute('data-count', '1');
  await expect(page.locator('[data-testid=event][data-kind=declined]')).toHaveCount(1);
  const before = await picture(page);
  expect(before.feed).toEqual(expect.arrayContaining(['takeover', '409', 'declined', 'fault']));
  expect(before.sequence).toEqual(['2 co_2']);
  expect(before.marks).toContain('payco declined');
  expect(before.claims).toHaveLength(2);

  const same = async (when: string) => {
    await expect(page.getByTestId('real-link')).toHaveAttribute('data-state', 'up');
    await expect.poll(() => picture(page), { message: when, timeout: 10_000 }).toEqual(before);
  };
  await page.reload();
  await same('after a reload');

  // The new process's event stream has no history: the page's kept log and the server's
  // durable claims draw the same picture.
  await real.kill();
  await expect(page.getByTestId('real-link')).toHaveAttribute('data-state', 'down', { timeout: 10_000 });
  await real.restart();
  expect((await views.events()).filter((e) => e.kind.type === 'claimed')).toHaveLength(0);
  await page.getByTestId('real-retry').click();
  await same('after idem-server restarted');
  await page.reload();
  await same('after a reload of the restarted server\'s page');
  // Nothing was sent again.
  expect(Object.values(await views.chargesPerOrder())).toEqual([1]);
});

test('idem-server restarted within the grace: the page reconnects by itself and sees the new process\'s events', async ({ page, real }) => {
  const tenant = await real.enter(page);
  // Enough events that the old process's last number is past the new one's first ones.
  for (let n = 1; n <= 2; n++) {
    await page.getByTestId('pay').click();
    await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-name', `co_${n}`);
    await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'paid', { timeout: 15_000 });
  }
  await real.kill();
  await real.restart();
  // No "Try again": the page's own new stream comes back up within the grace.
  await expect(page.getByTestId('real-link')).toHaveAttribute('data-state', 'up', { timeout: 10_000 });
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-name', 'co_3');
  await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'paid', { timeout: 15_000 });
  const key = (await page.getByTestId('real-outcome').getAttribute('data-key'))!;
  // The new process's events of co_3 reach the feed: a browser reconnection with the old
  // process's Last-Event-ID would have skipped them.
  const fresh = (await real.views(tenant).events()).filter((e) => e.key === key);
  expect(fresh.map((e) => e.kind.type)).toContain('claimed');
  await expect(page.locator(`[data-testid=event][data-kind=claimed]`)).toHaveCount(3);
  await expect(page.getByTestId('claim-row')).toHaveCount(3);
});

test('after idem-server restarts, a claim the page never saw comes from the server\'s durable table', async ({ page, real }) => {
  const tenant = await real.enter(page);
  await page.getByTestId('pay').click();
  const outcome = page.getByTestId('real-outcome');
  await expect(outcome).toHaveAttribute('data-state', 'paid', { timeout: 15_000 });
  const key = (await outcome.getAttribute('data-key'))!;
  await expect(page.getByTestId('claim-row')).toHaveAttribute('data-status', 'done');
  await real.kill();
  await expect(page.getByTestId('real-link')).toHaveAttribute('data-state', 'down', { timeout: 10_000 });
  await real.restart();
  // The page forgets what it saw (as a page in another tab of the same session would have
  // nothing): the row comes from GET /api/claims alone.
  await page.evaluate(() => Object.keys(sessionStorage).filter((k) => k.startsWith('idem-demo:events:')).forEach((k) => sessionStorage.removeItem(k)));
  await page.reload();
  await expect(page.getByTestId('real-link')).toHaveAttribute('data-state', 'up');
  expect((await real.views(tenant).events()).filter((e) => e.kind.type === 'claimed')).toHaveLength(0);
  const row = page.getByTestId('claim-row');
  await expect(row).toHaveCount(1);
  await expect(row).toHaveAttribute('data-key', key);
  await expect(row).toHaveAttribute('data-status', 'done');
  await expect(row).toHaveAttribute('data-scope', tenant);
});
