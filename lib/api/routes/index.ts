import type { PublicRoute, Route } from '../route.ts';
import { openApiDocument } from '../openapi.ts';
import { spaceEntityRoutes } from './space-entities.ts';
import { spaceRoutes } from './spaces.ts';
import { unitRoutes } from './units.ts';
import { variantRoutes } from './variants.ts';
import { linkRoutes } from './links.ts';
import { unitHistoryRoutes } from './unit-history.ts';
import { releaseRoutes } from './releases.ts';
import { changeRoutes } from './changes.ts';
import { peopleRoutes } from './people.ts';
import { attestationRoutes } from './attestations.ts';
import { jobRoutes } from './jobs.ts';
import { holdRoutes } from './holds.ts';
import { windowRoutes } from './windows.ts';
import { notificationRoutes } from './notifications.ts';

/** The route table: the one list the Lambda handler, the local server and the CDK stack all read. */
export const ROUTES: Route[] = [
  ...spaceRoutes,
  ...unitRoutes,
  ...spaceEntityRoutes,
  ...variantRoutes,
  ...linkRoutes,
  ...unitHistoryRoutes,
  ...releaseRoutes,
  ...changeRoutes,
  ...peopleRoutes,
  ...attestationRoutes,
  ...jobRoutes,
  ...holdRoutes,
  ...windowRoutes,
  ...notificationRoutes,
];

let contract: unknown;
/** The routes open without a token: the API's contract, generated from the route table (once per process). */
export const PUBLIC_ROUTES: PublicRoute[] = [
  {
    method: 'GET',
    path: '/openapi.json',
    name: 'openapi',
    summary: "The API's OpenAPI 3.1 document",
    handle: async () => ({ body: (contract ??= openApiDocument(ROUTES, PUBLIC_ROUTES)) }),
  },
];
