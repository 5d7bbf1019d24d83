import { describe, expect, it } from 'vitest';
import { answerIssues } from '../../lib/api/handler.ts';
import { openApiDocument } from '../../lib/api/openapi.ts';
import { PUBLIC_ROUTES, ROUTES } from '../../lib/api/routes/index.ts';

/** A ChangeOrder's promotion as the server answers it: one Space, one Unit upgraded. */
const promotion = () => ({
  ChangeOrderID: 'co-1',
  Stage: 'Staging',
  DryRun: false,
  Forced: false,
  Gates: [],
  Spaces: [
    {
      SpaceID: 's-1',
      SpaceSlug: 'acme-staging',
      Action: 'Promote',
      Units: [{ UnitID: 'u-1', UnitSlug: 'deployment', SpaceID: 's-1', Action: 'Upgrade', RevisionNums: [3] }],
    },
  ],
  Landed: 1,
  Total: 1,
});
const issues = (status: number, body: unknown, key = 'POST /promote') =>
  answerIssues(key, status, JSON.stringify(body));

describe('the answers the routes declare', () => {
  it('pass as the server gives them, and name what differs when they do not', () => {
    expect(issues(200, promotion())).toBeUndefined();
    expect(issues(207, promotion())).toBeUndefined();
    // An Invoke ChangeOrder's Units run their Invocation: a promotion's own action.
    const invoked = promotion();
    invoked.Spaces[0]!.Units[0]!.Action = 'Invoke';
    expect(issues(200, invoked)).toBeUndefined();

    const unknownAction = promotion();
    unknownAction.Spaces[0]!.Units[0]!.Action = 'Teleport';
    expect(issues(200, unknownAction)).toMatch(/the 200 answer of POST \/promote/);
    const extra = { ...promotion(), Surprise: true };
    expect(issues(200, extra)).toMatch(/the 200 answer of POST \/promote/);
    const { Landed: _landed, ...missing } = promotion();
    expect(issues(200, missing)).toMatch(/the 200 answer of POST \/promote/);
  });

  it('check a 202 against the job it started, only on a route that may run as a job', () => {
    const job = { JobID: 'j-1', Kind: 'Promote', State: 'Running', Total: 600, Message: 'running as job j-1' };
    expect(issues(202, job)).toBeUndefined();
    expect(issues(202, { ...job, Kind: 'Publish' })).toMatch(/202 answer/);
    // Errors are not answers: their shape is the Error schema's, whatever the route.
    expect(issues(409, { Code: 'Conflict', Message: 'a gate refused' })).toBeUndefined();
    // A route that declares no answer is not checked.
    expect(issues(200, { anything: 1 }, 'GET /space')).toBeUndefined();
  });

  it('are the OpenAPI document’s 200 and 202 schemas', () => {
    const doc = openApiDocument(ROUTES, PUBLIC_ROUTES) as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, { content?: unknown }> }>>;
      components: { schemas: Record<string, { properties?: Record<string, { enum?: string[] }> }> };
    };
    const promote = doc.paths['/promote']!.post!.responses;
    expect(promote['200']!.content).toEqual({
      'application/json': {
        schema: {
          anyOf: [
            { $ref: '#/components/schemas/ChangeOrderPromotion' },
            { $ref: '#/components/schemas/SpacePromotion' },
          ],
        },
      },
    });
    expect(promote['202']!.content).toEqual({
      'application/json': { schema: { $ref: '#/components/schemas/JobAccepted' } },
    });
    expect(doc.components.schemas.PromotedUnit!.properties!.Action!.enum).toEqual([
      'Upgrade',
      'Clone',
      'Mark',
      'Unchanged',
      'Failed',
      'Invoke',
      'Resolve',
    ]);
    // Variant creation runs in the request: no 202.
    expect(doc.paths['/variant']!.post!.responses['202']).toBeUndefined();
  });
});
