// Where the scripted idempotency server (idempotency-server.mjs) listens: the Playwright
// config starts it on this port, the specs send to it. IDEM_E2E_PORT_BASE moves every e2e port
// (playwright.config.ts), so two checkouts of the repository can run the specs at once.
export const E2E_PORT_BASE = Number(process.env.IDEM_E2E_PORT_BASE ?? 4173);
export const IDEMPOTENCY_PORT = E2E_PORT_BASE + 2;
export const API = `http://127.0.0.1:${IDEMPOTENCY_PORT}`;
