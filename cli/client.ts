import { flag, type Args } from './args.ts';
import { contextNamed } from './contexts.ts';
import { io } from './io.ts';
import { isQuiet } from './output.ts';
import { followJob, type JobAnswer } from './progress.ts';

/** An error answer from the API. */
/** Thrown once a detached job (`--detach`) is named: the command has answered, and exits 0. */
export class Detached extends Error {}

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
  const server = flag(a, 'server') ?? ctx.server ?? io().env.CUB_SERVER ?? current.server ?? 'http://127.0.0.1:4000';
  const token = flag(a, 'token') ?? ctx.token ?? io().env.CUB_TOKEN ?? current.token ?? '';
  return { server: server.replace(/\/$/, ''), token };
}

/** An answer: its status, its JSON body as `T`, its text, and a header reader. */
export interface Answer<T> {
  status: number;
  body: T;
  text: string;
  headers: { get(name: string): string | null };
}

/**
 * One HTTP exchange over node:http (node:https for an https server, loaded only then). Not `fetch`:
 * loading Node's fetch costs a third of cub's start on a small machine (npm run bench:cli).
 */
async function exchange(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<{ status: number; text: string; headers: Record<string, string | string[] | undefined> }> {
  const { request } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        headers: {
          ...headers,
          'accept-encoding': 'gzip',
          ...(body === undefined ? {} : { 'content-length': String(Buffer.byteLength(body)) }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const raw = Buffer.concat(chunks);
          // A large answer comes gzipped (asked for below); zlib is loaded only then.
          const text =
            res.headers['content-encoding'] === 'gzip'
              ? import('node:zlib').then((z) => z.gunzipSync(raw).toString('utf8'))
              : Promise.resolve(raw.toString('utf8'));
          text.then((t) => resolve({ status: res.statusCode ?? 0, text: t, headers: res.headers }), reject);
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** A thin client of the HTTP API: never of the store. */
export class Client {
  constructor(private readonly conn: { server: string; token: string }) {}

  /** One request; `T` is the answer's type (see cli/api.ts), checked by the API, not here. */
  async request<T>(
    method: string,
    path: string,
    opts: { body?: unknown; query?: Record<string, string | undefined> } = {},
  ): Promise<Answer<T>> {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(opts.query ?? {})) if (v !== undefined) qs.set(k, v);
    let url: URL;
    try {
      url = new URL(`${this.conn.server}${path}${qs.size ? `?${qs}` : ''}`);
    } catch {
      throw new ApiError(
        0,
        'BadServer',
        `the server '${this.conn.server}' is not a URL; give --server http://host:port`,
      );
    }
    let res: Awaited<ReturnType<typeof exchange>>;
    try {
      res = await exchange(
        url,
        method,
        {
          authorization: `Bearer ${this.conn.token}`,
          ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        opts.body !== undefined ? JSON.stringify(opts.body) : undefined,
      );
    } catch (e) {
      throw new ApiError(
        0,
        'Unreachable',
        `cannot reach ${this.conn.server} (${(e as Error).message}); is the server running (npm start)?`,
      );
    }
    const header = (name: string) => {
      const v = res.headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    };
    const text = res.text;
    const body: unknown = (header('content-type') ?? '').includes('json') && text ? JSON.parse(text) : undefined;
    if ((res.status < 200 || res.status > 299) && res.status !== 207) {
      const err = (body ?? {}) as { Code?: string; Message?: string };
      throw new ApiError(res.status, err.Code ?? 'Error', err.Message ?? (text || `HTTP ${res.status}`));
    }
    return { status: res.status, body: body as T, text, headers: { get: header } };
  }

  get<T>(path: string, query?: Record<string, string | undefined>) {
    return this.request<T>('GET', path, { query });
  }

  /**
   * The answer a request would have given: a 202 naming a job is followed (a progress bar on a terminal,
   * labelled `label`) until the job ends, and its `Status` and `Result` returned as the answer.
   */
  async settle<T>(answer: Answer<unknown>, label: string, opts: { detach?: boolean } = {}): Promise<Answer<T>> {
    const id = (answer.body as { JobID?: string } | undefined)?.JobID;
    if (answer.status !== 202 || !id) return answer as Answer<T>;
    if (opts.detach) {
      const job = answer.body as { Kind?: string; Total?: number };
      process.stdout.write(
        isQuiet() ? `${id}\n` : `Job ${id} (${job.Kind}) runs on over ${job.Total} space(s): cub job get ${id}\n`,
      );
      throw new Detached();
    }
    const every = Number(io().env.CUB_POLL_MS ?? 500);
    const job = await followJob(
      async (j, brief) =>
        (await this.get<JobAnswer>(`/job/${encodeURIComponent(j)}`, brief ? { brief: 'true' } : undefined)).body,
      id,
      label,
      { every },
    );
    return {
      status: job.Status ?? 200,
      body: job.Result as T,
      text: JSON.stringify(job.Result),
      headers: { get: () => null },
    };
  }
  post<T>(path: string, body?: unknown, query?: Record<string, string | undefined>) {
    return this.request<T>('POST', path, { body, query });
  }
  patch<T>(path: string, body: unknown) {
    return this.request<T>('PATCH', path, { body });
  }
  delete<T>(path: string, query?: Record<string, string | undefined>) {
    return this.request<T>('DELETE', path, { query });
  }
}

/** `a/b` → a path segment-safe pair; a bare slug stays in the given Space. */
export function seg(s: string): string {
  return encodeURIComponent(s);
}
