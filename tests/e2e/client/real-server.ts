// The Playwright fixture that gives each test its own real idem-server: PayCo and the checkout
// (SERVER_BIN below) on free ports of 127.0.0.1, each on a fresh SQLite file in a temporary
// folder, the checkout in demo mode (`--demo-faults`: faults on request for this test's tenant),
// and a static server for the test pages on a free port of its own. All stopped, and the folder
// removed, when the test ends.
//
// Two ways to place the page, chosen by the project's `crossOrigin` option:
// - same origin (project `client`): the static server forwards /api/ to idem-server, so the
//   SDK's endpoint is '/api/checkout'. The forwarder closes a connection unanswered when
//   idem-server does (tests/e2e/serve.mjs), so a lost response stays a lost response.
// - cross origin (project `client-cross-origin`): the page on its own port, the SDK sending to
//   idem-server's port, allowed by `--cors-origin`: Chromium preflights every checkout and can
//   read Retry-After and Idempotent-Replayed only because idem-server exposes them.
import { test as base, expect, type Page } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openClientAt } from './harness';

export { expect };

/** idem-server's binary: IDEM_SERVER_BIN, else the dev-profile build the native tier's tests run
 * (`make build-native`, a step of `make test-e2e`), so `make test` compiles the server's
 * dependencies once, not again for the server profile. The specs check behaviour, not speed;
 * the timing projects' figures are taken against `make server`'s optimised build:
 * IDEM_SERVER_BIN=target/server/idem-server. */
export const SERVER_BIN =
  process.env.IDEM_SERVER_BIN ?? join(process.env.CARGO_TARGET_DIR ?? 'target', 'debug', 'idem-server');

/** One store event (or demo note) of the tenant's stream, as GET /api/events sends it. */
export type StoreEvent = { seq: number; at: number; scope: string; key: string | null; kind: { type: string; [k: string]: unknown } };
/** One PayCo ledger row, as GET /api/demo/ledger relays it. */
export type LedgerRow = { id: number; key: string; order: number; amount: number; outcome: 'charged' | 'declined' };

export type RealServer = {
  /** The test page's origin: page.goto paths resolve against it. */
  pageOrigin: string;
  /** idem-server's own URL. */
  api: string;
  /** The URL the SDK sends checkouts to, from the page's point of view. */
  endpoint: string;
  /** This test's tenant: a fresh demo session (`demo-<uuid>`). */
  token: string;
  /** The headers the SDK sends (the tenant's bearer token). */
  headers: Record<string, string>;
  /** Arms faults for this tenant (PUT /api/demo/faults). */
  arm(faults: object[]): Promise<void>;
  /** PayCo's ledger rows of this tenant's orders. */
  ledger(): Promise<LedgerRow[]>;
  /** `charged` ledger rows per order, as {order: count}. */
  chargesPerOrder(): Promise<Record<number, number>>;
  /** The tenant's orders. */
  orders(): Promise<Array<{ id: number; key: string; status: string }>>;
  /** The tenant's events so far (its stream, read until it goes quiet). */
  events(): Promise<StoreEvent[]>;
  /** Opens `path` (default the plain SDK page) and gives it `window.sdk`, an IdempotentClient
   * sending to this server with `options`, and `window.attempt(promise)`. */
  open(page: Page, options?: object, path?: string): Promise<void>;
};

export type Running = { child: ChildProcess; url: string };

/** Starts `command args`, which prints `... http://ADDR...` on its first stdout line. */
async function start(command: string, args: string[], what: string): Promise<Running> {
  const child = spawn(command, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? 'warn' },
  });
  const stderr: string[] = [];
  child.stderr!.on('data', (chunk) => stderr.push(String(chunk)));
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not start in 30 s: ${stderr.join('')}`)), 30_000);
    child.once('exit', (code) => reject(new Error(`${what} exited (${code}): ${stderr.join('')}`)));
    lines.once('line', (line) => {
      clearTimeout(timer);
      const found = line.match(/http:\/\/[^\s/]+/);
      found ? resolve(found[0]) : reject(new Error(`${what}: no address in ${line}`));
    });
  });
  // Keep draining stdout so the child never blocks on a full pipe.
  lines.on('line', () => {});
  return { child, url };
}

export async function stop(running: Running | undefined) {
  // Gone already (exited, or killed by a test): nothing to wait for.
  if (!running || running.child.exitCode !== null || running.child.signalCode !== null) return;
  const exited = new Promise((resolve) => running.child.once('exit', resolve));
  running.child.kill('SIGKILL');
  await exited;
}

/** Reads an SSE response until it has been quiet for `quietMs` (or `maxMs` passed). */
async function readEvents(response: Response, quietMs = 400, maxMs = 5_000): Promise<StoreEvent[]> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const deadline = Date.now() + maxMs;
  for (;;) {
    const left = Math.min(quietMs, deadline - Date.now());
    if (left <= 0) break;
    const chunk = await Promise.race([
      reader.read(),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), left)),
    ]);
    if (chunk === null || chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  await reader.cancel().catch(() => {});
  return text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice('data: '.length)));
}

/** PayCo and idem-server (demo faults on, `lockMs` leases, CORS for `corsOrigins`, then `extra`
 * arguments) on free ports of 127.0.0.1, each on a fresh SQLite file in `dir`; `running` gets
 * both, to stop. */
export async function startIdem(dir: string, lockMs: number, corsOrigins: string[], running: Running[], extra: string[] = []): Promise<Running> {
  const payco = await start(SERVER_BIN, ['payco', '--listen', '127.0.0.1:0', '--database', `sqlite:${join(dir, 'payco.db')}`], 'payco');
  running.push(payco);
  const api = await startCheckout(dir, lockMs, corsOrigins, payco.url, '127.0.0.1:0', extra);
  running.push(api);
  return api;
}

/** idem-server's checkout on `listen`, its SQLite file in `dir` (the same file again after a
 * restart), against PayCo at `payco`, with `extra` arguments. */
export function startCheckout(dir: string, lockMs: number, corsOrigins: string[], payco: string, listen: string, extra: string[] = []): Promise<Running> {
  return start(
    SERVER_BIN,
    [
      'serve', '--listen', listen, '--database', `sqlite:${join(dir, 'checkout.db')}`,
      '--payco', payco, '--demo-faults', '--lock-ms', String(lockMs),
      ...corsOrigins.flatMap((origin) => ['--cors-origin', origin]),
      ...extra,
    ],
    'idem-server',
  );
}

/** What a tenant can read of idem-server (as `token`): its PayCo ledger, orders and events. */
export function tenantViews(api: string, token: string) {
  const headers = { Authorization: `Bearer ${token}` };
  const get = async (path: string) => {
    const response = await fetch(`${api}${path}`, { headers });
    expect(response.status, `GET ${path}`).toBe(200);
    return response.json();
  };
  return {
    ledger: (): Promise<LedgerRow[]> => get('/api/demo/ledger'),
    async chargesPerOrder(): Promise<Record<number, number>> {
      const counts: Record<number, number> = {};
      for (const row of await get('/api/demo/ledger')) {
        if (row.outcome === 'charged') counts[row.order] = (counts[row.order] ?? 0) + 1;
      }
      return counts;
    },
    orders: (): Promise<Array<{ id: number; key: string; status: string }>> => get('/api/orders'),
    faults: (): Promise<object[]> => get('/api/demo/faults'),
    async events(): Promise<StoreEvent[]> {
      const response = await fetch(`${api}/api/events`, { headers });
      expect(response.status).toBe(200);
      return readEvents(response);
    },
  };
}

/** The options a project sets (`use: { crossOrigin: true }`), or a spec (`test.use({ serverArgs })`:
 * more arguments for idem-server's `serve`). */
export type RealServerOptions = { crossOrigin: boolean; lockMs: number; serverArgs: string[] };

export const test = base.extend<RealServerOptions & { idem: RealServer }>({
  crossOrigin: [false, { option: true }],
  // A claim's lease: short, so a crashed worker's claim goes stale within the test.
  lockMs: [3_000, { option: true }],
  serverArgs: [[], { option: true }],
  idem: async ({ crossOrigin, lockMs, serverArgs }, use) => {
    const dir = mkdtempSync(join(tmpdir(), 'idem-e2e-'));
    const running: Running[] = [];
    try {
      const serve = (cors: string[]) => startIdem(dir, lockMs, cors, running, serverArgs);
      const pages = (extra: string[]) =>
        start('node', ['tests/e2e/serve.mjs', '0', '/pkg=target/sdk-pkg', '/examples/checkout/idem-client=target/sdk-pkg', '/examples=examples', '/=tests/e2e/pages', ...extra], 'page server');
      let api: Running;
      let site: Running;
      if (crossOrigin) {
        site = await pages([]);
        running.push(site);
        api = await serve([site.url]);
      } else {
        api = await serve([]);
        site = await pages([`/api=${api.url}`]);
        running.push(site);
      }
      const token = `demo-${randomUUID()}`;
      const headers = { Authorization: `Bearer ${token}` };
      const views = tenantViews(api.url, token);
      const idem: RealServer = {
        pageOrigin: site.url,
        api: api.url,
        endpoint: crossOrigin ? `${api.url}/api/checkout` : '/api/checkout',
        token,
        headers,
        async arm(faults) {
          const response = await fetch(`${api.url}/api/demo/faults`, {
            method: 'PUT',
            headers: { ...headers, 'Content-Type': 'application/json' },
            body: JSON.stringify(faults),
          });
          expect(response.status, await response.clone().text()).toBe(200);
        },
        ledger: views.ledger,
        chargesPerOrder: views.chargesPerOrder,
        orders: views.orders,
        events: views.events,
        async open(page, options = {}, path = '/client/') {
          await openClientAt(page, `${site.url}${path}`, idem.endpoint, { headers, ...options });
        },
      };
      await use(idem);
    } finally {
      for (const r of running.reverse()) await stop(r);
      rmSync(dir, { recursive: true, force: true });
    }
  },
});

/** `sdk.submit(name, payload)` in `page`, its rejection as `{ error: code }`. */
export function submit(page: Page, name: string, payload: object): Promise<any> {
  return page.evaluate(
    ([name, payload]) => (window as any).attempt((window as any).sdk.submit(name, payload)),
    [name, payload] as const,
  );
}

/** The claim table's events of `key` (demo mode's notes left out), by type, in order. */
export function kindsOf(events: StoreEvent[], key: string): string[] {
  return events.filter((e) => e.key === key && e.kind.type !== 'note').map((e) => e.kind.type);
}

/** How many times each event type appears for `key`. */
export function countKinds(events: StoreEvent[], key: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const kind of kindsOf(events, key)) counts[kind] = (counts[kind] ?? 0) + 1;
  return counts;
}
