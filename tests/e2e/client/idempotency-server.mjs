// A scripted HTTP server for the SDK's Retry-After specs, on 127.0.0.1 only, with no
// dependencies.
//
//   node tests/e2e/client/idempotency-server.mjs PORT
//
// Why a scripted server and not idem-server: these specs need answers idem's own server never
// gives (its Retry-After is the whole seconds left on a lease: at least 1, at most lock_ms):
// every attempt `409, Retry-After: 0`; a Retry-After as an HTTP-date; a wait past
// setTimeout's limit. Real HTTP on a real socket (not page.route), so the browser's fetch,
// CORS and timers are the real ones. Everything idem-server can produce runs against it
// (real-server.ts).
//
// Routes (CORS open to the test page's origin, which is another port):
//   POST /api/always-409?retryAfter=V  every attempt: 409 with Retry-After: V (verbatim).
//   POST /api/retry-at?seconds=S    per key: the first attempt 409 with Retry-After as an
//                                   HTTP-date S seconds ahead, the next ones 201.
//   GET  /control/log               {requests: [{path, key, body, at}]}
//   POST /control/reset             forget everything
import { createServer } from 'node:http';

const port = Number(process.argv[2]);
if (!Number.isInteger(port) || port <= 0) {
  console.error('usage: node tests/e2e/client/idempotency-server.mjs PORT');
  process.exit(2);
}

let requests = [];
let retryAt = new Map(); // key -> attempts seen by /api/retry-at

const CORS = {
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, PATCH, PUT, DELETE, GET',
  'access-control-allow-headers': 'content-type, idempotency-key, repeatability-first-sent, authorization',
  // Not CORS-safelisted: the SDK can only read them if they are exposed.
  'access-control-expose-headers': 'retry-after, idempotent-replayed',
  'access-control-max-age': '600',
};

function send(res, status, body, headers = {}) {
  const json = typeof body === 'string' ? body : JSON.stringify(body);
  const type = status >= 400 ? 'application/problem+json' : 'application/json';
  res.writeHead(status, { ...CORS, 'content-type': type, ...headers }).end(json);
}

const problem = (status, title) => ({ type: 'about:blank', title, status });

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

createServer(async (req, res) => {
  try {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method === 'OPTIONS') return res.writeHead(204, CORS).end();
    if (url.pathname === '/control/log') {
      return send(res, 200, { requests });
    }
    if (url.pathname === '/control/reset') {
      requests = [];
      retryAt = new Map();
      return send(res, 200, {});
    }
    const body = await readBody(req);
    const key = req.headers['idempotency-key'];
    requests.push({ path: url.pathname, key, body, at: Date.now() });
    if (url.pathname === '/api/always-409') {
      const retryAfter = url.searchParams.get('retryAfter') ?? '0';
      return send(res, 409, problem(409, 'In flight'), { 'retry-after': retryAfter });
    }
    if (url.pathname === '/api/retry-at') {
      const seen = (retryAt.get(key) ?? 0) + 1;
      retryAt.set(key, seen);
      if (seen > 1) return send(res, 201, { order: 'o-date', key });
      const at = new Date(Date.now() + 1000 * Number(url.searchParams.get('seconds') ?? 3));
      return send(res, 409, problem(409, 'In flight'), { 'retry-after': at.toUTCString() });
    }
    send(res, 404, problem(404, 'Not found'));
  } catch (error) {
    send(res, 500, problem(500, String(error)));
  }
}).listen(port, '127.0.0.1', () => console.log(`idempotency test server on http://127.0.0.1:${port}/`));
