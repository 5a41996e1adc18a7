// The packed SDK inside an app built with Vite and strict TypeScript (tests/e2e/vite-app, built
// by scripts/vite-app.sh: `npm pack` of target/sdk-pkg, installed from the tarball, `tsc` with
// skipLibCheck off, `vite build`), served for real and run in Chromium against idem-server:
// Pay, a double click, and a reload while the payment's answer is held.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { test as base, expect, type Page } from '@playwright/test';
import { startIdem, stop, tenantViews, type Running } from './real-server';

type App = {
  /** Opens the built app against the server, as this test's tenant. */
  open(page: Page): Promise<void>;
  /** Arms demo faults for this tenant. */
  arm(faults: object[]): Promise<void>;
  views: ReturnType<typeof tenantViews>;
};

const test = base.extend<{ app: App }>({
  app: async ({}, use) => {
    const dir = mkdtempSync(join(tmpdir(), 'idem-vite-e2e-'));
    const running: Running[] = [];
    let files: ChildProcess | undefined;
    try {
      files = spawn('node', ['tests/e2e/serve.mjs', '0', '/=tests/e2e/vite-app/dist'], { stdio: ['ignore', 'pipe', 'inherit'] });
      const origin = await new Promise<string>((resolve) =>
        createInterface({ input: files!.stdout! }).once('line', (line) => resolve(line.replace(/^serving on /, '').replace(/\/$/, ''))),
      );
      const api = await startIdem(dir, 3_000, [origin], running);
      const token = `demo-${randomUUID()}`;
      await use({
        async open(page) {
          await page.goto(`${origin}/?server=${encodeURIComponent(api.url)}&token=${token}`);
          // Enabled once the SDK is initialised and the click is wired (visible is too early:
          // a click before that did nothing, and the outcome stayed "none").
          await expect(page.locator('#pay')).toBeEnabled();
        },
        async arm(faults) {
          const response = await fetch(`${api.url}/api/demo/faults`, {
            method: 'PUT',
            headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
            body: JSON.stringify(faults),
          });
          expect(response.status).toBe(200);
        },
        views: tenantViews(api.url, token),
      });
    } finally {
      for (const r of running.reverse()) await stop(r);
      files?.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  },
});

test('Pay in the Vite app: one key, one charge; a double click is the same checkout', async ({ page, app }) => {
  await app.open(page);
  await page.locator('#pay').dblclick();
  const outcome = page.locator('#outcome');
  await expect(outcome).toHaveAttribute('data-kind', /^(succeeded|replayed)$/, { timeout: 15_000 });
  const key = (await outcome.getAttribute('data-key'))!;
  expect(key).toMatch(/^[0-9a-f-]{36}$/);
  expect((await app.views.orders()).map((o) => o.key)).toEqual([key]);
  expect(Object.values(await app.views.chargesPerOrder())).toEqual([1]);
});

test('a reload while the answer is held resumes the same key in the Vite app, one charge', async ({ page, app }) => {
  await app.open(page);
  await app.arm([{ fault: 'hold-response', hold_ms: 5_000 }]);
  await page.locator('#pay').click();
  // The key is in localStorage before the first attempt leaves; the reload comes mid-payment.
  await expect.poll(() => app.views.orders().then((o) => o.length), { timeout: 10_000 }).toBe(1);
  const [order] = await app.views.orders();
  await page.reload();
  const outcome = page.locator('#outcome');
  await expect(outcome).toHaveAttribute('data-kind', /^(succeeded|replayed)$/, { timeout: 20_000 });
  await expect(outcome).toHaveAttribute('data-key', order.key);
  expect(await app.views.orders()).toHaveLength(1);
  expect(Object.values(await app.views.chargesPerOrder())).toEqual([1]);
});
