#!/usr/bin/env node
// A small dependency-free static server for the attnlab page.
//
//   node scripts/serve.mjs            # serves the repo root, prints http://localhost:8080/web/
//   PORT=9000 node scripts/serve.mjs  # another port (if busy, the next free one is used)
//
// Programmatic use (tests, scripts/start.mjs):
//   import { startServer } from './serve.mjs';
//   const { url, port, close } = await startServer({ port: 0, root, quiet: true });
//
// Binds 127.0.0.1 only. Serves files under `root` (default: the repo root), so /web/index.html can
// import ../dist/attnlab.js; `/` redirects to /web/. Never serves anything outside `root`.
// Env (CLI only): PORT, ATTNLAB_ROOT (another root), ATTNLAB_SERVE_LOG=1 (log requests),
// ATTNLAB_SERVE_SYMLINKS=1 (follow symlinks that leave the root; off by default).

import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
export const DEFAULT_ROOT = path.resolve(HERE, '..');
export const DEFAULT_PORT = 8080;
const HOST = '127.0.0.1';
const PORT_TRIES = 20;

export const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.txt': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.ts': 'text/plain; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.woff2': 'font/woff2',
};

export function mimeType(file) {
  return MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
  res.end(body);
}

/** Maps a request path to a file under root, or null when it would leave root. */
export function resolveUnder(root, urlPath) {
  let decoded;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const file = path.resolve(root, '.' + path.posix.normalize('/' + decoded.replace(/\\/g, '/')));
  const rel = path.relative(root, file);
  if (rel.startsWith('..') || path.isAbsolute(rel)) return null;
  return file;
}

function handler(root, log, followSymlinks, isolate) {
  let realRoot;
  try {
    realRoot = fs.realpathSync(root);
  } catch {
    realRoot = root;
  }
  return (req, res) => {
    const started = Date.now();
    res.on('finish', () => log(`${req.method} ${req.url} ${res.statusCode} ${Date.now() - started}ms`));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return send(res, 405, 'method not allowed\n', { Allow: 'GET, HEAD' });
    }
    let pathname;
    try {
      pathname = new URL(req.url, 'http://localhost').pathname;
    } catch {
      return send(res, 400, 'bad request\n');
    }
    if (pathname === '/') return send(res, 302, 'see /web/\n', { Location: '/web/' });
    const file = resolveUnder(root, pathname);
    if (!file) return send(res, 403, 'forbidden\n');
    fs.stat(file, (err, st) => {
      if (err) return send(res, 404, `not found: ${pathname}\n`);
      if (st.isDirectory()) {
        if (!pathname.endsWith('/')) {
          const u = new URL(req.url, 'http://localhost');
          return send(res, 301, 'moved\n', { Location: pathname + '/' + u.search });
        }
        return serveFile(path.join(file, 'index.html'), pathname);
      }
      return serveFile(file, pathname);
    });
    function serveFile(f, p) {
      // Refuse symlinks that point outside the root.
      fs.realpath(f, (err, real) => {
        if (err) return send(res, 404, `not found: ${p}\n`);
        const rel = path.relative(realRoot, real);
        if (!followSymlinks && (rel.startsWith('..') || path.isAbsolute(rel))) return send(res, 403, 'forbidden\n');
        fs.stat(real, (err2, st) => {
          if (err2 || !st.isFile()) return send(res, 404, `not found: ${p}\n`);
          res.writeHead(200, {
            'Content-Type': mimeType(real),
            'Content-Length': st.size,
            'Cache-Control': 'no-cache',
            'X-Content-Type-Options': 'nosniff',
            // Cross-origin isolation: shared memory, so attnlab runs several threads in the
            // page's worker (README, "Threads"), and finer performance.now(). The page has no
            // cross-origin resources, and works on one thread without these headers.
            ...(isolate ? { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } : {}),
          });
          if (req.method === 'HEAD') return res.end();
          const stream = fs.createReadStream(real);
          stream.on('error', () => res.destroy());
          stream.pipe(res);
        });
      });
    }
  };
}

function listen(server, port) {
  return new Promise((resolve, reject) => {
    const onError = (err) => {
      server.off('listening', onListening);
      reject(err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve(server.address().port);
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, HOST);
  });
}

/**
 * Starts the static server.
 *   isolate: send the cross-origin isolation headers (default true; false shows the page on one thread).
 * @param {{ port?: number, root?: string, quiet?: boolean, followSymlinks?: boolean, isolate?: boolean }} [opts]
 *   port: 0 for an ephemeral port; default PORT env or 8080 (the next ones are tried when busy).
 *   followSymlinks: also serve symlinks that point outside root (default false).
 * @returns {Promise<{ url: string, port: number, close: () => Promise<void> }>}
 */
export async function startServer({ port, root = DEFAULT_ROOT, quiet = false, followSymlinks = false, isolate = true } = {}) {
  root = path.resolve(root);
  if (port == null) port = process.env.PORT ? Number(process.env.PORT) : DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`bad port: ${port}`);
  const log = quiet || !process.env.ATTNLAB_SERVE_LOG ? () => {} : (m) => console.log(m);
  const server = http.createServer(handler(root, log, followSymlinks, isolate));
  server.keepAliveTimeout = 2000;
  let bound;
  for (let i = 0; ; i++) {
    const p = port === 0 ? 0 : port + i;
    try {
      bound = await listen(server, p);
      break;
    } catch (err) {
      if (err.code === 'EADDRINUSE' && port !== 0 && i + 1 < PORT_TRIES && p < 65535) {
        if (!quiet) console.warn(`port ${p} is busy, trying ${p + 1}`);
        continue;
      }
      throw err;
    }
  }
  const url = `http://localhost:${bound}/web/`;
  if (!quiet) console.log(`attnlab page: ${url}  (serving ${root}; Ctrl-C to stop)`);
  const close = () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections?.();
    });
  return { url, port: bound, close };
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (isMain) {
  const root = process.env.ATTNLAB_ROOT ? path.resolve(process.env.ATTNLAB_ROOT) : DEFAULT_ROOT;
  if (!fs.existsSync(path.join(root, 'dist', 'attnlab.js'))) {
    console.warn('note: dist/attnlab.js is missing; run `npm run build` (or `npm start`) so the page can load the binding.');
  }
  const followSymlinks = process.env.ATTNLAB_SERVE_SYMLINKS === '1';
  startServer({ root, followSymlinks }).then(
    ({ close }) => {
      const stop = () => close().then(() => process.exit(0));
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    },
    (err) => {
      console.error(`serve: ${err.message}`);
      process.exit(1);
    },
  );
}
