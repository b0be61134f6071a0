#!/usr/bin/env node
// A tiny dependency-free static server for dist/ (npm start), also used by the tests.
//
//   node scripts/serve.mjs [--port 8080] [--root dist]
//
// It serves files only (no directory listings), refuses paths outside its root, and
// binds to 127.0.0.1 unless --host is given.

import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.pb': 'application/octet-stream',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * Starts serving `root`; `mounts` maps URL prefixes ('/extra/') to more folders.
 * Resolves to {server, url}.
 */
export function serve({ root, port = 0, host = '127.0.0.1', mounts = {}, quiet = true } = {}) {
  const base = resolve(root);
  const server = createServer((req, res) => {
    let path;
    try {
      path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    } catch {
      res.writeHead(400).end('bad request');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    let dir = base;
    let rel = path;
    for (const [prefix, folder] of Object.entries(mounts)) {
      if (path.startsWith(prefix)) {
        dir = resolve(folder);
        rel = path.slice(prefix.length - 1);
        break;
      }
    }
    if (rel.endsWith('/')) rel += 'index.html';
    const file = normalize(join(dir, rel));
    if (file !== dir && !file.startsWith(dir + sep)) {
      res.writeHead(403).end('forbidden');
      return;
    }
    let st;
    try {
      st = statSync(file);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    if (!st.isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, {
      'content-type': TYPES[extname(file).toLowerCase()] || 'application/octet-stream',
      'content-length': st.size,
      'cache-control': 'no-cache',
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
    });
    if (req.method === 'HEAD') return res.end();
    createReadStream(file).pipe(res);
    if (!quiet) console.log(`${req.method} ${path}`);
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      const a = server.address();
      ok({ server, url: `http://${host.includes(':') ? `[${host}]` : host}:${a.port}/` });
    });
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] || '').href) {
  const args = process.argv.slice(2);
  const opt = (name, dflt) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 && args[i + 1] ? args[i + 1] : dflt;
  };
  const here = dirname(fileURLToPath(import.meta.url));
  const root = resolve(here, '..', opt('root', 'dist'));
  const port = Number(opt('port', process.env.PORT || 8080));
  const host = opt('host', '127.0.0.1');
  try {
    statSync(join(root, 'index.html'));
  } catch {
    console.error(`${root}/index.html is missing: run npm run build first`);
    process.exit(1);
  }
  serve({ root, port, host, quiet: false }).then(
    ({ url }) => console.log(`oomlens is served at ${url} (Ctrl-C to stop)`),
    (e) => {
      console.error(`cannot serve on ${host}:${port}: ${e.message}; pick another with --port`);
      process.exit(1);
    },
  );
}
