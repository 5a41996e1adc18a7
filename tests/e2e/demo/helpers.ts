// Shared steps for the demo specs. Every selector is a documented test hook (web/README.md).
import { expect, type Page, type TestInfo } from '@playwright/test';

/** Open the demo on a fresh tab and wait for the first snapshot. */
export async function open(page: Page, query = ''): Promise<void> {
  await page.goto('/' + query);
  await expect(page.getByTestId('virtual-time')).toBeVisible();
  await expect(page.getByTestId('pay')).toBeEnabled();
}

/** Fill a validated field and check it was accepted. */
export async function setField(page: Page, testid: string, value: string): Promise<void> {
  await page.getByTestId(testid).fill(value);
  await expect(page.getByTestId(`${testid}-error`)).toHaveCount(0);
}

/** Start `n` checkouts at once with the selected strategy. */
export async function runBatch(page: Page, n: number): Promise<void> {
  const count = page.getByTestId('batch-count');
  if (!(await count.isVisible())) {
    await page.getByText('Many checkouts, and a buggy page').click();
  }
  await setField(page, 'batch-count', String(n));
  await page.getByTestId('batch-run').click();
}

/** The fastest speed on offer. */
export async function fastest(page: Page): Promise<void> {
  const values = await page.getByTestId('speed').locator('option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value));
  await page.getByTestId('speed').selectOption(values[values.length - 1]);
}

/** Wait until every checkout started has an outcome. */
export async function waitSettled(page: Page, checkouts: number, timeout = 60_000): Promise<void> {
  await expect(page.getByTestId('stat-checkouts')).toHaveText(String(checkouts), { timeout });
  await expect(page.getByTestId('stat-pending')).toHaveText('0', { timeout });
}

/** Orders PayCo charged more than once, from the ledger's `data-double-orders` (complete even
 * though the list only puts the rows in view in the DOM). */
export async function doubleCharged(page: Page): Promise<string[]> {
  const list = (await page.getByTestId('ledger').getAttribute('data-double-orders')) ?? '';
  return list === '' ? [] : list.split(',');
}

/** Number of orders in the ledger. */
export async function ledgerOrders(page: Page): Promise<number> {
  return Number(await page.getByTestId('ledger').getAttribute('data-orders'));
}

/** Ledger rows in view as { order, charges }. */
export async function ledger(page: Page): Promise<{ order: string; charges: number }[]> {
  return page.getByTestId('ledger-row').evaluateAll((rows) =>
    rows.map((r) => ({ order: r.getAttribute('data-order') ?? '', charges: Number(r.getAttribute('data-charges')) })),
  );
}

/** A full-page screenshot saved as a test artifact. */
export async function shot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  const path = testInfo.outputPath(`${name}.png`);
  await page.screenshot({ path });
  await testInfo.attach(name, { path, contentType: 'image/png' });
}

/** axe-core's violations on the page as it is now (rule id, impact, the nodes' selectors). */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: require.resolve('axe-core/axe.min.js') });
  return page.evaluate(async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const result = await (window as any).axe.run(document);
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return result.violations.map((v: any) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(' ')).join(' | ')}`);
  });
}

/** Run a classroom scenario (`fixed`: its fixed run) and wait for its pause. */
export async function runScenario(page: Page, id: string, fixed = false): Promise<void> {
  if (fixed) {
    await page.getByTestId('scenario-fix').click();
  } else {
    await page.getByTestId(`scenario-${id}`).click();
  }
  const caption = page.getByTestId('scenario-caption');
  await expect(caption).toHaveAttribute('data-scenario', id);
  await expect(caption).toHaveAttribute('data-fixed', String(fixed));
  await expect(caption).toHaveAttribute('data-paused', 'true', { timeout: 30_000 });
}
