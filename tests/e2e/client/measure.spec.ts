// A figure, not a test: how long from a Pay click on the example page to the first attempt's
// request leaving (Resource Timing's requestStart, on the page's clock), against a real
// idem-server; beside it the same for a bare fetch() from a click, the floor. Printed, never
// asserted (speed targets belong to benchmarks). `npx playwright test --project client-timing`.
import { expect, test } from './real-server';

const ROUNDS = 20;

function summary(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(1);
  return `median ${at(0.5)} ms, p90 ${at(0.9)} ms, min ${sorted[0].toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms`;
}

test('Pay click to the first request leaving', async ({ page, idem }) => {
  await page.addInitScript(() => {
    document.addEventListener('click', (e) => { (window as any).clickedAt = e.timeStamp; (window as any).dispatchedAt = performance.now(); }, true);
  });
  const sdk: number[] = [];
  const called: number[] = [];
  const bare: number[] = [];
  const delays: number[] = [];
  const api = idem.endpoint.startsWith('/') ? '' : idem.api;
  for (let i = 0; i < ROUNDS; i++) {
    const query = new URLSearchParams({ api, token: idem.token, cart: `cart-${i}` });
    await page.goto(`${idem.pageOrigin}/examples/checkout/?${query}`);
    await expect(page.locator('#pay')).toBeEnabled();
    await page.locator('#pay').click();
    await expect(page.locator('#status')).toHaveText(/^Paid/);
    const [leaving, fetched, dispatched] = await page.evaluate(() => {
      const entry = performance
        .getEntriesByType('resource')
        .find((e) => e.name.endsWith('/api/checkout')) as PerformanceResourceTiming;
      const clicked = (window as any).clickedAt as number;
      return [entry.requestStart - clicked, entry.startTime - clicked, (window as any).dispatchedAt - clicked];
    });
    sdk.push(leaving);
    called.push(fetched);
    delays.push(dispatched);

    // The floor: the same request from a click, by a bare fetch (no key, no journal).
    await page.evaluate(
      ([endpoint, token, i]) => {
        const button = document.createElement('button');
        button.id = 'bare';
        button.onclick = () =>
          fetch(endpoint, {
            method: 'POST',
            headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', 'Idempotency-Key': `bare-${i}` },
            body: JSON.stringify({ cart: `bare-${i}`, amount: 1299, card: 'tok_visa' }),
          })
            // Read to the end, so its Resource Timing entry is written.
            .then((r) => r.text())
            .then(() => ((window as any).bareDone = true));
        document.body.append(button);
      },
      [`${api}/api/checkout`, idem.token, i] as const,
    );
    await page.locator('#bare').click();
    await page.waitForFunction(() => (window as any).bareDone === true);
    bare.push(
      await page.evaluate(() => {
        const entries = performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/api/checkout'));
        return (entries.at(-1) as PerformanceResourceTiming).requestStart - (window as any).clickedAt;
      }),
    );
  }
  console.log(`Pay click -> SDK calls fetch():          ${summary(called)}`);
  console.log(`Pay click -> first request leaving (SDK): ${summary(sdk)}`);
  console.log(`click -> request leaving (bare fetch):    ${summary(bare)}`);
  console.log(`Pay click -> its listeners run:           ${summary(delays)}`);
  expect(sdk).toHaveLength(ROUNDS);
});

test('submit() to the request leaving, first and later calls in a page', async ({ page, idem }) => {
  const first: number[] = [];
  const later: number[] = [];
  for (let i = 0; i < ROUNDS / 2; i++) {
    await idem.open(page);
    const [cold, ...warm] = await page.evaluate(async (i) => {
      const gaps: number[] = [];
      for (let n = 0; n < 5; n++) {
        const started = performance.now();
        await (window as any).sdk.submit(`checkout:m-${i}-${n}`, { cart: `m-${i}-${n}`, amount: 1299, card: 'tok_visa' });
        const entries = performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/api/checkout'));
        gaps.push((entries.at(-1) as PerformanceResourceTiming).requestStart - started);
      }
      return gaps;
    }, i);
    first.push(cold);
    later.push(...warm);
  }
  console.log(`submit() -> request leaving, first call in the page: ${summary(first)}`);
  console.log(`submit() -> request leaving, later calls:           ${summary(later)}`);
  expect(later.length).toBeGreaterThan(0);
});
