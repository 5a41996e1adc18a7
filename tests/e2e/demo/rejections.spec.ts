// 409 (in flight, lease live) and 422 (same key, different request) when provoked.
import { expect, test } from '@playwright/test';
import { open, shot } from './helpers';

test('a slow worker provokes 409; a buggy page reusing the key provokes 422', async ({ page }, testInfo) => {
  await open(page);
  await page.getByTestId('strategy').selectOption('same-key');
  await page.getByTestId('speed').selectOption('5');

  // The worker outlives the client's timeout: the retry finds the key in flight → 409.
  await page.getByTestId('slow-worker').check();
  await page.getByTestId('pay').click();
  await expect(page.locator('[data-testid="event"][data-kind="409"]').first()).toBeVisible({ timeout: 20_000 });
  expect(Number(await page.getByTestId('count-409').getAttribute('data-count'))).toBeGreaterThan(0);
  await page.getByTestId('slow-worker').uncheck();
  await expect(page.getByTestId('stat-pending')).toHaveText('0', { timeout: 30_000 });

  // A page sends another cart under the pending checkout's key → 422.
  await page.getByText('Many checkouts, and a buggy page').click();
  await page.getByTestId('reuse-key').click();
  await expect(page.locator('[data-testid="event"][data-kind="422"]').first()).toBeVisible({ timeout: 20_000 });
  expect(Number(await page.getByTestId('count-422').getAttribute('data-count'))).toBeGreaterThan(0);
  await page.getByTestId('pause').click();
  await shot(page, testInfo, 'rejections-409-422');
});

test('bad input is refused in the field, never a panic', async ({ page }, testInfo) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await open(page);
  const cases: [string, string, RegExp][] = [
    ['latency-min', '-5', /negative/],
    ['request-loss', '150', /at most 100/],
    ['response-loss', 'lots', /not a number/],
    ['seed', 'abc', /whole number/],
    ['lock-ms', '1.5', /whole/],
  ];
  for (const [id, text, message] of cases) {
    await page.getByTestId(id).fill(text);
    await expect(page.getByTestId(`${id}-error`)).toHaveText(message);
    await expect(page.getByTestId(id)).toHaveAttribute('aria-invalid', 'true');
  }
  await shot(page, testInfo, 'bad-input');
  // The page still works: the last valid values stay in force.
  await page.getByTestId('pay').click();
  await expect(page.getByTestId('stat-checkouts')).toHaveText('1');
  expect(errors).toEqual([]);
});
