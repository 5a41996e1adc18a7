// `make serve` itself (scripts/serve.sh) on ports of its own: it prints the URL only once the
// page answers there, and the page finds the idem-server it started without `?server=`. The
// script runs as `make serve` runs it, except for three settings it documents: the native tier's
// idem-server binary (no build of the server profile here), a fresh data folder, and a copy of
// dist/ (the script writes idem-server's origin into the page it serves, and the other specs
// share dist/).
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect, test } from '@playwright/test';
import { SERVER_BIN, tenantViews } from '../client/real-server';
import { deadPort } from './real';

test('make serve on other ports: the URL is printed once it answers, and the page talks to the idem-server it started', async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'idem-serve-e2e-'));
  const dist = join(dir, 'dist');
  cpSync('dist', dist, { recursive: true });
  // Newer than every input: the script serves this build as it is.
  writeFileSync(join(dist, '.built'), '');
  const [demo, checkout, payco, receipts] = [await deadPort(), await deadPort(), await deadPort(), await deadPort()];
  const serve = spawn('bash', ['scripts/serve.sh'], {
    env: {
      ...process.env,
      IDEM_DEMO_PORT: String(demo),
      IDEM_CHECKOUT_PORT: String(checkout),
      IDEM_PAYCO_PORT: String(payco),
      IDEM_RECEIPTS_PORT: String(receipts),
      IDEM_SERVER_BIN: SERVER_BIN,
      IDEM_SERVE_DATA: join(dir, 'data'),
      IDEM_SERVE_DIST: dist,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => serve.once('exit', resolve));
  try {
    const said: string[] = [];
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL in 60 s: ${said.join(' | ')}`)), 60_000);
      createInterface({ input: serve.stdout! }).on('line', (line) => {
        said.push(line);
        const m = line.match(/^\[serve\] demo on (http:\/\/127\.0\.0\.1:\d+)/);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      serve.once('exit', (code) => reject(new Error(`serve.sh exited ${code}: ${said.join(' | ')}`)));
    });
    expect(url).toBe(`http://127.0.0.1:${demo}`);
    expect(said).toContainEqual(`[serve] demo: ${dist}/ is up to date`);
    // Printed once something answers: the page and idem-server do, at once.
    expect((await fetch(`${url}/`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${checkout}/healthz`)).status).toBe(200);

    // No ?server=: the page reads the origin the script wrote into it.
    await page.goto(`${url}/`);
    await expect(page.getByTestId('pay')).toBeEnabled();
    await page.getByTestId('mode-real').check();
    await expect(page.getByTestId('real-link')).toHaveAttribute('data-state', 'up');
    const tenant = (await page.getByTestId('real-tenant').textContent())!;
    await page.getByTestId('pay').click();
    await expect(page.getByTestId('real-outcome')).toHaveAttribute('data-state', 'paid', { timeout: 15_000 });
    const ledger = await tenantViews(`http://127.0.0.1:${checkout}`, tenant).ledger();
    expect(ledger).toEqual([expect.objectContaining({ outcome: 'charged' })]);
  } finally {
    serve.kill('SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
});
