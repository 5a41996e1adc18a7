// Where the scripted idempotency server (idempotency-server.mjs) listens: the Playwright
// config starts it on this port, the specs send to it.
export const IDEMPOTENCY_PORT = 4175;
export const API = `http://127.0.0.1:${IDEMPOTENCY_PORT}`;
