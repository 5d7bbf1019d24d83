import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import type { Attestation } from '../../lib/model/entities.ts';
import type { Store } from '../../lib/ports/store.ts';
import { ATTESTATIONS_READ_WHOLE } from '../../lib/store/releases.ts';
import { makeService } from '../../lib/store/entities.ts';
import { dynamoClient } from '../../lib/store/table.ts';
import { Api, deploymentYaml, startEnv, type Env } from '../support/harness.ts';
import { cubAt } from '../support/cli.ts';

// The gates weigh the attestations naming each changed Unit with the content a Release of the change
// bundles: read by Unit and content (cover entries), not as every attestation the Space ever had.
let env: Env;
let alice: Api;
let store: Store;
const client = dynamoClient(inject('dynamoEndpoint'));
let stg: { SpaceID: string };
let app: { UnitID: string; DataHash: string; HeadRevisionNum: number };

beforeAll(async () => {
  env = await startEnv();
  store = env.deps.store;
  expect(
    (
      await env.api.post('/variant/upload', {
        Component: 'ac',
        Variant: 'base',
        Units: [
          { Slug: 'app', Data: deploymentYaml('app') },
          { Slug: 'api', Data: deploymentYaml('api') },
        ],
      })
    ).status,
  ).toBe(201);
  await env.api.post('/variant', { Name: 'stg', UpstreamSpaceID: 'ac-base', Stage: 'Staging', Namespace: 'stg' });
  await env.api.post('/variant', { Name: 'prd', UpstreamSpaceID: 'ac-base', Stage: 'Production', Namespace: 'prd' });
  const wf = await env.api.post('/space/ac-base/change_workflow', {
    Slug: 'w',
    Stages: [
      { Name: 'staging', WhereSpace: "Labels.Stage = 'Staging' AND Slug LIKE 'ac-%'" },
      { Name: 'prod', WhereSpace: "Labels.Stage = 'Production' AND Slug LIKE 'ac-%'", Prerequisites: ['reviewed'] },
    ],
    AttestationPrerequisites: [{ Name: 'reviewed', Count: 1 }],
  });
  expect(wf.status, wf.text).toBe(201);
  await env.api.post('/space/ac-base/function/invoke', { FunctionName: 'set-replicas', Arguments: ['2'] });
  expect(
    (await env.api.post('/space/ac-base/change_order', { Slug: 'scale', ChangeWorkflowID: 'ac-base/w' })).status,
  ).toBe(201);
  expect((await env.api.post('/promote', { ChangeOrderID: 'ac-base/scale' })).status).toBe(200);
  const made = await env.api.post('/user', { Slug: 'alice', Role: 'Member' });
  expect(made.status, made.text).toBe(201);
  alice = new Api(env.url, made.body.Token);
  stg = (await env.api.get('/space/ac-stg')).body;
  app = (await env.api.get('/space/ac-stg/unit/app')).body;
});
afterAll(async () => {
  await env.close();
  client.destroy();
});

/** The cover entries stored for a Unit: which attestations name it, with what content. */
async function coversOf(unitId: string): Promise<{ AttestationID: string; DataHash: string }[]> {
  const r = await client.send(
    new QueryCommand({
      TableName: env.table,
      KeyConditionExpression: 'pk = :p AND begins_with(sk, :s)',
      ExpressionAttributeValues: { ':p': { S: `$baton#UnitID_${unitId}` }, ':s': { S: '$attestationcover_1#' } },
    }),
  );
  return (r.Items ?? []).map((i) => ({ AttestationID: i.AttestationID!.S!, DataHash: i.DataHash!.S! }));
}
const reviewed = async () => {
  const r = await env.api.get('/space/ac-base/change_order/scale/explain');
  expect(r.status, r.text).toBe(200);
  return r.body.Gates.find((g: { Prerequisite: string }) => g.Prerequisite === 'reviewed');
};
/** Whether any read of the Space's attestations whole was made while `f` ran. */
async function readsWhole(f: () => Promise<unknown>): Promise<{ whole: boolean; naming: unknown[][] }> {
  const whole = vi.spyOn(store, 'listInSpace');
  const naming = vi.spyOn(store, 'attestationsNaming');
  try {
    await f();
    return {
      whole: whole.mock.calls.some((c) => c[0] === 'Attestation'),
      naming: naming.mock.calls.map((c) => [c[0], c[1], c[2]]),
    };
  } finally {
    whole.mockRestore();
    naming.mockRestore();
  }
}

/** Attestations by the admin of Units outside the change, `n` of them: a Space's history the gates need not read. */
async function history(n: number): Promise<void> {
  const at = new Date().toISOString();
  const made = Array.from({ length: n }, (): Attestation => {
    const id = randomUUID();
    return {
      OrganizationID: env.api.caller!.OrganizationID,
      SpaceID: stg.SpaceID,
      AttestationID: id,
      Slug: id,
      Labels: {},
      Annotations: {},
      UserID: env.api.caller!.UserID,
      Type: 'Approval',
      Result: 'Pass',
      Claims: {},
      Revisions: [{ UnitID: randomUUID(), RevisionNum: 1, DataHash: 'c'.repeat(64) }],
      CreatedAt: at,
      UpdatedAt: at,
      Version: 1,
    } as Attestation;
  });
  for (let i = 0; i < made.length; i += 25)
    await store.transact(
      made.slice(i, i + 25).map((item) => ({ op: 'create' as const, kind: 'Attestation' as const, item })),
    );
}

describe('the attestations a gate weighs', () => {
  it('are read in one request where a Space has few: other content is not counted, and explaining says so', async () => {
    // An approval of other content (the revision before the change): each Unit named with that content.
    const other = await alice.post('/attest', {
      Spaces: ['ac-stg'],
      All: true,
      Revision: String(app.HeadRevisionNum - 1),
    });
    expect(other.status, other.text).toBe(201);
    const otherId = other.body.Attestations[0].AttestationID as string;
    expect((await coversOf(app.UnitID)).map((c) => c.AttestationID)).toEqual([otherId]);
    expect((await coversOf(app.UnitID))[0]!.DataHash).not.toBe(app.DataHash);
    const read = await readsWhole(async () =>
      expect(await reviewed()).toMatchObject({
        Satisfied: false,
        Evidence: {
          Units: [
            { Unit: 'api', Counted: [], Excluded: [{ User: 'alice', Why: 'attests other content of this Unit' }] },
            { Unit: 'app' },
          ],
        },
      }),
    );
    // One query of the Space's attestations (not listed whole page after page).
    expect(read.whole).toBe(false);
    expect(read.naming).toHaveLength(1);
  });

  it('are read by Unit and content where a Space has many', async () => {
    await history(ATTESTATIONS_READ_WHOLE);
    // The explanation reads the changed Units' covers of any content (to say which attest other content), never the Space's.
    let gate:
      | {
          Satisfied: boolean;
          Evidence: { Units: { Unit: string; Counted: string[]; Excluded: { User: string; Why: string }[] }[] };
        }
      | undefined;
    const explained = await readsWhole(async () => (gate = await reviewed()));
    expect(explained.whole).toBe(false);
    expect(explained.naming).toHaveLength(1);
    expect(explained.naming[0]![2]).toEqual({ anyContent: true });
    expect(gate!.Satisfied).toBe(false);
    expect(gate!.Evidence.Units.find((u) => u.Unit === 'app')).toMatchObject({
      Counted: [],
      Excluded: [{ User: 'alice', Why: 'attests other content of this Unit' }],
    });
    // A promotion reads the covers of the content it weighs alone, and is refused.
    const refused = await readsWhole(async () => {
      const r = await env.api.post('/promote', { ChangeOrderID: 'ac-base/scale' });
      expect(r.status).toBe(409);
      expect(r.body.Message).toContain('api revision');
    });
    expect(refused.whole).toBe(false);
    expect(refused.naming[0]![1]).toContainEqual({ UnitID: app.UnitID, DataHash: app.DataHash });
    expect((refused.naming[0]![2] as { anyContent?: boolean }).anyContent).toBeFalsy();
  });

  it('count an approval of the change, and stop counting it once revoked', async () => {
    const ok = await alice.post('/attest', { ChangeOrderID: 'ac-base/scale', Stage: 'staging', All: true });
    expect(ok.status, ok.text).toBe(201);
    const id = ok.body.Attestations[0].AttestationID as string;
    expect(await coversOf(app.UnitID)).toContainEqual({ AttestationID: id, DataHash: app.DataHash });
    const counted = await readsWhole(async () =>
      expect(await reviewed()).toMatchObject({
        Satisfied: true,
        Evidence: {
          Units: [
            { Unit: 'api', Counted: ['alice'] },
            { Unit: 'app', Counted: ['alice'] },
          ],
        },
      }),
    );
    expect(counted.whole).toBe(false);
    // Through cub as well: the dry run's gates open.
    const dry = await cubAt(
      env.url,
      env.api.token!,
    )(['variant', 'promote', '--change-order', 'ac-base/scale', '--dry-run', '-o', 'json']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(JSON.parse(dry.stdout).Gates).toContainEqual(
      expect.objectContaining({ Prerequisite: 'reviewed', Satisfied: true }),
    );
    // Revoked (its revocation marks it, read with it by key): not counted.
    const revocation = await alice.post(`/space/ac-stg/attestation/${id}/revoke`, {});
    expect(revocation.status, revocation.text).toBe(201);
    const excluded = expect.arrayContaining([{ User: 'alice', Why: `revoked by ${revocation.body.AttestationID}` }]);
    expect(await reviewed()).toMatchObject({
      Satisfied: false,
      Evidence: {
        Units: [
          { Unit: 'api', Counted: [], Excluded: excluded },
          { Unit: 'app', Counted: [], Excluded: excluded },
        ],
      },
    });
    expect((await env.api.post('/promote', { ChangeOrderID: 'ac-base/scale' })).status).toBe(409);
  });

  it('pass over a cover whose attestation never landed', async () => {
    // A cover written for an attestation whose transaction failed: nothing to count.
    const svc = makeService(client, env.table);
    await svc.entities.AttestationCover.put({
      UnitID: app.UnitID,
      DataHash: app.DataHash,
      AttestationID: randomUUID(),
      SpaceID: stg.SpaceID,
    }).go();
    expect(await reviewed()).toMatchObject({ Satisfied: false });
  });

  it('are written for every Unit an attestation names, past what one transaction holds', async () => {
    const revisions = Array.from({ length: 130 }, (_, i) => ({
      UnitID: `unit-${String(i).padStart(3, '0')}-${randomUUID()}`,
      RevisionNum: 1,
      DataHash: 'a'.repeat(64),
    }));
    const at = new Date().toISOString();
    const a: Attestation = {
      OrganizationID: env.api.caller!.OrganizationID,
      SpaceID: stg.SpaceID,
      AttestationID: randomUUID(),
      Slug: 'many',
      Labels: {},
      Annotations: {},
      UserID: env.api.caller!.UserID,
      Type: 'Approval',
      Result: 'Pass',
      Claims: {},
      Revisions: revisions,
      CreatedAt: at,
      UpdatedAt: at,
      Version: 1,
    } as Attestation;
    await store.transact([{ op: 'create', kind: 'Attestation', item: a }]);
    for (const r of [revisions[0]!, revisions[77]!, revisions[129]!])
      expect(await coversOf(r.UnitID)).toEqual([{ AttestationID: a.AttestationID, DataHash: r.DataHash }]);
    const found = await store.attestationsNaming(stg.SpaceID, [
      { UnitID: revisions[100]!.UnitID, DataHash: 'a'.repeat(64) },
    ]);
    expect(found.map((x) => x.AttestationID)).toEqual([a.AttestationID]);
    expect(
      await store.attestationsNaming(stg.SpaceID, [{ UnitID: revisions[100]!.UnitID, DataHash: 'b'.repeat(64) }]),
    ).toEqual([]);
  });
});
