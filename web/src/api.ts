// The page's one way to the API: the address and token it was given, and a call that turns a refusal into the server's message.

export const TOKEN_KEY = 'baton.token';

/** Where the API is ('' is this page's own server) and the token the calls carry. */
export const session = { apiUrl: '', token: '' };

/** A ChangeOrder's route. */
export const path = (space: string, slug: string) =>
  `/space/${encodeURIComponent(space)}/change_order/${encodeURIComponent(slug)}`;

/** What the page is served with: the API's address (on AWS) and, from a local server on this machine, its token. */
export interface PageConfig {
  ApiUrl?: string;
  Token?: string;
}
export interface Answer<T> {
  status: number;
  body: T;
}
export interface ErrorBody {
  Code?: string;
  Message?: string;
}
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Calls the API with the token; a 4xx/5xx becomes an ApiError carrying the server's message. */
export async function call<T>(method: string, path: string, body?: unknown): Promise<Answer<T>> {
  const res = await fetch(session.apiUrl + path, {
    method,
    headers: {
      authorization: `Bearer ${session.token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = text ? (JSON.parse(text) as unknown) : undefined;
  if (res.status === 401) {
    localStorage.removeItem(TOKEN_KEY);
    session.token = '';
    throw new ApiError(401, (parsed as ErrorBody | undefined)?.Message ?? 'the token was refused');
  }
  if (res.status >= 400)
    throw new ApiError(
      res.status,
      `HTTP ${res.status}: ${(parsed as ErrorBody | undefined)?.Message ?? res.statusText}`,
    );
  return { status: res.status, body: parsed as T };
}
