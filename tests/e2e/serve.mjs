// A static file server for the browser tests, on 127.0.0.1 only, with no dependencies.
//
//   node tests/e2e/serve.mjs PORT MOUNT=DIR|URL [MOUNT=DIR|URL ...]
//   node tests/e2e/serve.mjs 4173 /=dist
//   node tests/e2e/serve.mjs 4174 /pkg=target/sdk-pkg /=tests/e2e/pages
//   node tests/e2e/serve.mjs 0 /pkg=target/sdk-pkg /=tests/e2e/pages /api=http://127.0.0.1:8000
//
// Port 0 picks a free port; the first stdout line says which. The longest matching mount wins.
// A path that escapes its folder is a 404, never a read. A mount on an http:// URL forwards the
// requests under it there (path kept, Host rewritten), so a page and its API share one origin;
// when the upstream closes the connection without an answer, so does this proxy (it never
// answers an error of its own, which would turn a lost response into a 5xx: the very case the
// SDK specs show), and a client that goes away aborts the upstream request.
import { createServer, request as forward } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ts': 'text/plain; charset=utf-8',
};

const [portArg, ...mountArgs] = process.argv.slice(2);
const port = Number(portArg);
if (!Number.isInteger(port) || port < 0 || mountArgs.length === 0) {
  console.error('usage: node tests/e2e/serve.mjs PORT MOUNT=DIR|URL [MOUNT=DIR|URL ...]');
  process.exit(2);
}
const mounts = mountArgs
  .map((arg) => {
    const at = arg.indexOf('=');
    if (at < 1) {
      console.error(`bad mount "${arg}": expected MOUNT=DIR`);
      process.exit(2);
    }
    const prefix = arg.slice(0, at).replace(/\/+$/, '') + '/';
    const target = arg.slice(at + 1);
    if (target.startsWith('http://')) return { prefix, upstream: new URL(target) };
    return { prefix, dir: resolve(target) };
  })
  .sort((a, b) => b.prefix.length - a.prefix.length);

const mountFor = (urlPath) =>
  mounts.find((m) => urlPath.startsWith(m.prefix) || urlPath + '/' === m.prefix);

async function fileFor(mount, urlPath) {
  if (!mount) return null;
  const rest = normalize(decodeURIComponent(urlPath.slice(mount.prefix.length - 1)));
  let path = join(mount.dir, rest);
  if (path !== mount.dir && !path.startsWith(mount.dir + sep)) return null;
  const info = await stat(path).catch(() => null);
  if (info?.isDirectory()) path = join(path, 'index.html');
  return path;
}

/** Forwards `req` to `upstream` as it is; the answer back as it is, or no answer at all. */
function proxy(req, res, upstream) {
  const out = forward(
    {
      host: upstream.hostname,
      port: upstream.port,
      method: req.method,
      path: req.url,
      headers: { ...req.headers, host: upstream.host },
      agent: false,
    },
    (answer) => {
      res.writeHead(answer.statusCode, answer.rawHeaders);
      answer.pipe(res);
      answer.on('error', () => res.socket?.destroy());
      answer.on('aborted', () => res.socket?.destroy());
    },
  );
  // The upstream closed (or reset) the connection unanswered: close ours unanswered too.
  out.on('error', () => req.socket.destroy());
  res.on('close', () => {
    if (!res.writableFinished) out.destroy();
  });
  req.pipe(out);
}

const server = createServer(async (req, res) => {
  try {
    const urlPath = new URL(req.url, 'http://127.0.0.1').pathname;
    const mount = mountFor(urlPath);
    if (mount?.upstream) return proxy(req, res, mount.upstream);
    const path = await fileFor(mount, urlPath);
    const body = path && (await readFile(path).catch(() => null));
    if (!body) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res
      .writeHead(200, {
        'content-type': TYPES[extname(path)] ?? 'application/octet-stream',
        'cache-control': 'no-store',
      })
      .end(body);
  } catch (error) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end(String(error));
  }
});
server.listen(port, '127.0.0.1', () =>
  console.log(`serving on http://127.0.0.1:${server.address().port}/`),
);
