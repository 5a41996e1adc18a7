// The guided tour: eight steps through the lesson, each a scenario on the sequence diagram (the
// last, the lab); next and back by button and key; a link opens a step.
import { expect, test, type Page } from '@playwright/test';
import { open, shot } from './helpers';

const step = (page: Page) => page.getByTestId('tour');
const caption = (page: Page) => page.getByTestId('scenario-caption');

async function pausedAt(page: Page, scenario: string, fixed = false) {
  await expect(caption(page)).toHaveAttribute('data-scenario', scenario);
  await expect(caption(page)).toHaveAttribute('data-fixed', String(fixed));
  await expect(caption(page)).toHaveAttribute('data-paused', 'true', { timeout: 30_000 });
}

test('next and back by button and key, each step its scenario, the last the lab', async ({ page }, testInfo) => {
  await open(page);
  await page.getByTestId('speed').selectOption('5');
  await page.getByTestId('tour-open').click();
  await expect(step(page)).toHaveAttribute('data-step', '1');
  await expect(page.getByTestId('tab-sequence')).toHaveAttribute('aria-selected', 'true');
  await pausedAt(page, 'ambiguous-timeout');
  await expect(page.locator('[data-testid="seq-mark"][data-kind="timeout"]')).toHaveCount(1);
  await expect(page.locator('[data-testid="seq-mark"][data-kind="charged"]')).toHaveCount(1);
  await shot(page, testInfo, 'tour-step-1');
  await page.getByTestId('tour-back').isDisabled();

  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('n');
  await expect(step(page)).toHaveAttribute('data-step', '2');
  await pausedAt(page, 'no-key-retry');
  await expect(page.getByTestId('stat-double')).toHaveText('1');
  await page.getByTestId('tour-next').click();
  await expect(step(page)).toHaveAttribute('data-step', '3');
  await pausedAt(page, 'bug-new-key-per-attempt');
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('PageDown');
  await expect(step(page)).toHaveAttribute('data-step', '4');
  await pausedAt(page, 'bug-new-key-per-attempt', true);
  await expect(page.locator('[data-testid="seq-mark"][data-kind="replayed"]')).toHaveCount(1);
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('b');
  await expect(step(page)).toHaveAttribute('data-step', '3');
  await page.getByTestId('tour-back').click();
  await expect(step(page)).toHaveAttribute('data-step', '2');
  await pausedAt(page, 'no-key-retry');

  for (const [n, id, fixed, kind] of [
    [5, 'double-click', true, '409'],
    [6, 'other-cart', false, '422'],
    [7, 'stale-lock', false, 'fenced'],
  ] as const) {
    await page.evaluate((s) => (document.activeElement as HTMLElement | null)?.blur(), n);
    // Straight to the step by its link's own format would reload; here, key by key.
    while (Number(await step(page).getAttribute('data-step')) < n) await page.keyboard.press('n');
    await expect(step(page)).toHaveAttribute('data-step', String(n));
    await pausedAt(page, id, fixed);
    await expect(page.locator(`[data-testid="seq-mark"][data-kind="${kind}"]`).first()).toBeVisible();
  }
  await page.getByTestId('tour-next').click();
  await expect(step(page)).toHaveAttribute('data-step', '8');
  await expect(page.getByTestId('tab-lab')).toHaveAttribute('aria-selected', 'true');
  await expect(page.getByTestId('lab-preset')).toBeVisible();
  await expect(page.getByTestId('tour-next')).toBeDisabled();
  await shot(page, testInfo, 'tour-step-8');
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('t');
  await expect(step(page)).toHaveCount(0);
});

test('a link opens the tour at its step', async ({ page, context }) => {
  // The short form: the step, run afresh.
  await page.goto('/#tr=5');
  await expect(step(page)).toHaveAttribute('data-step', '5');
  await pausedAt(page, 'double-click', true);
  await expect(page.locator('[data-testid="seq-mark"][data-kind="409"]')).toHaveCount(1);
  // A copied link: the same step, at the same moment, paused.
  await page.getByTestId('copy-link').click();
  const link = await page.getByTestId('share-link').inputValue();
  expect(link).toContain('&tr=5');
  const events = await page.getByTestId('position').getAttribute('data-events');
  const fresh = await context.newPage();
  await fresh.goto(link);
  await expect(fresh.getByTestId('tour')).toHaveAttribute('data-step', '5');
  await expect(fresh.getByTestId('position')).toHaveAttribute('data-events', events ?? '');
  await expect(fresh.getByTestId('scenario-caption')).toHaveAttribute('data-scenario', 'double-click');
  await expect(fresh.locator('[data-testid="seq-mark"][data-kind="409"]')).toHaveCount(1);
  await fresh.close();
  await page.goto('about:blank');
  await page.goto('/#tr=8');
  await expect(step(page)).toHaveAttribute('data-step', '8');
  await expect(page.getByTestId('lab-preset')).toBeVisible();
});
