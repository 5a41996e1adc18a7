// UI measurements for `make bench` (not part of `make test`: they are timings, not checks).
// The demo (`trunk build --release` into target/bench/dist, as `make build` does into dist/)
// and the minimal Yew baseline (bench/minimal-yew/dist) are served the same way, by the e2e
// static server on 127.0.0.1, and measured in the same run in Debian's Chromium with the e2e
// launch options.
import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from '../e2e/chromium';

export const DEMO_PORT = 4373;
export const MINIMAL_PORT = 4374;

export default defineConfig({
  testDir: '.',
  // The SDK's load figure has a config of its own (sdk.config.ts, its own page server).
  testMatch: /ui\.spec\.ts$/,
  outputDir: '../../target/bench/test-results',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 180_000,
  reporter: [['list']],
  use: {
    headless: true,
    viewport: { width: 1366, height: 768 },
    launchOptions: chromiumLaunchOptions,
  },
  webServer: [
    {
      command: `node tests/e2e/serve.mjs ${DEMO_PORT} /=${process.env.IDEM_BENCH_DIST ?? 'target/bench/dist'}`,
      cwd: '../..',
      url: `http://127.0.0.1:${DEMO_PORT}/`,
      reuseExistingServer: false,
    },
    {
      command: `node tests/e2e/serve.mjs ${MINIMAL_PORT} /=bench/minimal-yew/dist`,
      cwd: '../..',
      url: `http://127.0.0.1:${MINIMAL_PORT}/`,
      reuseExistingServer: false,
    },
  ],
});
