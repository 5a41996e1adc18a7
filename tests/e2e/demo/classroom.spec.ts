// Classroom mode: shareable runs (URL hash), keyboard, projector mode, the timeline, the
// side-by-side lab (checked against idem-lab natively) and the exported history (replayed by
// idem-lab natively). idem-lab is built in beforeAll (a no-op when target/release is current).
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { fastest, open, runBatch, setField, shot, waitSettled } from './helpers';

const ROOT = resolve(__dirname, '../../..');
const IDEM_LAB = resolve(ROOT, 'target/release/idem-lab');

test.beforeAll(() => {
  test.setTimeout(600_000);
  execFileSync('cargo', ['build', '--release', '-p', 'idem-sim', '--bin', 'idem-lab'], { cwd: ROOT, stdio: 'inherit' });
});

/** Everything the panels say about the run, through the documented hooks. */
async function state(page: Page) {
  const attr = (id: string, name: string) => page.getByTestId(id).getAttribute(name);
  const stats: Record<string, string> = {};
  for (const s of ['checkouts', 'pending', 'attempts', 'charges', 'double', 'unknown']) {
    stats[s] = (await page.getByTestId(`stat-${s}`).textContent()) ?? '';
  }
  return {
    ms: await attr('virtual-time', 'data-ms'),
    events: await attr('position', 'data-events'),
    seed: await page.getByTestId('run-seed').textContent(),
    rows: await attr('claim-table', 'data-rows'),
    inFlight: await attr('claim-count', 'data-in-flight'),
    orders: await attr('ledger', 'data-orders'),
    doubles: await attr('ledger', 'data-double-orders'),
    claims: await page.getByTestId('claim-row').evaluateAll((rs) =>
      rs.map((r) => `${r.getAttribute('data-key')}:${r.getAttribute('data-status')}`).sort(),
    ),
    stats,
  };
}

/** Pause and move focus off any button (space on a focused button presses it). */
async function pauseAndBlur(page: Page) {
  await page.getByTestId('pause').click();
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
}

test('a copied link reproduces the same run at the same moment in a fresh tab', async ({ page, context }, testInfo) => {
  await open(page, '?seed=31');
  await page.getByTestId('pause').click();
  await setField(page, 'response-loss', '30');
  await page.getByTestId('strategy').selectOption('no-key');
  await runBatch(page, 25);
  await page.getByTestId('strategy').selectOption('same-key');
  await page.getByTestId('pay').click();
  await page.getByTestId('drop-next-response').click();
  await fastest(page);
  await page.getByTestId('play').click();
  await expect.poll(async () => Number(await page.getByTestId('stat-attempts').textContent())).toBeGreaterThan(30);
  await page.getByTestId('pause').click();
  const before = await state(page);
  expect(Number(before.rows)).toBeGreaterThan(0);

  await page.getByTestId('copy-link').click();
  const link = await page.getByTestId('share-link').inputValue();
  expect(link).toContain('#v=1&seed=31');
  expect(link).toContain('&e=' + before.events);

  const fresh = await context.newPage();
  await fresh.goto(link);
  await expect(fresh.getByTestId('position')).toHaveAttribute('data-events', before.events ?? '');
  await expect(fresh.getByTestId('play-state')).toHaveAttribute('data-playing', 'false');
  const after = await state(fresh);
  expect(after).toEqual(before);
  await expect(fresh.getByTestId('response-loss')).toHaveValue('30');
  await shot(fresh, testInfo, 'classroom-link-opened');
  await fresh.close();
});

test('a malformed link shows a message and the default run, never a crash', async ({ page }) => {
  for (const bad of ['#v=1&seed=abc', '#garbage', '#v=1&seed=1&net=0x0x0x0x0&srv=1x1x0x0x0&c=0.0.b2x999999', '#v=9']) {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto('/' + bad);
    await expect(page.getByTestId('share-error')).toBeVisible();
    await expect(page.getByTestId('virtual-time')).toBeVisible();
    await expect(page.getByTestId('pay')).toBeEnabled();
    expect(errors).toEqual([]);
  }
});

test('keyboard: space, step, back and forward through history, help; nothing fires while typing', async ({ page }, testInfo) => {
  await open(page, '?seed=5');
  await pauseAndBlur(page);
  await setField(page, 'response-loss', '20');
  await runBatch(page, 6);
  await pauseAndBlur(page);
  const events = async () => Number(await page.getByTestId('position').getAttribute('data-events'));
  const e0 = await events();

  await page.keyboard.press('.');
  await expect.poll(events).toBe(e0 + 1);
  const s1 = await state(page);
  await page.keyboard.press('.');
  await page.keyboard.press('.');
  await expect.poll(events).toBe(e0 + 3);
  const s3 = await state(page);

  // ← rebuilds the world one event earlier by deterministic replay: the same table as then.
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowLeft');
  await expect.poll(events).toBe(e0 + 1);
  expect(await state(page)).toEqual(s1);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await expect.poll(events).toBe(e0 + 3);
  expect(await state(page)).toEqual(s3);
  // Forward stops at the end of what was recorded.
  await page.keyboard.press('ArrowRight');
  await page.waitForTimeout(100);
  expect(await events()).toBe(e0 + 3);

  // Space plays and pauses.
  await page.keyboard.press(' ');
  await expect(page.getByTestId('play-state')).toHaveAttribute('data-playing', 'true');
  await page.keyboard.press(' ');
  await expect(page.getByTestId('play-state')).toHaveAttribute('data-playing', 'false');

  // Typing in a field does not step.
  const e = await events();
  await page.getByTestId('claim-filter').fill('');
  await page.getByTestId('claim-filter').press('.');
  await page.getByTestId('claim-filter').press('?');
  await page.waitForTimeout(100);
  expect(await events()).toBe(e);
  await expect(page.getByTestId('help')).toHaveCount(0);
  await page.getByTestId('claim-filter').fill('');
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());

  await page.keyboard.press('?');
  await expect(page.getByTestId('help')).toBeVisible();
  await expect(page.getByTestId('help')).toContainText('Space');
  await expect(page.getByTestId('help')).toContainText('→');
  await shot(page, testInfo, 'classroom-help');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('help')).toHaveCount(0);
});

test('projector mode: larger type, fewer panels, kept in the link; p toggles it', async ({ page }, testInfo) => {
  await open(page, '?seed=3');
  await setField(page, 'response-loss', '25');
  await runBatch(page, 20);
  await expect(page.getByTestId('pay')).toBeVisible();
  const size = async () => page.locator('.app').evaluate((e) => parseFloat(getComputedStyle(e).fontSize));
  const normal = await size();
  await page.getByTestId('projector').click();
  await expect(page.getByTestId('projector')).toHaveAttribute('aria-pressed', 'true');
  await expect(page.locator('.app')).toHaveClass(/projector/);
  await expect(page.getByTestId('pay')).toBeHidden();
  expect(await size()).toBeGreaterThan(normal);
  await expect.poll(() => page.evaluate(() => location.hash)).toContain('pj=1');
  await page.waitForTimeout(800);
  await shot(page, testInfo, 'classroom-projector');
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.keyboard.press('p');
  await expect(page.getByTestId('projector')).toHaveAttribute('aria-pressed', 'false');
  await expect(page.getByTestId('pay')).toBeVisible();
});

test('timeline: a lane per checkout, bars per attempt, fault windows, details on click; windowed', async ({ page }, testInfo) => {
  await open(page, '?seed=12');
  await page.getByTestId('pause').click();
  await setField(page, 'response-loss', '35');
  await setField(page, 'request-loss', '10');
  await page.getByTestId('strategy').selectOption('same-key');
  await runBatch(page, 12);
  await fastest(page);
  await page.getByTestId('play').click();
  await waitSettled(page, 12);
  await page.getByTestId('pause').click();
  await page.getByTestId('tab-timeline').click();
  const tl = page.getByTestId('timeline');
  await expect(tl).toHaveAttribute('data-lanes', '12');
  await expect(page.getByTestId('timeline-lane')).toHaveCount(12);
  await expect(page.locator('[data-testid="timeline-attempt"][data-outcome="ok"]')).not.toHaveCount(0);
  await expect(page.locator('[data-testid="timeline-attempt"][data-outcome="unknown"]')).not.toHaveCount(0);
  await expect(page.locator('[data-testid="fault-window"][data-kind="response-loss"]')).toHaveCount(1);
  const unknown = page.locator('[data-testid="timeline-attempt"][data-outcome="unknown"]').first();
  await unknown.click();
  const details = page.getByTestId('attempt-details');
  await expect(details).toBeVisible();
  await expect(page.getByTestId('attempt-knew')).toContainText(/unknown|answer|reloaded|waiting/);
  await expect(page.getByTestId('attempt-really')).toContainText(/lost|charged|store|running/);
  await shot(page, testInfo, 'classroom-timeline');

  // A thousand checkouts: only the lanes in view are in the DOM.
  await runBatch(page, 1000);
  await page.getByTestId('tab-timeline').click();
  await expect(tl).toHaveAttribute('data-lanes', '1012');
  const lanes = await page.getByTestId('timeline-lane').count();
  expect(lanes).toBeGreaterThan(5);
  expect(lanes).toBeLessThan(80);
  await page.getByTestId('tab-server').click();
  await expect(page.getByTestId('claim-table')).toBeVisible();
});

test('lab: no key and key per attempt double-charge, same key does not, and idem-lab agrees', async ({ page }, testInfo) => {
  await open(page, '?seed=9');
  await setField(page, 'response-loss', '30');
  await page.getByTestId('tab-lab').click();
  const lab = page.getByTestId('lab');
  await page.getByTestId('lab-orders').fill('120');
  await page.getByTestId('lab-run').click();
  await expect(lab).toHaveAttribute('data-done', 'true', { timeout: 60_000 });
  const rows = await page.getByTestId('lab-row').evaluateAll((rs) =>
    rs.map((r) => ({ strategy: r.getAttribute('data-strategy'), charges: Number(r.getAttribute('data-charges')), double: Number(r.getAttribute('data-double')) })),
  );
  expect(rows.map((r) => r.strategy)).toEqual(['no-key', 'key-per-try', 'same-key']);
  expect(rows[0].double).toBeGreaterThan(0);
  expect(rows[1].double).toBeGreaterThan(0);
  expect(rows[2].double).toBe(0);
  expect(rows[2].charges).toBeLessThanOrEqual(120);
  await shot(page, testInfo, 'classroom-lab');

  // The same config, natively.
  const config = (await lab.getAttribute('data-config')) ?? '';
  expect(JSON.parse(config).workload.orders).toBe(120);
  const file = testInfo.outputPath('lab-config.json');
  writeFileSync(file, config);
  const native = JSON.parse(execFileSync(IDEM_LAB, ['--config', file, '--json'], { encoding: 'utf8' }));
  const nativeRows = native.rows.map((r: { charges: number; double_charged: number }) => ({ charges: r.charges, double: r.double_charged }));
  expect(rows.map((r) => ({ charges: r.charges, double: r.double }))).toEqual(nativeRows);
});

test('an exported history replays natively to identical counts and verdicts', async ({ page }, testInfo) => {
  await open(page, '?seed=21');
  await page.getByTestId('pause').click();
  await setField(page, 'response-loss', '30');
  await page.getByTestId('strategy').selectOption('no-key');
  await runBatch(page, 15);
  await page.getByTestId('strategy').selectOption('same-key');
  await runBatch(page, 15);
  await page.getByTestId('pay').click();
  await fastest(page);
  await page.getByTestId('play').click();
  await expect.poll(async () => Number(await page.getByTestId('stat-attempts').textContent())).toBeGreaterThan(40);
  await page.getByTestId('pause').click();
  const s = await state(page);
  const ok = await page.getByTestId('invariant').getAttribute('data-ok');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export').click()]);
  const file = testInfo.outputPath('history.json');
  await download.saveAs(file);
  // `replay` exits 0 only when the history is identical and every invariant holds, else 1.
  const replayed = spawnSync(IDEM_LAB, ['replay', file, '--json'], { encoding: 'utf8' });
  const report = JSON.parse(replayed.stdout);
  expect(report.identical).toBe(true);
  expect(String(report.events_run)).toBe(s.events);
  expect(String(report.counters.checkouts)).toBe(s.stats.checkouts);
  expect(String(report.counters.attempts)).toBe(s.stats.attempts);
  expect(String(report.charges)).toBe(s.stats.charges);
  expect(String(report.double_charged)).toBe(s.stats.double);
  expect(String(report.clean)).toBe(ok);
  expect(replayed.status).toBe(ok === 'true' ? 0 : 1);
  const text = spawnSync(IDEM_LAB, ['replay', file], { encoding: 'utf8' }).stdout;
  expect(text).toContain('identical history');
  expect(text).toContain(`charges ${s.stats.charges}`);
});
