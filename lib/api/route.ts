import type { z } from 'zod';
import type { Caller, Space, SpaceVerb } from '../model/entities.ts';
import type { Deps } from '../ports/deps.ts';

/** What an operation answers: JSON, or text (unit data) with its content type. */
export interface Reply {
  status?: number;
  body?: unknown;
  text?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

/** The request an operation sees, already validated (and what was sent, for a route that verifies a signature). */
export interface RouteRequest<Q, B> {
  deps: Deps;
  caller: Caller;
  params: Record<string, string>;
  query: Q;
  body: B;
  raw: { body: string; headers: Record<string, string | undefined> };
  /**
   * On a `/space/{space_id}/…` route, the Space it names, as the access check found it (read once per request);
   * on any other route there is none, and reading it is a bug in the route.
   */
  space: Space;
}

/**
 * What a route needs of its caller, checked before it runs (lib/api/access.ts). On a route with a
 * `{space_id}`, a verb in that Space (default: View to GET, Edit otherwise). On one without, `Member`
 * (any role but Viewer; the default for writes), `Admin`, `Anyone` (the default for reads), or
 * `ReportStatus` (the only thing a service token may do; the operation checks each Space it writes).
 */
export type Access = SpaceVerb | 'Member' | 'Admin' | 'Anyone';

/** One route: method, path (API Gateway syntax), the request schemas, and the operation. */
export interface Route<Q = unknown, B = unknown> {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  /** A short name, used for the Lambda's route key and logs. */
  name: string;
  query: z.ZodType<Q>;
  body: z.ZodType<B>;
  access?: Access;
  /** What it answers (200, 201, 207), where lib/api/answers.ts declares it: in the OpenAPI document, and parsed by the tests. */
  answer?: z.ZodType;
  /** The request may run on as a job (`Async`, or past the job threshold): 202 with `JobAccepted`. */
  runsAsJob?: true;
  /** The largest request body the route takes, in bytes (MAX_BODY when unset): a larger one is 413 before it is read whole. */
  maxBody?: number;
  handle(req: RouteRequest<Q, B>): Promise<Reply>;
}

/** A route open without a token: it reads nothing of anyone's (the API's own contract). */
export interface PublicRoute {
  method: 'GET';
  path: string;
  name: string;
  summary: string;
  handle(): Promise<Reply>;
}

/** The largest request body any route takes: a Unit's Data (6 MB) and its JSON envelope. */
export const MAX_BODY = 7 * 1024 * 1024;
/** What a deploy-tool hook may post: EventBridge's event size limit. */
export const MAX_HOOK_BODY = 256 * 1024;

/** Declares a route with its types inferred from its schemas. */
export function route<Q, B>(r: Route<Q, B>): Route<Q, B> {
  return r;
}

/** A list reply: the items, and the next page's token as a header. */
export function listReply<T>(p: { items: T[]; continueToken?: string }): Reply {
  return { body: p.items, headers: p.continueToken ? { 'x-continue': p.continueToken } : undefined };
}
