// The three ports on 127.0.0.1 that the Playwright config's servers listen on for a whole run:
// the demo's static server (base), the SDK pages' (base + 1) and the scripted idempotency server
// (base + 2). The real idem-servers the specs start pick their own free ports per test.
//
// IDEM_E2E_PORT_BASE sets the base. Unset, the first process that loads this module (Playwright's
// runner, loading playwright.config.ts) asks the OS for a base whose three ports are free and
// writes it to IDEM_E2E_PORT_BASE: the test workers inherit the runner's environment, so they see
// the same ports, and two checkouts running the e2e tier at once get two bases. The ports are free
// when chosen and taken a moment later by the servers; should another process win one of them in
// between, Playwright stops with "already used" instead of testing against a stranger.
import { execFileSync } from 'node:child_process';

/** Runs in a child node process (the config loads synchronously): binds port 0, then the next
 * two ports, all on 127.0.0.1; prints the base when all three bound, else tries again. */
const FIND_BASE = `
const net = require('node:net');
const bind = (port) => new Promise((resolve) => {
  const server = net.createServer();
  server.once('error', () => resolve(null));
  server.listen(port, '127.0.0.1', () => resolve(server));
});
(async () => {
  for (let attempt = 0; attempt < 20; attempt++) {
    const first = await bind(0);
    if (!first) continue;
    const base = first.address().port;
    const rest = base + 2 <= 65535 ? [await bind(base + 1), await bind(base + 2)] : [];
    const bound = [first, ...rest].filter(Boolean);
    await Promise.all(bound.map((server) => new Promise((resolve) => server.close(resolve))));
    if (bound.length === 3) return console.log(base);
  }
  console.error('no three consecutive free ports on 127.0.0.1 after 20 tries');
  process.exit(1);
})();
`;

function portBase(): number {
  const given = process.env.IDEM_E2E_PORT_BASE;
  if (given !== undefined && given !== '') {
    const base = Number(given);
    if (!Number.isInteger(base) || base < 1 || base > 65533) {
      throw new Error(`IDEM_E2E_PORT_BASE=${given}: expected a port from 1 to 65533`);
    }
    return base;
  }
  const base = Number(execFileSync(process.execPath, ['-e', FIND_BASE], { encoding: 'utf8' }).trim());
  process.env.IDEM_E2E_PORT_BASE = String(base);
  return base;
}

export const E2E_PORT_BASE = portBase();
export const DEMO_PORT = E2E_PORT_BASE;
export const CLIENT_PORT = E2E_PORT_BASE + 1;
export const IDEMPOTENCY_PORT = E2E_PORT_BASE + 2;
