import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { authorizeRequest } from '../api/auth.ts';
import { encodeAnswer } from '../api/encoding.ts';
import type { Deps } from '../ports/deps.ts';
import {
  answerIssues,
  bodyLimit,
  errorReply,
  handleApiEvent,
  isPublicRoute,
  matchRoute,
  type ApiEvent,
} from '../api/handler.ts';
import { NotFound, TooLarge, Unauthorized } from '../model/errors.ts';
import { serveUi } from './ui.ts';

/** A running local API. */
export interface LocalServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** The client closed the connection before its request was read whole: nobody is left to answer. */
class ClientGone extends Error {}

/** Reads a request body up to a limit: past it, reading stops and the request is 413 (nothing more is buffered). */
async function readBody(req: IncomingMessage, limit: number): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit)
    throw new TooLarge(
      `the request body is ${Math.ceil(declared / 1024)} KB, more than this route takes (${limit / 1024} KB)`,
    );
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const c of req) {
      size += (c as Buffer).length;
      if (size > limit) throw new TooLarge(`the request body is more than this route takes (${limit / 1024} KB)`);
      chunks.push(c as Buffer);
    }
  } catch (e) {
    if (e instanceof TooLarge) throw e;
    throw new ClientGone();
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Serves the HTTP API on one machine: each request becomes the API Gateway (payload 2.0) event the
 * Lambda would get, after the same authorizer code, and goes to the same handler.
 */
export async function startServer(
  deps: Deps,
  opts: {
    port?: number;
    host?: string;
    uiToken?: () => string | undefined;
    /** Answer 500 where an answer is not what its route's schema says (the tests' servers). */
    checkAnswers?: boolean;
  } = {},
): Promise<LocalServer> {
  const server = createServer(async (req, res) => {
    let result;
    try {
      const url = new URL(req.url ?? '/', 'http://local');
      // The rollout page, served by the API's own server: no other process.
      if (await serveUi(req, res, url.pathname, opts.uiToken)) return;
      const method = (req.method ?? 'GET').toUpperCase();
      const match = matchRoute(method, url.pathname);
      if (!match) throw new NotFound(`no route ${method} ${url.pathname}`);
      if ('allowed' in match) {
        result = {
          statusCode: 405,
          headers: { 'content-type': 'application/json', allow: match.allowed.join(', ') },
          body: JSON.stringify({
            Code: 'MethodNotAllowed',
            Message: `${method} is not allowed on ${url.pathname}; allowed: ${match.allowed.join(', ')}`,
          }),
        };
      } else {
        const headers = Object.fromEntries(
          Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : v]),
        );
        const auth = isPublicRoute(match.routeKey)
          ? { isAuthorized: true, context: undefined }
          : await authorizeRequest(deps.store, headers, deps.now());
        if (!auth.isAuthorized) throw new Unauthorized(('error' in auth ? auth.error : undefined) ?? 'unauthorized');
        const query: Record<string, string> = {};
        url.searchParams.forEach((v, k) => (query[k] = k in query ? `${query[k]},${v}` : v));
        const body = await readBody(req, bodyLimit(match.routeKey));
        const event = {
          version: '2.0',
          routeKey: match.routeKey,
          rawPath: url.pathname,
          rawQueryString: url.search.slice(1),
          headers: headers as Record<string, string>,
          queryStringParameters: Object.keys(query).length ? query : undefined,
          pathParameters: match.params,
          body: body || undefined,
          isBase64Encoded: false,
          requestContext: { authorizer: { lambda: auth.context }, http: { method, path: url.pathname } },
        } as unknown as ApiEvent;
        result = await handleApiEvent(deps, event);
        const issues = opts.checkAnswers
          ? answerIssues(match.routeKey, result.statusCode ?? 200, result.body)
          : undefined;
        if (issues)
          result = {
            statusCode: 500,
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ Code: 'AnswerNotAsDeclared', Message: issues }),
          };
      }
    } catch (e) {
      if (e instanceof ClientGone) return void res.destroy();
      result = errorReply(e);
    }
    // A request refused before its body was read whole: close the connection rather than read the rest.
    if (result.statusCode === 413 && !req.complete) res.setHeader('connection', 'close');
    // Large answers gzipped for a client that accepts it, as the Lambda sends them.
    result = encodeAnswer(result, [req.headers['accept-encoding']].flat().join(','));
    res.writeHead(result.statusCode ?? 200, result.headers as Record<string, string>);
    res.end(result.isBase64Encoded ? Buffer.from(result.body ?? '', 'base64') : (result.body ?? ''));
    if (result.statusCode === 413 && !req.complete) req.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const addr = server.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${addr.port}`,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
