// Honest double clicks: with no key or a key per attempt, Pay pressed while the checkout is
// pending sends the cart again for the same checkout, so the ledger shows that checkout charged
// twice; with one key per checkout the click resumes the pending operation and nothing new is
// sent. The "Double click" scenario shows both sides.
import { expect, test } from '@playwright/test';
import { doubleCharged, fastest, ledger, open, runScenario, shot, waitSettled } from './helpers';

for (const [strategy, charges] of [
  ['no-key', 2],
  ['key-per-try', 2],
  ['same-key', 1],
] as const) {
  test(`a double click with ${strategy}: ${charges === 2 ? 'the same checkout charged twice' : 'one charge'}`, async ({ page }, testInfo) => {
    await open(page);
    await page.getByTestId('pause').click();
    await page.getByTestId('strategy').selectOption(strategy);
    await page.getByTestId('pay').dblclick();
    await fastest(page);
    await page.getByTestId('play').click();
    await waitSettled(page, 1);
    await expect(page.getByTestId('stat-charges')).toHaveText(String(charges));
    expect(await ledger(page)).toEqual([{ order: 'co_1', charges }]);
    expect(await doubleCharged(page)).toEqual(charges === 2 ? ['co_1'] : []);
    await expect(page.getByTestId('invariant')).toHaveAttribute('data-ok', String(charges === 1));
    // The diagram shows the second click and, for a naive page, its second request.
    await page.getByTestId('tab-sequence').click();
    const posts = page.locator('[data-testid="seq-arrow"][data-hop="request"]');
    await expect(posts).toHaveCount(charges);
    if (charges === 2) {
      await expect(page.locator('[data-testid="seq-mark"][data-kind="click"]')).toHaveCount(1);
      await expect(page.locator('[data-testid="seq-mark"][data-kind="charged"]')).toHaveCount(2);
    }
    await shot(page, testInfo, `double-click-${strategy}`);
  });
}

test('the Double click scenario: without a key charged twice, with one key a 409', async ({ page }, testInfo) => {
  await open(page);
  await page.getByTestId('speed').selectOption('2');
  await runScenario(page, 'double-click');
  await expect(page.getByTestId('stat-double')).toHaveText('1');
  await expect(page.locator('[data-testid="seq-arrow"][data-hop="request"]')).toHaveCount(2);
  await expect(page.locator('[data-testid="seq-mark"][data-kind="charged"]')).toHaveCount(2);
  await shot(page, testInfo, 'double-click-scenario');
  await runScenario(page, 'double-click', true);
  await expect(page.locator('[data-testid="seq-mark"][data-kind="409"]')).toHaveCount(1);
  await expect(page.getByTestId('stat-double')).toHaveText('0');
  await shot(page, testInfo, 'double-click-scenario-fixed');
});
