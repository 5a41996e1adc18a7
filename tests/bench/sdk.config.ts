// The SDK load figure for `make bench` (bench/steps/sdk.mjs), apart from the UI run's config
// so it needs only the SDK package (`make sdk`, target/sdk-pkg): the package and the two pages
// (tests/bench/sdk-pages) served by the e2e static server on 127.0.0.1, in Debian's Chromium
// with the e2e launch options.
import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from '../e2e/chromium';

export const SDK_PORT = 4375;

export default defineConfig({
  testDir: '.',
  testMatch: /sdk\.spec\.ts$/,
  outputDir: '../../target/bench/test-results',
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
      command: `node tests/e2e/serve.mjs ${SDK_PORT} /pkg=target/sdk-pkg /=tests/bench/sdk-pages`,
      cwd: '../..',
      url: `http://127.0.0.1:${SDK_PORT}/empty.html`,
      reuseExistingServer: false,
    },
  ],
});
