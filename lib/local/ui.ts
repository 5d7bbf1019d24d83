import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';

/** The rollout page's files, by the path the local server answers them on: nothing else under /ui is served. */
const FILES: Record<string, [file: string, type: string]> = {
  '/ui/': ['index.html', 'text/html; charset=utf-8'],
  '/ui/index.html': ['index.html', 'text/html; charset=utf-8'],
  '/ui/app.css': ['app.css', 'text/css; charset=utf-8'],
  '/ui/dist/app.js': ['dist/app.js', 'text/javascript; charset=utf-8'],
  '/ui/dist/app.js.map': ['dist/app.js.map', 'application/json'],
};

const WEB = fileURLToPath(new URL('../../web/', import.meta.url));

/** The page may load only its own files and talk only to this server; it is never framed. */
const HEADERS = {
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/** Whether a request came to this machine's loopback by name (not a rebound DNS name) from the page itself. */
function fromThisMachine(req: IncomingMessage): boolean {
  const host = (req.headers.host ?? '').replace(/:\d+$/, '');
  const loopback =
    ['127.0.0.1', 'localhost', '[::1]'].includes(host) &&
    ['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(req.socket.remoteAddress ?? '');
  const site = req.headers['sec-fetch-site'];
  return loopback && (site === undefined || site === 'same-origin' || site === 'none');
}

/**
 * Serves the rollout page under /ui (true when it answered). Its config.json tells the page where the API
 * is (here) and, for a browser on this machine asking from the page itself, the token of cub's context
 * (`token()`), so `npm start` then the printed address is all it takes; anyone else pastes a token.
 */
export async function serveUi(
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  token?: () => string | undefined,
): Promise<boolean> {
  if (pathname !== '/ui' && !pathname.startsWith('/ui/')) return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' }).end(
      JSON.stringify({
        Code: 'MethodNotAllowed',
        Message: `${req.method} is not allowed on ${pathname}; allowed: GET, HEAD`,
      }),
    );
    return true;
  }
  if (pathname === '/ui') {
    res.writeHead(308, { location: '/ui/' }).end();
    return true;
  }
  if (pathname === '/ui/config.json') {
    const t = fromThisMachine(req) ? token?.() : undefined;
    res
      .writeHead(200, { ...HEADERS, 'content-type': 'application/json', 'cache-control': 'no-store' })
      .end(JSON.stringify({ ApiUrl: '', ...(t ? { Token: t } : {}) }));
    return true;
  }
  const known = FILES[pathname];
  if (!known) {
    res
      .writeHead(404, { 'content-type': 'application/json' })
      .end(JSON.stringify({ Code: 'NotFound', Message: `no page ${pathname}: the rollout page is at /ui/` }));
    return true;
  }
  try {
    const body = await readFile(WEB + known[0]);
    res.writeHead(200, { ...HEADERS, 'content-type': known[1] }).end(req.method === 'HEAD' ? undefined : body);
  } catch {
    res.writeHead(404, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        Code: 'NotFound',
        Message: `${known[0]} is not built: npm install (or npm run build:web) builds the rollout page`,
      }),
    );
  }
  return true;
}
