// examples/checkout/: the plain-HTML checkout page of the README's "Embedding the SDK", run as a
// user would, against a real idem-server and PayCo (real-server.ts).
import type { Page } from '@playwright/test';
import { expect, test, type RealServer } from './real-server';

/** The example page, sending to this test's idem-server as this test's tenant. */
async function openExample(page: Page, idem: RealServer, cart = 'cart-42') {
  // Same origin: the page's own origin forwards /api/ (api=''); cross origin: idem-server's URL.
  const api = idem.endpoint.startsWith('/') ? '' : idem.api;
  const query = new URLSearchParams({ api, token: idem.token, cart });
  await page.goto(`${idem.pageOrigin}/examples/checkout/?${query}`);
  await expect(page.locator('#pay')).toBeEnabled();
}

test('the example checkout pays once, and a second click is the replay of the same payment', async ({ page, idem }) => {
  await openExample(page, idem);
  await page.locator('#pay').click();
  await expect(page.locator('#status')).toHaveText(/^Paid: order \d+$/);
  const paid = await page.locator('#status').textContent();
  await page.locator('#pay').click();
  await expect(page.locator('#status')).toHaveText(paid!);
  const orders = await idem.orders();
  expect(orders).toHaveLength(1);
  expect(await idem.chargesPerOrder()).toEqual({ [orders[0].id]: 1 });
});

test('the example checkout survives a lost answer: paid once', async ({ page, idem }) => {
  await openExample(page, idem, 'cart-7');
  await idem.arm([{ fault: 'drop-response' }]);
  await page.locator('#pay').click();
  await expect(page.locator('#status')).toHaveText(/^Paid: order \d+$/, { timeout: 15_000 });
  const orders = await idem.orders();
  expect(orders.map((o) => o.status)).toEqual(['paid']);
  expect(await idem.chargesPerOrder()).toEqual({ [orders[0].id]: 1 });
});
