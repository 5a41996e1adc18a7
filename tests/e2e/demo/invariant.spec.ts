// The lesson's table, in the browser: 30 % of responses lost over 50 checkouts.
// Same key: no order charged twice. No key, same seed: double charges, and the badge says so.
import { expect, test } from '@playwright/test';
import { doubleCharged, fastest, ledger, ledgerOrders, open, runBatch, setField, shot, waitSettled } from './helpers';

const SEED = '7';
const ORDERS = 50;

test('same key with 30 % response loss over 50 checkouts: no order charged twice', async ({ page }, testInfo) => {
  await open(page);
  await setField(page, 'seed', SEED);
  await setField(page, 'response-loss', '30');
  await page.getByTestId('strategy').selectOption('same-key');
  await fastest(page);
  await runBatch(page, ORDERS);
  await waitSettled(page, ORDERS);

  // Every order was charged (requests were never lost), none of them twice.
  expect(await ledgerOrders(page)).toBe(ORDERS);
  expect(await doubleCharged(page)).toEqual([]);
  const rows = await ledger(page);
  expect(rows.length).toBeGreaterThan(0);
  expect(rows.filter((r) => r.charges !== 1)).toEqual([]);
  await expect(page.getByTestId('invariant')).toHaveAttribute('data-ok', 'true');
  await expect(page.getByTestId('stat-double')).toHaveText('0');
  // Retries did happen: the loss was real.
  const attempts = Number(await page.getByTestId('stat-attempts').textContent());
  expect(attempts).toBeGreaterThan(ORDERS);
  console.log(`same-key, seed ${SEED}: ${ORDERS} orders charged once each, ${attempts} attempts, 0 double charges`);
  await shot(page, testInfo, 'same-key-30pct');
});

test('no key under the same seed: at least one order charged twice, badge red with the seed', async ({ page }, testInfo) => {
  await open(page);
  await setField(page, 'seed', SEED);
  await setField(page, 'response-loss', '30');
  await page.getByTestId('strategy').selectOption('no-key');
  await fastest(page);
  await runBatch(page, ORDERS);
  await waitSettled(page, ORDERS);

  const twice = await doubleCharged(page);
  expect(twice.length).toBeGreaterThan(0);
  // Double charges are listed first: the first row in view is one of them.
  const first = (await ledger(page))[0];
  expect(twice).toContain(first.order);
  expect(first.charges).toBeGreaterThan(1);
  const badge = page.getByTestId('invariant');
  await expect(badge).toHaveAttribute('data-ok', 'false');
  await expect(badge).toContainText(`seed ${SEED}`);
  await expect(page.locator('[data-testid="ledger-row"].double').first()).toBeVisible();
  console.log(`no-key, seed ${SEED}: ${twice.length} orders charged more than once (${twice.join(', ')})`);
  await shot(page, testInfo, 'no-key-30pct');
});
