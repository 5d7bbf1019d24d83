/**
 * The API's contract as OpenAPI 3.1, generated from the route table and the zod schemas each route
 * validates with, so the document and the server cannot disagree. Served at `GET /openapi.json`
 * without a token and written to docs/reference/openapi.json (`npm run docs`).
 */
import { z } from 'zod';
import { createDocument } from 'zod-openapi';
import { JobAccepted } from './answers.ts';
import type { Route } from './route.ts';

const ErrorBody = z
  .object({ Code: z.string(), Message: z.string() })
  .meta({ id: 'Error', description: 'Every error answer: what went wrong, naming the field or entity' });

const STATUS_TEXT: Record<string, string> = {
  '400': 'The request is not valid (the message names what is wrong); nothing was written',
  '401': 'No token, or one that is unknown, expired or revoked',
  '403': "The caller's role or grants do not allow this",
  '404': 'Something the request names does not exist (or is not visible to the caller)',
  '409': 'A conflict: a changed Version, a taken slug, or a gate that refused',
  '413': 'The request body is too large',
};

/** Path parameters of an API Gateway path (`/space/{space_id}`). */
function pathParams(path: string): z.ZodObject | undefined {
  const names = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  return names.length ? z.object(Object.fromEntries(names.map((n) => [n, z.string()]))) : undefined;
}

/** The OpenAPI 3.1 document for routes (the authorized ones need a bearer token). */
export function openApiDocument(
  routes: Route[],
  open: { method: string; path: string; name: string; summary: string }[],
): ReturnType<typeof createDocument> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const params = pathParams(r.path);
    const takesBody = !(r.body instanceof z.ZodUndefined);
    (paths[r.path] ??= {})[r.method.toLowerCase()] = {
      operationId: r.name,
      summary: r.name,
      requestParams: {
        ...(params ? { path: params } : {}),
        ...(r.query instanceof z.ZodObject ? { query: r.query } : {}),
      },
      ...(takesBody ? { requestBody: { content: { 'application/json': { schema: r.body } } } } : {}),
      responses: {
        '200': {
          description: 'Done: the entity, list or result',
          ...(r.answer ? { content: { 'application/json': { schema: r.answer } } } : {}),
        },
        ...(r.runsAsJob
          ? {
              '202': {
                description: 'Runs on as a job: follow it at the Location header (GET /job/{job_id})',
                content: { 'application/json': { schema: JobAccepted } },
              },
            }
          : {}),
        ...Object.fromEntries(
          Object.entries(STATUS_TEXT).map(([code, description]) => [
            code,
            { description, content: { 'application/json': { schema: ErrorBody } } },
          ]),
        ),
      },
    };
  }
  for (const r of open)
    (paths[r.path] ??= {})[r.method.toLowerCase()] = {
      operationId: r.name,
      summary: r.summary,
      security: [],
      responses: { '200': { description: r.summary } },
    };
  return createDocument(
    {
      openapi: '3.1.0',
      info: {
        title: 'Baton',
        version: '0.1.0',
        description: 'Carries one named change through every stage of a rollout, behind gates.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'A Baton API token (cub token create)' },
        },
      },
      security: [{ bearer: [] }],
      paths: paths as never,
    },
    { allowEmptySchema: { custom: true } },
  );
}
