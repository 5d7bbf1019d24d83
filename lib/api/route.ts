import type { z } from 'zod';
import type { Caller, Common } from '../model/entities.ts';
import { Conflict } from '../model/errors.ts';
import type { Deps } from './deps.ts';

/** What an operation answers: JSON, or text (unit data) with its content type. */
export interface Reply {
  status?: number;
  body?: unknown;
  text?: string;
  contentType?: string;
  headers?: Record<string, string>;
}

/** The request an operation sees, already validated. */
export interface RouteRequest<Q, B> {
  deps: Deps;
  caller: Caller;
  params: Record<string, string>;
  query: Q;
  body: B;
}

/** One route: method, path (API Gateway syntax), the request schemas, and the operation. */
export interface Route<Q = any, B = any> {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  /** A short name, used for the Lambda's route key and logs. */
  name: string;
  query: z.ZodType<Q>;
  body: z.ZodType<B>;
  handle(req: RouteRequest<Q, B>): Promise<Reply>;
}

/** Declares a route with its types inferred from its schemas. */
export function route<Q, B>(r: Route<Q, B>): Route<Q, B> {
  return r;
}

/** Applies a JSON merge-patch to a string map: null removes a key. */
export function patchMap(have: Record<string, string>, patch: Record<string, string | null> | undefined): Record<string, string> {
  if (!patch) return have;
  const out = { ...have };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = v;
  }
  return out;
}

/** A list reply: the items, and the next page's token as a header. */
export function listReply<T>(p: { items: T[]; continueToken?: string }): Reply {
  return { body: p.items, headers: p.continueToken ? { 'x-continue': p.continueToken } : undefined };
}

/** The fields every new entity starts with: its organization, slug, display name, labels, times and Version 1. */
export function newEntity(deps: Deps, orgId: string, f: { Slug: string; DisplayName?: string; Labels?: Record<string, string>; Annotations?: Record<string, string> }): Common {
  const now = deps.now().toISOString();
  return { OrganizationID: orgId, Slug: f.Slug, DisplayName: f.DisplayName ?? f.Slug, Labels: f.Labels ?? {}, Annotations: f.Annotations ?? {}, CreatedAt: now, UpdatedAt: now, Version: 1 };
}

/** Refuses an update that carries a Version other than the one stored: the writer read a stale copy. */
export function expectVersion(what: string, have: number, sent: number | undefined): void {
  if (sent !== undefined && sent !== have) throw new Conflict(`${what} is at Version ${have}, not ${sent}; read it again and retry`);
}
