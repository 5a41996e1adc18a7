// A static file server for the browser tests, on 127.0.0.1 only, with no dependencies.
//
//   node tests/e2e/serve.mjs PORT MOUNT=DIR [MOUNT=DIR ...]
//   node tests/e2e/serve.mjs 4173 /=dist
//   node tests/e2e/serve.mjs 4174 /pkg=target/sdk-pkg /=tests/e2e/pages
//
// The longest matching mount wins. A path that escapes its folder is a 404, never a read.
import { createServer } from 'node:http';
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
if (!Number.isInteger(port) || port <= 0 || mountArgs.length === 0) {
  console.error('usage: node tests/e2e/serve.mjs PORT MOUNT=DIR [MOUNT=DIR ...]');
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
    return { prefix, dir: resolve(arg.slice(at + 1)) };
  })
  .sort((a, b) => b.prefix.length - a.prefix.length);

async function fileFor(urlPath) {
  const mount = mounts.find((m) => urlPath.startsWith(m.prefix) || urlPath + '/' === m.prefix);
  if (!mount) return null;
  const rest = normalize(decodeURIComponent(urlPath.slice(mount.prefix.length - 1)));
  let path = join(mount.dir, rest);
  if (path !== mount.dir && !path.startsWith(mount.dir + sep)) return null;
  const info = await stat(path).catch(() => null);
  if (info?.isDirectory()) path = join(path, 'index.html');
  return path;
}

createServer(async (req, res) => {
  try {
    const urlPath = new URL(req.url, 'http://127.0.0.1').pathname;
    const path = await fileFor(urlPath);
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
}).listen(port, '127.0.0.1', () => console.log(`serving on http://127.0.0.1:${port}/`));
