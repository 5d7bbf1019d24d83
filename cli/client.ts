import { flag, type Args } from './args.ts';
import { contextNamed } from './contexts.ts';

/** An error answer from the API. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Server and token: --server/--token, then the context --context names, then CUB_SERVER/CUB_TOKEN, then the context in use. */
export function connection(a: Args): { server: string; token: string } {
  const named = flag(a, 'context');
  const ctx = named !== undefined ? contextNamed(named) : {};
  const current = named === undefined ? contextNamed(undefined) : {};
  const server = flag(a, 'server') ?? ctx.server ?? process.env.CUB_SERVER ?? current.server ?? 'http://127.0.0.1:4000';
  const token = flag(a, 'token') ?? ctx.token ?? process.env.CUB_TOKEN ?? current.token ?? '';
  return { server: server.replace(/\/$/, ''), token };
}

/** A thin client of the HTTP API: never of the store. */
export class Client {
  constructor(private readonly conn: { server: string; token: string }) {}

  async request(method: string, path: string, opts: { body?: unknown; query?: Record<string, string | undefined> } = {}): Promise<{ status: number; body: any; text: string; headers: Headers }> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) qs.set(k, v);
    const url = `${this.conn.server}${path}${qs.size ? `?${qs}` : ''}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { authorization: `Bearer ${this.conn.token}`, ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
      });
    } catch (e) {
      throw new ApiError(0, 'Unreachable', `cannot reach ${this.conn.server} (${(e as Error).cause ? String((e as { cause: Error }).cause.message) : (e as Error).message}); is the server running (npm start)?`);
    }
    const text = await res.text();
    let body: any;
    if ((res.headers.get('content-type') ?? '').includes('json') && text) body = JSON.parse(text);
    if (!res.ok && res.status !== 207) throw new ApiError(res.status, body?.Code ?? 'Error', body?.Message ?? text ?? res.statusText);
    return { status: res.status, body, text, headers: res.headers };
  }

  get(path: string, query?: Record<string, string | undefined>) {
    return this.request('GET', path, { query });
  }
  post(path: string, body?: unknown, query?: Record<string, string | undefined>) {
    return this.request('POST', path, { body, query });
  }
  patch(path: string, body: unknown) {
    return this.request('PATCH', path, { body });
  }
  delete(path: string, query?: Record<string, string | undefined>) {
    return this.request('DELETE', path, { query });
  }
}

/** `a/b` → a path segment-safe pair; a bare slug stays in the given Space. */
export function seg(s: string): string {
  return encodeURIComponent(s);
}
