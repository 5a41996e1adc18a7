// The demo's real-server mode against a real idem-server and PayCo, one pair per test
// (tests/e2e/client/real-server.ts starts them on free ports of 127.0.0.1 with fresh SQLite
// files, demo faults on, 3 s leases). The demo page is served by the Playwright config on its
// own port, so the page and the API are two origins, as under `make serve`: idem-server gets
// `--cors-origin` for the page's origin, and the page finds it through `?server=`.
import { test as base, expect, type Page } from '@playwright/test';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startCheckout, startIdem, stop, tenantViews, type Running } from '../client/real-server';

export { expect };

export type RealDemo = {
  /** idem-server's URL. */
  api: string;
  /** Opens the demo pointed at this server, switches to real mode and waits for the live
   * stream; returns the tenant shown on screen. */
  enter(page: Page): Promise<string>;
  /** What `tenant` can read of the server (its ledger, orders, events, armed faults). */
  views(tenant: string): ReturnType<typeof tenantViews>;
  /** Stops idem-server's process (SIGKILL), as a server dying mid-session. */
  kill(): Promise<void>;
  /** Starts idem-server again on the same port and database, after `kill`. */
  restart(): Promise<void>;
};

export const test = base.extend<{ real: RealDemo }>({
  real: async ({ baseURL }, use) => {
    const dir = mkdtempSync(join(tmpdir(), 'idem-demo-e2e-'));
    const running: Running[] = [];
    try {
      const origins = [new URL(baseURL!).origin];
      let api = await startIdem(dir, 3_000, origins, running);
      const payco = running[0].url;
      await use({
        api: api.url,
        async enter(page) {
          await page.goto(`/?server=${encodeURIComponent(api.url)}`);
          await expect(page.getByTestId('pay')).toBeEnabled();
          await page.getByTestId('mode-real').check();
          await expect(page.getByTestId('real-link')).toHaveAttribute('data-state', 'up');
          return (await page.getByTestId('real-tenant').textContent()) ?? '';
        },
        views: (tenant) => tenantViews(api.url, tenant),
        kill: () => stop(api),
        async restart() {
          api = await startCheckout(dir, 3_000, origins, payco, new URL(api.url).host);
          running.push(api);
        },
      });
    } finally {
      for (const r of running.reverse()) await stop(r);
      rmSync(dir, { recursive: true, force: true });
    }
  },
});

/** A port of 127.0.0.1 nothing listens on (bound, then closed). */
export async function deadPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Waits until the server holds exactly `names` as this tenant's armed faults (the page arms
 * them with a PUT of its own after a click). */
export async function armed(views: ReturnType<typeof tenantViews>, names: string[]): Promise<void> {
  await expect
    .poll(async () => (await views.faults()).map((f: any) => f.fault), { timeout: 10_000 })
    .toEqual(names);
}
