// Browser end-to-end tests, in Debian's Chromium (never a Playwright browser download).
//
// Projects, each against its own servers on 127.0.0.1:
// - demo:   the Yew demo, from `trunk build --release` output in dist/
// - timing: the demo's long-task measurement and its real-server mode's figures (not part of
//           `make test`; see below)
// - client: the idem-client JS package on plain HTML pages, against a real idem-server and PayCo
//           (the native tier's target/debug/idem-server) started per test on free ports with
//           fresh SQLite files (tests/e2e/client/real-server.ts),
//           page and API on one origin; the Retry-After answers no real server gives come from a
//           scripted server (tests/e2e/client/idempotency-server.mjs)
// - client-cross-origin: the idem-server specs again with the page and the API on two ports
//           (CORS preflights, exposed Retry-After and Idempotent-Replayed)
// - client-timing: the figure "Pay click to the first request leaving" (not part of `make test`)
import { defineConfig } from '@playwright/test';
import type { RealServerOptions } from './tests/e2e/client/real-server';
import { chromiumLaunchOptions } from './tests/e2e/chromium';
// Ports: three free ones chosen when the run starts (IDEM_E2E_PORT_BASE and the next two when
// set), so two checkouts can run at once: tests/e2e/ports.ts.
import { CLIENT_PORT, DEMO_PORT, IDEMPOTENCY_PORT } from './tests/e2e/ports';

export default defineConfig<RealServerOptions>({
  testDir: 'tests/e2e',
  outputDir: 'test-results',
  // Two files at a time (a file's tests run in order, in one worker): every idem-server spec
  // starts its own servers on free ports with fresh files, the demo's real-mode specs each use a
  // tenant of their own, and the one shared scripted server is used by one file alone
  // (retry-after.spec.ts). Measured side by side on 2 cores, 2026-12-02: demo 2:57 → 2:12,
  // client 1:31 → 0:52, client-cross-origin → 0:47 (README, "What it costs").
  fullyParallel: false,
  workers: 2,
  retries: 0,
  timeout: 120_000,
  reporter: [['list']],
  use: {
    headless: true,
    viewport: { width: 1366, height: 768 },
    launchOptions: chromiumLaunchOptions,
  },
  projects: [
    // The long-task check is a timing, not a test: it measures the page against a 50 ms budget
    // and depends on how busy the machine is, so `make test` leaves it out (the project's rule:
    // speed targets are met in benchmarks); `npx playwright test --project timing` runs it, and
    // `make bench`'s ui step measures long tasks too.
    { name: 'demo', testDir: 'tests/e2e/demo', testIgnore: /(longtask|real-measure)\.spec\.ts$/, use: { baseURL: `http://127.0.0.1:${DEMO_PORT}` } },
    { name: 'timing', testDir: 'tests/e2e/demo', testMatch: /(longtask|real-measure)\.spec\.ts$/, use: { baseURL: `http://127.0.0.1:${DEMO_PORT}` } },
    { name: 'client', testDir: 'tests/e2e/client', testIgnore: /measure\.spec\.ts$/, use: { baseURL: `http://127.0.0.1:${CLIENT_PORT}` } },
    {
      name: 'client-cross-origin',
      testDir: 'tests/e2e/client',
      // The scripted server is on another port already, and the declarations check is no page;
      // the rest runs against idem-server.
      // The README's block and the Vite app run cross-origin in both projects already.
      testIgnore: /(retry-after|measure|declarations|readme|vite)\.spec\.ts$/,
      use: { crossOrigin: true },
    },
    { name: 'client-timing', testDir: 'tests/e2e/client', testMatch: /measure\.spec\.ts$/ },
  ],
  webServer: [
    {
      command: `node tests/e2e/serve.mjs ${DEMO_PORT} /=dist`,
      url: `http://127.0.0.1:${DEMO_PORT}/`,
      reuseExistingServer: false,
    },
    {
      command: `node tests/e2e/serve.mjs ${CLIENT_PORT} /pkg=target/sdk-pkg /=tests/e2e/pages`,
      url: `http://127.0.0.1:${CLIENT_PORT}/client/`,
      reuseExistingServer: false,
    },
    {
      command: `node tests/e2e/client/idempotency-server.mjs ${IDEMPOTENCY_PORT}`,
      url: `http://127.0.0.1:${IDEMPOTENCY_PORT}/control/log`,
      reuseExistingServer: false,
    },
  ],
});
