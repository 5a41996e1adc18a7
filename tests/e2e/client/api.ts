// Where the scripted idempotency server (idempotency-server.mjs) listens: the Playwright
// config starts it on this port (tests/e2e/ports.ts: a free one, or IDEM_E2E_PORT_BASE + 2),
// the specs send to it.
import { IDEMPOTENCY_PORT } from '../ports';

export const API = `http://127.0.0.1:${IDEMPOTENCY_PORT}`;
