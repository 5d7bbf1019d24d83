import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeOrderAbortedDetail, ChangeOrderRestoredDetail } from '../../lib/events/contracts.ts';
import { Api, deploymentYaml, startEnv, type Env } from '../support/harness.ts';

let env: Env;
const deployment = (image: string) => deploymentYaml('acme', { image, namespace: 'acme' });

beforeAll(async () => {
  env = await startEnv();
  await env.api.post('/space', { Slug: 'd-infra' });
  await env.api.post('/space', { Slug: 'd-base' });
  await env.api.post('/space/d-base/unit', { Slug: 'deployment', Data: deployment('ghcr.io/acme/acme:v1') });
  await env.api.post('/space/d-infra/target', { Slug: 't' });
  await env.api.post('/variant', {
    Name: 'prod',
    Slug: 'd-prod',
    UpstreamSpaceID: 'd-base',
    Stage: 'Production',
    ReleaseTargetID: 'd-infra/t',
  });
  await env.api.post('/space/d-base/function/invoke', {
    FunctionName: 'set-image-reference-by-uri',
    Arguments: ['ghcr.io/acme/acme', ':v2'],
    UnitIDs: ['deployment'],
  });
  await env.api.post('/space/d-base/change_order', { Slug: 'v2' });
  expect((await env.api.post('/promote', { ChangeOrderID: 'd-base/v2', Spaces: ['d-prod'] })).status).toBe(200);
  expect((await env.api.post('/space/d-prod/release', { Revision: 'ChangeOrder:d-base/v2' })).status).toBe(201);
});
afterAll(async () => env.close());

describe('abort and demote through the API', () => {
  it('abort is recorded and announced; demote needs Edit; restores are announced per Space; the restore is what Before:ChangeOrder publishes', async () => {
    const unaborted = await env.api.post('/demote', { Space: 'd-prod', ChangeOrderID: 'd-base/v2' });
    expect(unaborted.status).toBe(409);
    const co = (await env.api.get('/space/d-base/change_order/v2')).body;
    const aborted = await env.api.patch('/space/d-base/change_order/v2', {
      Version: co.Version,
      AbortedReason: 'bad image',
    });
    expect(aborted.body).toMatchObject({
      State: 'Aborted',
      AbortedReason: 'bad image',
      AbortedBy: env.api.caller!.UserID,
      AbortedAt: expect.any(String),
    });
    const abortEvent = env.bus.log.find((e) => e.detailType === 'ChangeOrder Aborted')!;
    expect(ChangeOrderAbortedDetail.parse(abortEvent.detail)).toMatchObject({ Slug: 'v2', AbortedReason: 'bad image' });

    // A Viewer may preview, not demote.
    const made = await env.api.post('/user', { Slug: 'viewer', Role: 'Viewer' });
    const viewer = new Api(env.url, made.body.Token);
    expect((await viewer.post('/demote', { Space: 'd-prod', ChangeOrderID: 'd-base/v2', DryRun: true })).status).toBe(
      200,
    );
    expect((await viewer.post('/demote', { Space: 'd-prod', ChangeOrderID: 'd-base/v2' })).body.Message).toBe(
      "Edit permission in space 'd-prod' is needed to demote change order 'v2' there",
    );
    // Bad input is named, and nothing is written.
    expect((await env.api.post('/demote', { Space: 'd-prod' })).status).toBe(400);
    expect((await env.api.post('/demote', { Space: 'nowhere', ChangeOrderID: 'd-base/v2' })).body.Message).toBe(
      "space 'nowhere' not found",
    );

    const r = await env.api.post('/demote', {
      Space: 'd-prod',
      ChangeOrderID: 'd-base/v2',
      ChangeDescription: 'back out v2',
    });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      SpaceSlug: 'd-prod',
      DryRun: false,
      Restored: true,
      Units: [{ UnitSlug: 'deployment', Action: 'Restore', RestoredRevisionNum: 1, RevisionNum: 3 }],
    });
    const restoredEvent = env.bus.log.find((e) => e.detailType === 'ChangeOrder Restored')!;
    expect(ChangeOrderRestoredDetail.parse(restoredEvent.detail)).toMatchObject({
      SpaceSlug: 'd-prod',
      Slug: 'v2',
      Units: [{ UnitSlug: 'deployment', RevisionNum: 3 }],
    });
    const after = (await env.api.get('/space/d-base/change_order/v2')).body;
    expect(after).toMatchObject({
      State: 'Restored',
      RestoredSpaceIDs: [restoredEvent.detail.SpaceID],
      ReleasedRestoredSpaceIDs: [],
    });
    // Demote promotes and publishes nothing: the Space's Release is still the one that carries v2.
    expect(((await env.api.get('/space/d-prod/release')).body as unknown[]).length).toBe(1);
    const pub = await env.api.post('/space/d-prod/release', { Revision: 'Before:ChangeOrder:d-base/v2' });
    expect(pub.body.Units).toEqual([expect.objectContaining({ Slug: 'deployment', RevisionNum: 3 })]);
    expect((await env.api.get('/space/d-prod/unit/deployment/data')).text).toContain('ghcr.io/acme/acme:v1');
    expect((await env.api.get('/space/d-base/change_order/v2')).body).toMatchObject({
      State: 'RestoreReleased',
      ReleasedRestoredSpaceIDs: [restoredEvent.detail.SpaceID],
    });
    // The base, not demoted, keeps the change.
    expect((await env.api.get('/space/d-base/unit/deployment/data')).text).toContain('ghcr.io/acme/acme:v2');
  });
});
