// The lesson's picture is legible and true (issue 25), each point as a class sees it at
// 1366×768: no two labels of the sequence diagram meet, at any scenario's pause or tour step, in
// either display mode; concurrent messages are drawn apart; the diagram's first rows are in view;
// requests are numbered alike on every lane and "late" only where one arrived late; a batch
// charges the cart; the storage and network panels show what is in force during a scenario; a
// link opens on its sender's tab with the event feed filled, and ←/→ keep the feed; projector
// mode scales the caption and cuts no header or ledger line; the Tour button keeps its row; the
// help dialog takes focus; the README counts the scenarios the code has.
//
// IDEM_E2E_PICTURES=1 saves a screenshot of every pause and tour step (both modes) as artifacts.
import { readFileSync } from 'node:fs';
import { expect, test, type Page, type TestInfo } from '@playwright/test';
import { fastest, open, runBatch, runScenario, setField, shot, waitSettled } from './helpers';

const arrows = (page: Page, sel = '') => page.locator(`[data-testid="seq-arrow"]${sel}`);
const marks = (page: Page, kind: string) => page.locator(`[data-testid="seq-mark"][data-kind="${kind}"]`);
/** The diagram's SVG (the lanes' headings above it are another, hidden from assistive tech). */
const diagram = (page: Page) => page.getByTestId('sequence').locator('svg[role="group"]');

/** The scenario ids, in menu order, from their buttons. */
async function scenarioIds(page: Page): Promise<string[]> {
  const ids = await page
    .locator('button[data-testid^="scenario-"]')
    .evaluateAll((bs) => bs.map((b) => (b.getAttribute('data-testid') ?? '').slice('scenario-'.length)));
  return ids.filter((id) => id !== 'fix');
}

/** Every pair of the diagram's labels whose boxes meet, and every label the diagram clips. */
async function labelClashes(page: Page): Promise<string[]> {
  return diagram(page).evaluate((svg) => {
    const frame = svg.getBoundingClientRect();
    const boxes = [...svg.querySelectorAll('text')].map((t) => ({ text: t.textContent ?? '', r: t.getBoundingClientRect() }));
    const out: string[] = [];
    for (const [i, a] of boxes.entries()) {
      if (a.r.left < frame.left - 0.5 || a.r.right > frame.right + 0.5) out.push(`"${a.text}" is cut at the diagram's edge`);
      for (const b of boxes.slice(i + 1)) {
        const w = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
        const h = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
        if (w > 0.5 && h > 0.5) out.push(`"${a.text}" meets "${b.text}"`);
      }
    }
    return out;
  });
}

/** The diagram's first row (its topmost label), if it is not inside the scroller's view. */
async function firstRowHidden(page: Page): Promise<string | null> {
  return diagram(page).evaluate((svg) => {
    const view = (svg.closest('[tabindex]') ?? svg).getBoundingClientRect();
    const texts = [...svg.querySelectorAll('text')];
    const first = texts.reduce((a, b) => (b.getBoundingClientRect().top < a.getBoundingClientRect().top ? b : a));
    const r = first.getBoundingClientRect();
    return r.top >= view.top - 0.5 && r.bottom <= view.bottom + 0.5
      ? null
      : `"${first.textContent}" at ${Math.round(r.top)}..${Math.round(r.bottom)}, view ${Math.round(view.top)}..${Math.round(view.bottom)}`;
  });
}

async function maybeShot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  if (process.env.IDEM_E2E_PICTURES) await shot(page, testInfo, name);
}

/** The tour's steps that run a scenario: (scenario, fixed run). */
const TOUR = [
  ['ambiguous-timeout', false],
  ['no-key-retry', false],
  ['bug-new-key-per-attempt', false],
  ['bug-new-key-per-attempt', true],
  ['double-click', true],
  ['other-cart', false],
  ['stale-lock', false],
] as const;

for (const mode of ['normal', 'projector'] as const) {
  test(`no two labels of the diagram meet, none is cut, at every scenario pause and tour step (${mode})`, async ({ page }, testInfo) => {
    test.setTimeout(400_000);
    await open(page);
    await fastest(page);
    if (mode === 'projector') await page.getByTestId('projector').click();
    const found: string[] = [];
    let pauses = 0;
    for (const id of await scenarioIds(page)) {
      for (const fixed of [false, true]) {
        if (fixed && (await page.getByTestId('scenario-fix').count()) === 0) continue;
        await runScenario(page, id, fixed);
        pauses += 1;
        const name = `${id}${fixed ? ' (fixed)' : ''}`;
        found.push(...(await labelClashes(page)).map((c) => `${name}: ${c}`));
        await maybeShot(page, testInfo, `${mode}-${id}${fixed ? '-fixed' : ''}`);
      }
    }
    expect(pauses, 'every scenario and every fix').toBe(30);
    await page.getByTestId('tour-open').click();
    for (const [n, [id, fixed]] of TOUR.entries()) {
      const tour = page.getByTestId('tour');
      await expect(tour).toHaveAttribute('data-step', String(n + 1));
      const caption = page.getByTestId('scenario-caption');
      await expect(caption).toHaveAttribute('data-scenario', id);
      await expect(caption).toHaveAttribute('data-fixed', String(fixed));
      await expect(caption).toHaveAttribute('data-paused', 'true', { timeout: 30_000 });
      found.push(...(await labelClashes(page)).map((c) => `tour step ${n + 1}: ${c}`));
      await maybeShot(page, testInfo, `${mode}-tour-${n + 1}`);
      await page.getByTestId('tour-next').click();
    }
    await expect(page.getByTestId('tour')).toHaveAttribute('data-step', '8');
    await expect(page.getByTestId('lab-preset')).toBeVisible();
    await maybeShot(page, testInfo, `${mode}-tour-8`);
    expect(found).toEqual([]);
  });
}

test('SELECT then INSERT: both requests, both claims, both charges drawn apart', async ({ page }) => {
  await open(page);
  await fastest(page);
  await runScenario(page, 'bug-select-then-insert');
  const apart = async (what: string, items: ReturnType<typeof arrows>) => {
    const boxes = await items.evaluateAll((es) => es.map((e) => JSON.stringify(e.getBoundingClientRect())));
    expect(boxes.length, what).toBe(2);
    expect(boxes[0], `${what}: drawn on top of each other`).not.toBe(boxes[1]);
  };
  await apart('requests', arrows(page, '[data-hop="request"]'));
  await apart('claims', marks(page, 'claimed'));
  await apart('charges', marks(page, 'charged'));
  await expect(arrows(page, '[data-hop="request"]').nth(0)).toContainText('#1 POST');
  await expect(arrows(page, '[data-hop="request"]').nth(1)).toContainText('#2 POST');
});

test("the diagram's first rows are in view at a long scenario's pause, in either mode", async ({ page }) => {
  await open(page);
  await fastest(page);
  for (const mode of ['normal', 'projector']) {
    if (mode === 'projector') await page.getByTestId('projector').click();
    for (const [id, fixed] of [['stale-lock', false], ['bug-unfenced-writes', false], ['bug-unfenced-writes', true], ['crash-after-charge', false]] as const) {
      await runScenario(page, id, fixed);
      expect(await firstRowHidden(page), `${mode}: ${id}${fixed ? ' (fixed)' : ''}`).toBeNull();
    }
  }
});

test('requests are numbered alike on every lane: co_1, ord_1, ch_1; #1 and #2, never #0', async ({ page }) => {
  await open(page);
  await fastest(page);
  await runScenario(page, 'lost-response');
  const checkout = (await page.getByTestId('sequence').getAttribute('data-checkout')) ?? '';
  const order = /charge:(\d+)/.exec((await arrows(page, '[data-hop="call"]').textContent()) ?? '')?.[1];
  const charge = /charged ch_(\d+)/.exec((await marks(page, 'charged').textContent()) ?? '')?.[1];
  expect(`${checkout} ord_${order} ch_${charge}`, 'one checkout, one order, one charge: one number').toBe('co_1 ord_1 ch_1');
  // The timeout names the request it gave up on, as the arrows number them.
  await expect(marks(page, 'timeout')).toContainText('#1 timed out');
  await expect(arrows(page, '[data-hop="request"]').nth(0)).toContainText('#1 POST');
  await expect(arrows(page, '[data-hop="request"]').nth(1)).toContainText('#2 POST');
  await expect(arrows(page, '[data-hop="response"]').last()).toContainText('#2 ← 201 replayed');

  // The double click's second request (outside the page's attempts) is #2, and its 409 says so.
  await runScenario(page, 'double-click');
  await runScenario(page, 'double-click', true);
  await expect(arrows(page, '[data-hop="request"]').nth(1)).toContainText('#2 POST');
  expect(await arrows(page, '[data-hop="request"]').allTextContents()).not.toContainEqual(expect.stringContaining('#0'));
  await expect(arrows(page, '[data-hop="response"]').filter({ hasText: '409' })).toContainText('#2 ← 409');
});

test('"late" only on a request that arrived late: a double click\'s first request arrived first', async ({ page }) => {
  await open(page);
  await fastest(page);
  await runScenario(page, 'double-click');
  await expect(arrows(page, '[data-hop="request"]')).toHaveCount(2);
  await expect(arrows(page, '[data-hop="request"][data-fate="late"]')).toHaveCount(0);
  // A request that reaches the server after its page gave up on it is late.
  await page.getByTestId('tab-server').click();
  await setField(page, 'latency-max', '1500');
  await setField(page, 'latency-min', '1500');
  await page.getByTestId('strategy').selectOption('same-key');
  await page.getByTestId('play').click();
  await page.getByTestId('pay').click();
  await page.getByTestId('tab-sequence').click();
  await expect(page.getByTestId('sequence')).toHaveAttribute('data-checkout', 'co_2');
  await expect(arrows(page, '[data-hop="request"][data-fate="late"]').first()).toContainText('#1 POST', { timeout: 30_000 });
});

test("a batch of 20 charges the cart's amount; an older link's batch replays its drawn amounts", async ({ page }) => {
  await open(page);
  await fastest(page);
  await page.getByTestId('strategy').selectOption('no-key');
  await runBatch(page, 20);
  await waitSettled(page, 20);
  const rows = page.getByTestId('ledger-row');
  await expect(rows.first()).toBeVisible();
  const amounts = await rows.evaluateAll((rs) => rs.map((r) => /€[\d.,]+/.exec(r.textContent ?? '')?.[0]));
  expect(amounts.length).toBeGreaterThanOrEqual(5);
  expect(new Set(amounts), 'every order charged the cart').toEqual(new Set(['€25.90']));
  // A link written before batches charged the cart (`b`): the same run as then, drawn amounts.
  await page.goto('about:blank');
  await page.goto('/#v=1&seed=1&st=0&net=0x0x0x20x30&srv=2000x86400000x0x0x0&c=0.0.b0x5&t=60000&e=100000');
  await expect(page.getByTestId('ledger')).toHaveAttribute('data-orders', '5');
  const old = await page.getByTestId('ledger-row').evaluateAll((rs) => rs.map((r) => /€[\d.,]+/.exec(r.textContent ?? '')?.[0]));
  expect(old).not.toContain('€25.90');
});

test('during a scenario the storage panel shows the key the diagram writes', async ({ page }) => {
  await open(page);
  await fastest(page);
  await runScenario(page, 'lost-response');
  const record = page.getByTestId('storage-record');
  await expect(record).toHaveAttribute('data-present', 'true');
  await arrows(page, '[data-hop="request"]').first().click();
  const key = /Idempotency-Key: ([0-9a-f-]{36})/.exec((await page.getByTestId('seq-wire').textContent()) ?? '')?.[1] ?? 'none';
  await expect(page.getByTestId('storage-key')).toHaveText(key);
  await expect(marks(page, 'journal')).toContainText(key.slice(0, 8));
  // Settled: the entry the journal keeps, as the diagram's last mark says.
  await runScenario(page, 'lost-request');
  await expect(marks(page, 'settled')).toBeVisible();
  await expect(page.getByTestId('storage-state')).toContainText('settled: 201');
  // A page without a key stores nothing, and the diagram writes nothing.
  await runScenario(page, 'ambiguous-timeout');
  await expect(record).toHaveAttribute('data-present', 'false');
  await expect(marks(page, 'journal')).toHaveCount(0);
});

test("during a scenario the network and server panels show the scenario world's settings", async ({ page }) => {
  await open(page);
  await setField(page, 'response-loss', '30');
  await fastest(page);
  await runScenario(page, 'lost-response');
  await expect(page.getByTestId('response-loss'), 'the scenario world loses nothing at random').toHaveValue('0');
  // The retention scenario's store keeps records 500 ms: the server panel says so.
  await runScenario(page, 'short-retention');
  await page.getByTestId('tab-server').click();
  await expect(page.getByTestId('retention')).toHaveValue('500');
});

/** The store's and PayCo's lines of the event feed (the page's own notes are not replayed). */
const worldLines = (page: Page) =>
  page
    .getByTestId('event')
    .evaluateAll((es) => es.filter((e) => !['client', 'fault'].includes(e.getAttribute('data-kind') ?? '')).map((e) => e.textContent));

test("a link opens on its sender's tab, with the event feed filled", async ({ page, context }) => {
  await open(page);
  await fastest(page);
  await runScenario(page, 'lost-response');
  await page.getByTestId('tab-server').click();
  const lines = await worldLines(page);
  expect(lines.length).toBeGreaterThan(2);
  await page.getByTestId('tab-sequence').click();
  await page.getByTestId('copy-link').click();
  const link = await page.getByTestId('share-link').inputValue();
  const fresh = await context.newPage();
  await fresh.goto(link);
  await expect(fresh.getByTestId('position')).toHaveAttribute('data-events', (await page.getByTestId('position').getAttribute('data-events')) ?? '');
  await expect(fresh.getByTestId('tab-sequence'), "the sender's tab").toHaveAttribute('aria-selected', 'true');
  await fresh.getByTestId('tab-server').click();
  await expect.poll(() => worldLines(fresh), 'the feed beside the table and the ledger').toEqual(lines);
  await fresh.close();
});

test('← and → keep the event feed: the world\'s lines at each moment', async ({ page }) => {
  await open(page);
  await fastest(page);
  await runScenario(page, 'lost-response');
  await page.getByTestId('tab-server').click();
  const lines = await worldLines(page);
  expect(lines.length).toBeGreaterThan(2);
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('ArrowLeft');
  await expect.poll(async () => (await worldLines(page)).length, 'one event back').toBeGreaterThan(0);
  await page.keyboard.press('ArrowRight');
  await expect.poll(() => worldLines(page), 'and forward again').toEqual(lines);
});

test('projector mode scales the teaching caption with the diagram', async ({ page }) => {
  await open(page);
  await fastest(page);
  await runScenario(page, 'stale-lock');
  const size = async () => parseFloat(await page.getByTestId('scenario-caption').evaluate((e) => getComputedStyle(e).fontSize));
  const normal = await size();
  await page.getByTestId('projector').click();
  expect(await size(), 'the caption grows with the diagram').toBeGreaterThanOrEqual(normal * 1.25);
});

/** The elements matching `sel` whose text is cut (wider than their box). */
const cut = (page: Page, sel: string) =>
  page.locator(sel).evaluateAll((es) => es.filter((e) => e.scrollWidth > e.clientWidth + 0.5).map((e) => `${e.textContent} (${e.scrollWidth} > ${e.clientWidth})`));

test("no claim table header is cut, in either mode", async ({ page }) => {
  await open(page);
  await fastest(page);
  for (const mode of ['normal', 'projector']) {
    if (mode === 'projector') await page.getByTestId('projector').click();
    await runScenario(page, 'stale-lock');
    await page.getByTestId('tab-server').click();
    await expect(page.getByTestId('claim-row')).toHaveCount(1);
    expect(await cut(page, '[role="columnheader"]'), `${mode}: claim table headers`).toEqual([]);
  }
});

test('"✗ charged 2×" is not clipped at the ledger\'s edge, in either mode', async ({ page }) => {
  await open(page);
  await fastest(page);
  for (const mode of ['normal', 'projector']) {
    if (mode === 'projector') await page.getByTestId('projector').click();
    await runScenario(page, 'double-click');
    await expect(page.getByTestId('ledger-row').first()).toContainText('✗ charged 2×');
    expect(await cut(page, '[data-testid="ledger-row"] > *'), `${mode}: ledger lines`).toEqual([]);
    const inside = await page.getByTestId('ledger-row').first().evaluate((row) => {
      const panel = (row.closest('section') ?? row).getBoundingClientRect();
      return [...row.children].every((c) => c.getBoundingClientRect().right <= panel.right);
    });
    expect(inside, `${mode}: the ledger line inside its panel`).toBe(true);
  }
});

test('the Tour button keeps its row when "now with the fix" appears, in either mode', async ({ page }) => {
  await open(page);
  await fastest(page);
  for (const mode of ['normal', 'projector']) {
    if (mode === 'projector') await page.getByTestId('projector').click();
    await runScenario(page, 'bug-select-then-insert');
    await expect(page.getByTestId('scenario-fix')).toBeVisible();
    const tour = await page.getByTestId('tour-open').boundingBox();
    const select = await page.getByTestId('scenario-select').boundingBox();
    const middle = (b: { y: number; height: number } | null) => (b ? b.y + b.height / 2 : NaN);
    expect(Math.abs(middle(tour) - middle(select)), `${mode}: on the scenario select's row`).toBeLessThan(12);
  }
});

test('the help dialog takes focus, keeps it, and gives it back', async ({ page }) => {
  await open(page);
  await page.getByTestId('help-open').focus();
  await page.getByTestId('help-open').press('Enter');
  await expect(page.getByTestId('help')).toBeVisible();
  const inHelp = () => page.evaluate(() => !!document.activeElement?.closest('[data-testid="help"]'));
  await expect.poll(inHelp, 'focus moves into the dialog').toBe(true);
  await page.keyboard.press('Tab');
  expect(await inHelp(), 'Tab stays inside').toBe(true);
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('help')).toHaveCount(0);
  await expect(page.getByTestId('help-open')).toBeFocused();
});

test('the README counts the scenarios the code has', async () => {
  const table = readFileSync('crates/sim/src/scenario/table.rs', 'utf8');
  const ids = [...table.matchAll(/^\s+id: "([a-z-]+)",$/gm)].map((m) => m[1]);
  const fixes = (table.match(/^\s+fix: Some\(/gm) ?? []).length;
  const bugs = ids.filter((id) => id.startsWith('bug-')).length;
  expect(ids.length).toBeGreaterThan(0);
  const words = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine', 'ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen', 'twenty'];
  const readme = readFileSync('README.md', 'utf8').replace(/\s+/g, ' ');
  const said = (re: RegExp) => words.indexOf((re.exec(readme)?.[1] ?? '').toLowerCase());
  expect(said(/(\w+) one-click scenarios/), 'scenarios').toBe(ids.length);
  expect(said(/(\w+) of them \(the \w+ classic bugs among them\) then re-run/), 'scenarios with a fix').toBe(fixes);
  expect(said(/\(the (\w+) classic bugs among them\)/), 'classic bugs').toBe(bugs);
});
