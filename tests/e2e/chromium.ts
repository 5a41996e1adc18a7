// How every Playwright run here starts Chromium: Debian's build (never a Playwright download),
// headless as root, with the background services off (this machine's network is closed, and
// without these flags Chromium keeps trying to reach them).
export const chromiumLaunchOptions = {
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
};
