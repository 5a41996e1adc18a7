// The README's "Embedding the SDK" block, run as it is written: a module script of a page
// served beside the package's files, on another origin than the server's, against idem-server
// as `make serve` starts it (demo faults on, the configured tenants, CORS for the page's
// origin). The one change: the server's port, `:8000` under `make serve`, a free port here.
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect, test } from '@playwright/test';
import { startIdem, stop, tenantViews, type Running } from './real-server';

/** The first ```js block after the "## Embedding the SDK" heading of README.md. */
function readmeBlock(): string {
  const readme = readFileSync('README.md', 'utf8');
  const section = readme.slice(readme.indexOf('## Embedding the SDK'));
  const block = section.match(/```js\n([\s\S]*?)```/);
  if (!block) throw new Error('README.md: no js block under "## Embedding the SDK"');
  return block[1];
}

test("the README's embedding example runs as written against idem-server", async ({ page }) => {
  const code = readmeBlock();
  expect(code).toContain("'http://127.0.0.1:8000/api/checkout'");
  const dir = mkdtempSync(join(tmpdir(), 'idem-readme-e2e-'));
  const running: Running[] = [];
  // The embedder's site: a page and a copy of `make sdk`'s package beside it, served by a real
  // server (Chromium treats a page it did not fetch from 127.0.0.1 as public, and refuses it
  // requests to the loopback server).
  const site = join(dir, 'site');
  cpSync('target/sdk-pkg', site, { recursive: true });
  writeFileSync(join(site, 'checkout.html'), '<!doctype html><title>checkout</title>');
  const files = spawn('node', ['tests/e2e/serve.mjs', '0', `/=${site}`], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const origin = await new Promise<string>((resolve) =>
      createInterface({ input: files.stdout! }).once('line', (line) => resolve(line.replace(/^serving on /, '').replace(/\/$/, ''))),
    );
    const api = await startIdem(dir, 3_000, [origin], running);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${origin}/checkout.html`);
    const script = code.replaceAll('http://127.0.0.1:8000', api.url) + '\nwindow.readmeOutcome = outcome;\n';
    await page.addScriptTag({ type: 'module', content: script });
    const outcome = await page
      .waitForFunction(() => (window as any).readmeOutcome, null, { timeout: 30_000 })
      .catch((e) => {
        throw new Error(`no outcome (${errors.join(' | ')}): ${e}`);
      });
    expect(await outcome.jsonValue()).toMatchObject({
      kind: 'succeeded',
      status: 201,
      name: 'checkout:cart-42',
      body: { status: 'paid', amount: 1299 },
    });
    // One charge, in PayCo's ledger, for the README's tenant.
    expect(await tenantViews(api.url, 'token-a').ledger()).toEqual([expect.objectContaining({ outcome: 'charged', amount: 1299 })]);
  } finally {
    for (const r of running.reverse()) await stop(r);
    files.kill();
    rmSync(dir, { recursive: true, force: true });
  }
});
