// The sequence diagram: lanes Browser, Network, Server, PayCo; arrows from send to arrival, lost
// ones cut, duplicates twice, late ones crossing; the store's, the worker's and PayCo's decisions
// written on their lanes; in step with step / ← / →; one checkout at a time with a picker; a click
// on an arrow shows its bytes and what the page knew. Screenshots at 1366×768 and in projector mode.
import { expect, test, type Page } from '@playwright/test';
import { axeViolations, open, runBatch, runScenario, setField, shot } from './helpers';

const arrows = (page: Page, sel = '') => page.locator(`[data-testid="seq-arrow"]${sel}`);
const mark = (page: Page, kind: string, lane?: string) =>
  page.locator(`[data-testid="seq-mark"][data-kind="${kind}"]${lane ? `[data-lane="${lane}"]` : ''}`);
const kinds = (page: Page) =>
  page.getByTestId('seq-mark').evaluateAll((ms) => ms.map((m) => `${m.getAttribute('data-lane')}:${m.getAttribute('data-kind')}`));

test('a lost response: cut, the retry replayed, every decision on its lane, details on click', async ({ page }, testInfo) => {
  await open(page);
  await page.getByTestId('speed').selectOption('2');
  await runScenario(page, 'lost-response');
  // A scenario opens the diagram.
  await expect(page.getByTestId('tab-sequence')).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('sequence')).toHaveAttribute('data-checkout', 'co_1');
  const cut = arrows(page, '[data-hop="response"][data-fate="lost"]');
  await expect(cut).toHaveCount(1);
  await expect(cut).toContainText('✂ lost response');
  await expect(arrows(page, '[data-hop="request"]')).toHaveCount(2);
  await expect(arrows(page, '[data-hop="call"]')).toHaveCount(1);
  const seen = await kinds(page);
  for (const k of ['browser:journal', 'server:claimed', 'payco:charged', 'server:saved', 'browser:timeout', 'server:replayed']) {
    expect(seen, k).toContain(k);
  }
  await expect(mark(page, 'journal', 'browser')).toContainText('localStorage ← key');
  await shot(page, testInfo, 'sequence-lost-response-1366x768');

  // The lost answer: what it carried, and that the page never saw it.
  await cut.click();
  const details = page.getByTestId('seq-details');
  await expect(details).toBeVisible();
  await expect(page.getByTestId('seq-wire')).toContainText('HTTP 201');
  await expect(page.getByTestId('seq-wire')).toContainText('"order"');
  await expect(page.getByTestId('seq-knew')).toContainText('never reached the page');
  await expect(page.getByTestId('seq-knew')).toContainText('timed out');
  // The retry: the first request's key, the bytes the page sent.
  await arrows(page, '[data-hop="request"]').nth(0).click();
  const first = (await page.getByTestId('seq-wire').textContent()) ?? '';
  const key = /Idempotency-Key: ([0-9a-f-]{36})/.exec(first)?.[1];
  expect(key).toBeTruthy();
  await arrows(page, '[data-hop="request"]').nth(1).click();
  await expect(page.getByTestId('seq-wire')).toContainText(`Idempotency-Key: ${key}`);
  await expect(page.getByTestId('seq-wire')).toContainText('POST /api/checkout');
  await expect(page.getByTestId('seq-wire')).toContainText('Idempotency-Key: ');
  await expect(page.getByTestId('seq-wire')).toContainText('"cart":"co_1"');
  await expect(page.getByTestId('seq-knew')).toContainText('timed out');
  // The replay, reached from the keyboard (focus selects an arrow as a click does).
  await arrows(page, '[data-hop="response"]').last().focus();
  await expect(page.getByTestId('seq-wire')).toContainText('Idempotent-Replayed: true');
  await shot(page, testInfo, 'sequence-details');
  // Once settled, the journal keeps the key and the status, no payload.
  await page.getByTestId('play').click();
  await expect(mark(page, 'settled', 'browser')).toContainText('201', { timeout: 10_000 });
  await page.getByTestId('pause').click();
  await page.getByTestId('projector').click();
  await page.waitForTimeout(300);
  await shot(page, testInfo, 'sequence-lost-response-projector');
});

test('lost request, late answers, duplicates, takeover and fencing, 409 and 422', async ({ page }, testInfo) => {
  await open(page);
  await page.getByTestId('speed').selectOption('5');
  await runScenario(page, 'lost-request');
  await expect(arrows(page, '[data-hop="request"][data-fate="lost"]')).toContainText('✂ lost request');

  await runScenario(page, 'stale-lock');
  const seen = await kinds(page);
  for (const k of ['server:409', 'server:takeover', 'server:fenced', 'payco:deduped']) expect(seen, k).toContain(k);
  await expect(mark(page, '409').first()).toContainText(/409 \+ Retry-After: \d+ s/);
  // The zombie's answer comes after the page stopped waiting: late.
  await page.getByTestId('play').click();
  await expect(arrows(page, '[data-fate="late"]').first()).toContainText('late', { timeout: 10_000 });
  await page.getByTestId('pause').click();
  await shot(page, testInfo, 'sequence-stale-lock');

  await runScenario(page, 'other-cart');
  await expect(mark(page, '422', 'server')).toHaveCount(1);

  // Every request duplicated: each drawn twice.
  await page.getByTestId('tab-server').click();
  await setField(page, 'duplicate', '100');
  await page.getByTestId('pause').click();
  await page.getByTestId('strategy').selectOption('same-key');
  await page.getByTestId('pay').click();
  await page.getByTestId('play').click();
  await page.getByTestId('tab-sequence').click();
  await expect(arrows(page, '[data-hop="request"][data-fate="duplicate"]').first()).toBeVisible({ timeout: 10_000 });
  // The first copy's text says the message was duplicated; its accessible name says so too.
  await expect(arrows(page, '[data-hop="request"][data-fate="delivered"]').first()).toContainText('duplicated');
  await page.getByTestId('pause').click();
  expect(await axeViolations(page)).toEqual([]);
});

test('in step with step, ← and →', async ({ page }) => {
  await open(page);
  await page.getByTestId('speed').selectOption('2');
  await runScenario(page, 'lost-response');
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  const count = () => arrows(page).count();
  const now = async () => Number(await page.getByTestId('sequence').getAttribute('data-now'));
  const at = await count();
  const t0 = await now();
  for (let i = 0; i < 6; i++) await page.keyboard.press('ArrowLeft');
  await expect.poll(count).toBeLessThan(at);
  expect(await now()).toBeLessThan(t0);
  const back = await count();
  for (let i = 0; i < 6; i++) await page.keyboard.press('ArrowRight');
  await expect.poll(count).toBe(at);
  expect(await now()).toBe(t0);
  for (let i = 0; i < 6; i++) await page.keyboard.press('ArrowLeft');
  await expect.poll(count).toBe(back);
  // `.` runs the next event: the diagram follows.
  for (let i = 0; i < 6; i++) await page.keyboard.press('.');
  await expect.poll(count).toBeGreaterThanOrEqual(back);
  await expect.poll(now).toBeGreaterThanOrEqual(t0 - 1_000);
});

test('many checkouts: one at a time, picked with ◂ ▸ or its number', async ({ page }) => {
  await open(page);
  await page.getByTestId('pause').click();
  await page.getByTestId('strategy').selectOption('no-key');
  await runBatch(page, 30);
  await page.getByTestId('play').click();
  await page.getByTestId('tab-sequence').click();
  const panel = page.getByTestId('sequence');
  await expect(panel).toHaveAttribute('data-checkouts', '30');
  await expect(panel).toHaveAttribute('data-checkout', 'co_1');
  await page.getByTestId('seq-next').click();
  await expect(panel).toHaveAttribute('data-checkout', 'co_2');
  await page.getByTestId('seq-checkout').fill('17');
  await expect(panel).toHaveAttribute('data-checkout', 'co_17');
  await expect(arrows(page, '[data-hop="request"]').first()).toBeVisible({ timeout: 10_000 });
  await page.getByTestId('seq-prev').click();
  await expect(panel).toHaveAttribute('data-checkout', 'co_16');
  await page.getByTestId('seq-checkout').fill('999');
  await expect(panel).toHaveAttribute('data-checkout', 'co_30');
});
