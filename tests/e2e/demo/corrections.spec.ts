// What the page shows must be true: the cart is the checkout charged, the 409 chip counts the
// whole run, the buggy claim's notes are the server's, the lab says when no fault is on, the
// claim table counts a lease down and shows the new token after a takeover, and axe-core finds
// no violation on any tab.
import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { axeViolations, fastest, open, runBatch, runScenario, setField, shot, waitSettled } from './helpers';

test('the cart shown is the checkout charged, for the amount charged', async ({ page }) => {
  await open(page);
  await page.getByTestId('speed').selectOption('2');
  await runScenario(page, 'lost-response');
  const cart = page.getByTestId('cart-checkout');
  await expect(cart).toHaveAttribute('data-checkout', 'co_1');
  await expect(cart).toHaveText(/cart co_1 · (pending|paid)/);
  const total = (await page.getByTestId('cart-total').textContent()) ?? '';
  const row = page.getByTestId('ledger-row').first();
  await expect(row).toHaveAttribute('data-order', 'co_1');
  await expect(row).toContainText(total);
  // Pay starts the next checkout, and the cart follows it.
  await page.getByTestId('play').click();
  await page.getByTestId('pay').click();
  await expect(cart).toHaveAttribute('data-checkout', 'co_2');
});

test('the 409 chip counts every 409 of the run, however fast it goes', async ({ page }, testInfo) => {
  await open(page);
  await page.getByTestId('pause').click();
  await page.getByTestId('slow-worker').check();
  await runBatch(page, 300);
  await fastest(page);
  await page.getByTestId('play').click();
  await waitSettled(page, 300, 90_000);
  await page.getByTestId('pause').click();
  const chip = Number(await page.getByTestId('count-409').getAttribute('data-count'));
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export').click()]);
  const file = testInfo.outputPath('history.json');
  await download.saveAs(file);
  const steps: { kind: { type: string; decision?: { type: string } } }[] = JSON.parse(readFileSync(file, 'utf8')).history.steps;
  const conflicts = steps.filter((s) => s.kind.type === 'decided' && s.kind.decision?.type === 'in-flight').length;
  expect(conflicts).toBeGreaterThan(100);
  expect(chip).toBe(conflicts);
});

test('the buggy SELECT-then-INSERT claim is the server speaking', async ({ page }) => {
  await open(page);
  await page.getByTestId('speed').selectOption('2');
  await runScenario(page, 'bug-select-then-insert');
  await page.getByTestId('tab-server').click();
  const insert = page.locator('[data-testid="event"]', { hasText: 'INSERT after a SELECT' }).first();
  await expect(insert).toHaveAttribute('data-kind', 'server');
  await expect(insert).toContainText('server');
});

test('the lab without faults says keys cannot differ and runs the lesson in one click', async ({ page }, testInfo) => {
  await open(page);
  await page.getByTestId('tab-lab').click();
  await expect(page.getByTestId('lab-no-faults')).toContainText('keys cannot make a difference');
  await page.getByTestId('lab-lesson').click();
  await expect(page.getByTestId('lab-no-faults')).toHaveCount(0);
  await expect(page.getByTestId('lab-preset')).toBeVisible();
  await expect(page.getByTestId('lab')).toHaveAttribute('data-done', 'true', { timeout: 60_000 });
  const double = await page.getByTestId('lab-row').evaluateAll((rs) => rs.map((r) => Number(r.getAttribute('data-double'))));
  expect(double[0]).toBeGreaterThan(0);
  expect(double[2]).toBe(0);
  expect(JSON.parse((await page.getByTestId('lab').getAttribute('data-config')) ?? '{}').faults.drop_response).toBe(0.25);
  await shot(page, testInfo, 'lab-lesson');
  // A setting with a fault: no note.
  await page.reload();
  await page.getByTestId('tab-server').click();
  await setField(page, 'response-loss', '10');
  await page.getByTestId('tab-lab').click();
  await expect(page.getByTestId('lab')).toBeVisible();
  await expect(page.getByTestId('lab-no-faults')).toHaveCount(0);
});

test('the claim table counts the lease down, and a takeover shows the new token', async ({ page }) => {
  await open(page);
  await page.getByTestId('speed').selectOption('1');
  await page.getByTestId('scenario-stale-lock').click();
  await page.getByTestId('tab-server').click();
  const row = page.getByTestId('claim-row').first();
  await expect(row).toHaveAttribute('data-status', 'in_flight', { timeout: 10_000 });
  await page.getByTestId('pause').click();
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  const token = (await row.getAttribute('data-token')) ?? '';
  const left = Number(await row.getAttribute('data-lease-left'));
  expect(token).not.toBe('');
  expect(left).toBeGreaterThan(0);
  // Time runs: the lease counts down, same token.
  await page.getByTestId('play').click();
  // (A row that is no longer in flight has no lease: that would not count.)
  const leaseLeft = async () => {
    const v = await row.getAttribute('data-lease-left');
    return v === null ? Infinity : Number(v);
  };
  await expect.poll(leaseLeft).toBeLessThan(left);
  await expect(row).toContainText(/\d\.\d s/);
  expect(await row.getAttribute('data-token')).toBe(token);
  await page.getByTestId('pause').click();
  // Step to the takeover: the row, in flight again, under another token.
  let taken = '';
  for (let i = 0; i < 200 && !taken; i++) {
    await page.keyboard.press('.');
    const t = await row.getAttribute('data-token');
    if ((await row.getAttribute('data-status')) === 'in_flight' && t && t !== token) taken = t;
  }
  expect(Number(taken)).toBeGreaterThan(Number(token));
  await expect(row).toContainText(taken);
});

test('axe-core: no violation on any tab, the tour and the details open', async ({ page }) => {
  await open(page);
  await page.getByTestId('speed').selectOption('2');
  await runScenario(page, 'lost-response');
  for (const tab of ['server', 'sequence', 'timeline', 'lab']) {
    await page.getByTestId(`tab-${tab}`).click();
    if (tab === 'sequence') await page.locator('[data-testid="seq-arrow"]').first().click();
    if (tab === 'lab') await expect(page.getByTestId('lab')).toHaveAttribute('data-done', 'true', { timeout: 60_000 });
    expect(await axeViolations(page), tab).toEqual([]);
  }
  await page.getByTestId('tour-open').click();
  await expect(page.getByTestId('tour')).toBeVisible();
  expect(await axeViolations(page), 'tour').toEqual([]);
});
