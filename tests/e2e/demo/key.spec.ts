// The key lives in the browser's real localStorage before the first attempt lands, equals the
// key in the claim table, and survives a real page reload.
import { expect, test } from '@playwright/test';
import { open, setField, shot } from './helpers';

test('the stored key is the claimed key, and a real reload resumes with it', async ({ page }, testInfo) => {
  await open(page);
  await page.getByTestId('pause').click();
  await page.getByTestId('strategy').selectOption('same-key');
  // Every response is lost: the checkout keeps retrying with its key until we are done looking.
  await setField(page, 'response-loss', '100');
  // A double click must not start two checkouts.
  await page.getByTestId('pay').dblclick();

  const record = page.getByTestId('storage-record');
  await expect(record).toHaveAttribute('data-present', 'true');
  const key = (await record.getAttribute('data-key')) ?? '';
  expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  // Written before the first attempt reached the server: the claim table is still empty.
  await expect(page.getByTestId('claim-row')).toHaveCount(0);
  const stored = await page.evaluate(() => localStorage.getItem('idem:checkout:co_1'));
  expect(stored).toContain(key);
  await expect(page.getByTestId('stat-checkouts')).toHaveText('1');
  await shot(page, testInfo, 'key-before-first-attempt');

  // Step until the request lands and the store claims the key.
  const row = page.locator(`[data-testid="claim-row"][data-key="${key}"]`);
  for (let i = 0; i < 20 && (await row.count()) === 0; i++) {
    await page.getByTestId('step').click();
  }
  await expect(row).toHaveCount(1);
  await page.getByTestId('play').click();
  await expect.poll(async () => Number(await page.getByTestId('storage-attempts').textContent()), { timeout: 15_000 }).toBeGreaterThan(1);
  await shot(page, testInfo, 'key-claimed-and-retried');

  // A real page reload: the world is rebuilt from the run log, the tab resumes from localStorage.
  await page.reload();
  await expect(page.getByTestId('storage-record')).toHaveAttribute('data-key', key);
  await expect(page.getByTestId('storage-state')).toContainText('pending');
  await expect(page.locator(`[data-testid="claim-row"][data-key="${key}"]`)).toHaveCount(1);
  await expect(page.getByTestId('claim-row')).toHaveCount(1);
  await expect(page.getByTestId('stat-checkouts')).toHaveText('1');
  expect(await page.evaluate(() => localStorage.getItem('idem:checkout:co_1'))).toContain(key);
  // Pay again after the reload resumes the pending checkout: still one checkout, one key.
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('stat-checkouts')).toHaveText('1');
  await expect(page.getByTestId('response-loss')).toHaveValue('100');
  await shot(page, testInfo, 'key-after-real-reload');

  // The filter finds the record by part of its key.
  await page.getByTestId('claim-filter').fill(key.slice(0, 8));
  await expect(page.getByTestId('claim-count')).toHaveAttribute('data-shown', '1');
  await page.getByTestId('claim-filter').fill('no-such-key');
  await expect(page.getByTestId('claim-row')).toHaveCount(0);
  await page.getByTestId('claim-filter').fill('');

  // The in-page "reload tab" control: memory dropped, same key.
  await page.getByTestId('reload-tab').click();
  await expect(page.getByTestId('storage-record')).toHaveAttribute('data-key', key);
});
