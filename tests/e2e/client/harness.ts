// What the specs against the scripted server (idempotency-server.mjs) share: a page with an SDK
// client of its own options, and the server's log. The specs against idem-server use
// real-server.ts instead.
import { expect, type APIRequestContext, type Page } from '@playwright/test';
import { API } from './api';

export type Logged = { path: string; key: string | undefined; body: string; at: number };
export type Log = { requests: Logged[] };

/** Forgets what the server saw. */
export async function resetServer(request: APIRequestContext) {
  expect((await request.post(`${API}/control/reset`)).ok()).toBe(true);
}

/** What the server saw, `path` requests only. */
export async function serverLog(request: APIRequestContext, path: string): Promise<Log> {
  const log: Log = await (await request.get(`${API}/control/log`)).json();
  return { requests: log.requests.filter((r) => r.path === path) };
}

/**
 * Opens the plain SDK page and gives it `window.sdk`, an IdempotentClient sending to `endpoint`
 * on the scripted server, and `window.attempt(promise)`, which turns a rejection into
 * `{ error: code }` so specs can read it.
 */
export async function openClient(page: Page, endpoint: string, options: object = {}) {
  await openClientAt(page, '/client/', `${API}${endpoint}`, options);
}

/** The same on the page at `pageUrl`, sending to the full URL `endpoint` (the real server's). */
export async function openClientAt(page: Page, pageUrl: string, endpoint: string, options: object = {}) {
  await page.goto(pageUrl);
  await page.waitForFunction(() => (window as any).idemReady === true);
  await page.evaluate(
    async ([endpoint, options]) => {
      // The page loaded and initialised the package; importing it again gives that module.
      const { IdempotentClient } = await import('/pkg/idem_client.js' as string);
      (window as any).sdk = new IdempotentClient({ endpoint, ...options });
      (window as any).attempt = (promise: Promise<unknown>) =>
        promise.then(
          (value) => value,
          (e: any) => ({ error: e.code ?? e.name, message: e.message }),
        );
    },
    [endpoint, options] as const,
  );
}

/** `sdk.submit(name, payload)` in `page`, now. */
export function submit(page: Page, name: string, payload: object): Promise<any> {
  return page.evaluate(
    ([name, payload]) => (window as any).attempt((window as any).sdk.submit(name, payload)),
    [name, payload] as const,
  );
}
