import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Api, deploymentYaml, startEnv, type Env } from '../support/harness.ts';
import { cubAt } from '../support/cli.ts';

let env: Env;
const deployment = (image: string) => deploymentYaml('acme', { image, namespace: 'acme' });
/** A user of the first organization, made by its admin, and an API client with their first token. */
async function user(slug: string, role = 'Member'): Promise<{ api: Api; id: string }> {
  const r = await env.api.post('/user', { Slug: slug, Role: role });
  expect(r.status).toBe(201);
  return { api: new Api(env.url, r.body.Token), id: r.body.User.UserID };
}
/** A Space with a release Target and one Unit, published once: what status is reported on. */
async function released(slug: string): Promise<string> {
  await env.api.post('/space', { Slug: `${slug}-infra` });
  await env.api.post(`/space/${slug}-infra/target`, { Slug: 't' });
  const s = await env.api.post('/space', { Slug: slug, ReleaseTargetID: `${slug}-infra/t` });
  await env.api.post(`/space/${slug}/unit`, { Slug: 'deployment', Data: deployment('ghcr.io/acme/acme:v1') });
  expect((await env.api.post(`/space/${slug}/release`, {})).status).toBe(201);
  return s.body.SpaceID;
}
const argoApp = (space: string, health: string) => ({
  metadata: { name: 'acme', annotations: { 'baton.io/space': space, 'baton.io/release': '1' } },
  status: { sync: { status: 'Synced' }, health: { status: health } },
});

beforeAll(async () => {
  env = await startEnv();
});
afterAll(async () => env.close());

describe('users and tokens', () => {
  it('a token works until it is revoked, its user deleted, or it expires; only its hash is kept', async () => {
    const ann = await user('ann');
    expect((await ann.api.get('/space')).status).toBe(200);
    const made = await ann.api.post('/token', { Description: 'laptop', ExpiresIn: '1h' });
    expect(made.status).toBe(201);
    const second = new Api(env.url, made.body.Token);
    expect((await second.get('/space')).status).toBe(200);
    const listed = (await ann.api.get('/token')).body as Record<string, unknown>[];
    expect(listed.map((t) => t.Description)).toEqual(['first token of ann', 'laptop']);
    for (const t of listed) expect(Object.keys(t)).not.toContain('TokenHash');
    expect(JSON.stringify(listed)).not.toContain(made.body.Token);
    // Expired: the clock is passed in, so the test moves it.
    const realNow = env.deps.now;
    env.deps.now = () => new Date(realNow().getTime() + 2 * 3_600_000);
    try {
      expect(await second.get('/space')).toMatchObject({
        status: 401,
        body: { Message: `the bearer token expired at ${made.body.TokenInfo.ExpiresAt}` },
      });
      expect((await ann.api.get('/space')).status).toBe(200);
    } finally {
      env.deps.now = realNow;
    }
    expect((await ann.api.post(`/token/${made.body.TokenInfo.TokenID}/revoke`)).status).toBe(200);
    expect((await second.get('/space')).body.Message).toMatch(/^the bearer token was revoked at /);
    // Another user's token is not found to a Member; an Admin sees every token.
    const ben = await user('ben');
    expect((await ben.api.post(`/token/${made.body.TokenInfo.TokenID}/revoke`)).status).toBe(404);
    expect(((await env.api.get('/token')).body as { UserID?: string }[]).some((t) => t.UserID === ann.id)).toBe(true);
    // Deleting a user deletes their tokens in the same write: they stop at once.
    expect((await env.api.del('/user/ann')).body).toEqual({ Deleted: 'ann', RevokedTokens: 2 });
    expect(await ann.api.get('/space')).toMatchObject({
      status: 401,
      body: { Message: 'the bearer token is not valid' },
    });
  });

  it('roles: only an Admin manages people; a Viewer reads and writes nothing; the last Admin stays', async () => {
    const vera = await user('vera', 'Viewer');
    const mo = await user('mo');
    expect((await mo.api.post('/user', { Slug: 'x' })).status).toBe(403);
    expect((await mo.api.post('/group', { Slug: 'x' })).status).toBe(403);
    expect((await mo.api.post('/token', { User: 'vera' })).body.Message).toBe(
      "only an Admin may create another user's tokens",
    );
    expect((await vera.api.get('/space')).status).toBe(200);
    expect((await vera.api.post('/space', { Slug: 'vera-space' })).body).toEqual({
      Code: 'Forbidden',
      Message: 'a Viewer may only read; POST /space needs a Member or Admin',
    });
    expect((await env.api.get('/space/vera-space')).status).toBe(404);
    const admin = (await env.api.get('/user')).body.find((u: { Role: string }) => u.Role === 'Admin');
    expect((await env.api.patch(`/user/${admin.UserID}`, { Version: admin.Version, Role: 'Member' })).status).toBe(409);
    const promoted = await env.api.patch('/user/vera', { Version: 1, Role: 'Member' });
    expect(promoted.body).toMatchObject({ Role: 'Member', Version: 2 });
    expect((await vera.api.post('/space', { Slug: 'vera-space' })).status).toBe(201);
    // Bad input names what is wrong, and writes nothing.
    expect((await env.api.post('/user', { Slug: 'bad', Role: 'Owner' })).status).toBe(400);
    expect((await env.api.get('/user/bad')).status).toBe(404);
  });

  it('another organization’s people and Spaces are not found', async () => {
    const s = await env.api.post('/space', { Slug: 'org-a-space' });
    expect((await env.other.get(`/space/${s.body.SpaceID}`)).status).toBe(404);
    const u = (await env.api.get('/user')).body[0];
    expect((await env.other.get(`/user/${u.UserID}`)).status).toBe(404);
    expect((await env.other.post('/attest', { Spaces: [s.body.SpaceID] })).status).toBe(404);
  });
});

describe('Space permissions', () => {
  it('a verb the Space names goes to whom it names; View denied reads as not found; only Manage changes them', async () => {
    const pia = await user('pia');
    const quinn = await user('quinn');
    await env.api.post('/group', { Slug: 'insiders', Members: ['pia'] });
    await env.api.post('/space', { Slug: 'secret' });
    expect(
      (await quinn.api.patch('/space/secret', { Version: 1, Permissions: { View: { GroupIDs: ['insiders'] } } })).body
        .Message,
    ).toBe("Manage permission in space 'secret' is needed to change its permissions");
    const set = await env.api.patch('/space/secret', {
      Version: 1,
      Permissions: { View: { GroupIDs: ['insiders'] }, Edit: { UserIDs: ['pia'] } },
    });
    expect(set.body.Permissions).toEqual({
      View: { UserIDs: [], GroupIDs: [expect.stringMatching(/^[0-9a-f-]{36}$/)] },
      Edit: { UserIDs: [expect.stringMatching(/^[0-9a-f-]{36}$/)], GroupIDs: [] },
    });
    expect((await pia.api.get('/space/secret')).status).toBe(200);
    expect((await quinn.api.get('/space/secret')).status).toBe(404);
    expect(((await quinn.api.get('/space')).body as { Slug: string }[]).map((s) => s.Slug)).not.toContain('secret');
    expect(
      (await quinn.api.post('/space/secret/unit', { Slug: 'x', Data: deployment('ghcr.io/acme/acme:v1') })).status,
    ).toBe(404);
    expect(
      (await pia.api.post('/space/secret/unit', { Slug: 'x', Data: deployment('ghcr.io/acme/acme:v1') })).status,
    ).toBe(201);
    // Naming an unknown user is refused, naming it, and nothing changes.
    expect(
      (await env.api.patch('/space/secret', { Version: 2, Permissions: { Approve: { UserIDs: ['nobody'] } } })).body
        .Message,
    ).toBe("user 'nobody' not found");
    // null gives the verb back to the role defaults.
    expect(
      (await env.api.patch('/space/secret', { Version: 2, Permissions: { View: null } })).body.Permissions,
    ).toEqual({ Edit: expect.any(Object) });
    expect((await quinn.api.get('/space/secret')).status).toBe(200);
    expect(
      (await quinn.api.post('/space/secret/unit', { Slug: 'y', Data: deployment('ghcr.io/acme/acme:v1') })).body
        .Message,
    ).toBe("Edit permission in space 'secret' is needed to POST /space/{space_id}/unit");
  });
});

describe('service tokens for deploy tools', () => {
  it('report status in their Spaces, and nothing else', async () => {
    const a = await released('svc-a');
    await released('svc-b');
    const made = await env.api.post('/token', { Service: 'argocd', Scope: 'ReportStatus', Spaces: ['svc-a'] });
    expect(made.body.TokenInfo).toMatchObject({ Service: 'argocd', Scope: 'ReportStatus', SpaceIDs: [a] });
    const argo = new Api(env.url, made.body.Token);
    expect((await argo.post('/space', { Slug: 'argo-space' })).body.Message).toBe(
      "the service token 'argocd' may only report status (POST /hooks/…, PATCH …/release/{n}), not POST /space",
    );
    expect((await argo.get('/space/svc-a')).status).toBe(403);
    expect(
      (await argo.patch('/space/svc-a/release/1', { LiveStatus: { Sync: 'Synced', Health: 'Healthy' } })).status,
    ).toBe(200);
    expect(
      (await argo.patch('/space/svc-b/release/1', { LiveStatus: { Sync: 'Synced', Health: 'Healthy' } })).status,
    ).toBe(404);
    expect((await argo.patch('/space/svc-a/release/1', { Labels: { x: 'y' } })).status).toBe(403);
    // Hooks: about its own Space, applied; about another, refused with why, nothing written.
    expect((await argo.post('/hooks/argocd', argoApp('svc-a', 'Degraded'))).status).toBe(200);
    expect((await env.api.get('/space/svc-a/release/1')).body.LiveStatus.Health).toBe('Degraded');
    const other = await argo.post('/hooks/argocd', argoApp('svc-b', 'Degraded'));
    expect([other.status, other.body.Message]).toEqual([403, "the sender may not report status in space 'svc-b'"]);
    expect((await env.api.get('/space/svc-b/release/1')).body.LiveStatus?.Health).toBeUndefined();
    // A Member cannot forge health either: ReportStatus is not among a Member's defaults.
    const mia = await user('mia');
    expect((await mia.api.patch('/space/svc-a/release/1', { LiveStatus: { Health: 'Healthy' } })).body.Message).toBe(
      "ReportStatus permission in space 'svc-a' is needed to PATCH /space/{space_id}/release/{release_id}",
    );
    expect((await mia.api.post('/token', { Service: 'x', Scope: 'ReportStatus' })).status).toBe(403);
  });

  it("cub release report with a ReportStatus token reports on the Space's newest published Release without --release, inside its scope", async () => {
    await released('svc-c');
    await env.api.post('/space/svc-c/unit', { Slug: 'worker', Data: deployment('ghcr.io/acme/worker:v1') });
    expect((await env.api.post('/space/svc-c/release', {})).body.Release.ReleaseNum).toBe(2);
    const made = await env.api.post('/token', { Service: 'pipeline', Scope: 'ReportStatus', Spaces: ['svc-c'] });
    const cub = cubAt(env.url, made.body.Token);
    const r = await cub([
      'release',
      'report',
      '--space',
      'svc-c',
      '--sync',
      'Synced',
      '--health',
      'Progressing',
      '-o',
      'json',
    ]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(JSON.parse(r.stdout)).toMatchObject({
      ReleaseNum: 2,
      LiveStatus: { Sync: 'Synced', Health: 'Progressing', Reporter: 'cub' },
    });
    expect((await env.api.get('/space/svc-c/release/1')).body.LiveStatus?.Health).toBeUndefined();
    const outside = await cub(['release', 'report', '--space', 'svc-a', '--sync', 'Synced', '--health', 'Healthy']);
    expect([outside.code, outside.stderr]).toEqual([1, expect.stringMatching(/svc-a/)]);
  });

  it("verifies Flux's generic-hmac signature when the token requires it", async () => {
    await released('flux-a');
    const made = await env.api.post('/token', { Service: 'flux', Scope: 'ReportStatus', RequireSignature: true });
    const secret = made.body.Token as string;
    const event = JSON.stringify({
      involvedObject: { kind: 'Kustomization', name: 'acme', namespace: 'flux-system' },
      severity: 'info',
      timestamp: '2026-12-02T10:00:00Z',
      message: 'applied',
      reason: 'ReconciliationSucceeded',
      metadata: { 'baton.io/space': 'flux-a', 'baton.io/release': '1' },
    });
    const send = (signature?: string) =>
      fetch(`${env.url}/hooks/flux`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${secret}`,
          'content-type': 'application/json',
          ...(signature ? { 'x-signature': signature } : {}),
        },
        body: event,
      });
    expect((await send()).status).toBe(401);
    expect((await send(`sha256=${createHmac('sha256', 'wrong').update(event).digest('hex')}`)).status).toBe(401);
    expect((await send(`sha256=${createHmac('sha256', secret).update(event).digest('hex')}`)).status).toBe(200);
    expect((await env.api.get('/space/flux-a/release/1')).body.LiveStatus).toMatchObject({ Health: 'Healthy' });
  });
});

describe('attestation requirements over a rollout', () => {
  it('one approval opens the release gate of its Stage and the entry gate of the next; one in the last Stage completes the rollout through the bus', async () => {
    const dev = await user('devon');
    const rev = await user('rhea');
    await env.api.post('/space', { Slug: 'roll-infra' });
    await env.api.post('/space', { Slug: 'roll-base', Labels: { Stage: 'Base' } });
    await env.api.post('/space/roll-base/unit', { Slug: 'deployment', Data: deployment('ghcr.io/acme/acme:v1') });
    for (const [name, stage] of [
      ['stg', 'Staging'],
      ['prd', 'Production'],
    ]) {
      await env.api.post('/space/roll-infra/target', { Slug: `t-${name}` });
      expect(
        (
          await env.api.post('/variant', {
            Name: name,
            Slug: `roll-base-${name}`,
            UpstreamSpaceID: 'roll-base',
            Stage: stage,
            ReleaseTargetID: `roll-infra/t-${name}`,
          })
        ).status,
      ).toBe(201);
    }
    const wf = await env.api.post('/space/roll-base/change_workflow', {
      Slug: 'signed',
      Stages: [
        { Name: 'staging', WhereSpace: "Labels.Stage = 'Staging'", ReleasePrerequisites: ['sign-off'] },
        { Name: 'prod', WhereSpace: "Labels.Stage = 'Production'", Prerequisites: ['Released', 'sign-off'] },
      ],
      Final: { Prerequisites: ['sign-off'] },
      AttestationPrerequisites: [{ Name: 'sign-off', FromUserIDs: ['rhea'] }],
    });
    expect(wf.body.AttestationPrerequisites).toEqual([{ Name: 'sign-off', FromUserIDs: [rev.id] }]);
    expect(
      (
        await env.api.post('/space/roll-base/change_workflow', {
          Slug: 'typo',
          Stages: [{ Name: 'a', WhereSpace: "Slug = 'x'", Prerequisites: ['p'] }],
          AttestationPrerequisites: [{ Name: 'p', FromGroupIDs: ['no-such-group'] }],
        })
      ).body.Message,
    ).toBe("attestation prerequisite 'p' FromGroupIDs: group 'no-such-group' not found");
    await dev.api.post('/space/roll-base/function/invoke', {
      FunctionName: 'set-image-reference-by-uri',
      Arguments: ['ghcr.io/acme/acme', ':v2'],
      UnitIDs: ['deployment'],
    });
    expect(
      (await dev.api.post('/space/roll-base/change_order', { Slug: 'v2', ChangeWorkflowID: 'roll-base/signed' }))
        .status,
    ).toBe(201);
    expect((await dev.api.post('/promote', { ChangeOrderID: 'roll-base/v2' })).status).toBe(200);
    const publish = (space: string) =>
      dev.api.post(`/space/${space}/release`, { Revision: 'ChangeOrder:roll-base/v2' });
    expect(await publish('roll-base-stg')).toMatchObject({
      status: 422,
      body: {
        Message:
          "unable to publish a release of change order 'v2' in stage 'staging': requires sign-off: 1 Approval attestation(s) from eligible attesters who did not write the change; deployment revision 2 has 0 of 1",
      },
    });
    // The reviewer approves the change where it stands in staging: the release gate opens, and so does prod's entry gate.
    const approved = await rev.api.post('/attest', {
      ChangeOrderID: 'roll-base/v2',
      Stage: 'staging',
      Note: 'reviewed',
    });
    expect(approved.status).toBe(201);
    expect(approved.body.Spaces).toEqual([
      expect.objectContaining({
        SpaceSlug: 'roll-base-stg',
        Action: 'Attest',
        Units: [expect.objectContaining({ UnitSlug: 'deployment', RevisionNum: 2 })],
      }),
    ]);
    expect(env.bus.log.at(-1)).toMatchObject({
      detailType: 'Attestation Recorded',
      detail: { SpaceSlug: 'roll-base-stg', Result: 'Pass' },
    });
    expect((await publish('roll-base-stg')).status).toBe(201);
    // A promotion needs Edit in every Space it writes.
    const prd = (await env.api.get('/space/roll-base-prd')).body;
    await env.api.patch('/space/roll-base-prd', { Version: prd.Version, Permissions: { Edit: { UserIDs: ['rhea'] } } });
    expect((await dev.api.post('/promote', { ChangeOrderID: 'roll-base/v2', TargetStage: 'prod' })).body.Message).toBe(
      "Edit permission in space 'roll-base-prd' is needed to promote change order 'v2' into it",
    );
    expect((await dev.api.post('/promote', { Space: 'roll-base-prd' })).body.Message).toBe(
      "Edit permission in space 'roll-base-prd' is needed to promote it",
    );
    await env.api.patch('/space/roll-base-prd', { Version: prd.Version + 1, Permissions: { Edit: null } });
    expect((await dev.api.post('/promote', { ChangeOrderID: 'roll-base/v2', TargetStage: 'prod' })).status).toBe(200);
    const co = async () => (await env.api.get('/space/roll-base/change_order/v2')).body;
    expect((await co()).Stage).toBe('prod');
    // Final asks for sign-off in prod: recording it re-evaluates the ChangeOrder through the bus.
    const last = await rev.api.post('/attest', { Spaces: ['roll-base-prd'], ChangeOrderID: 'roll-base/v2' });
    expect(last.status).toBe(201);
    expect((await co()).Stage).toBe('Completed');
    const revoked = await rev.api.post(
      `/space/roll-base-prd/attestation/${last.body.Attestations[0].AttestationID}/revoke`,
      { Note: 'wrong one' },
    );
    expect(revoked.status).toBe(201);
    expect(env.bus.log.at(-1)).toMatchObject({
      detailType: 'Attestation Revoked',
      detail: { RevokedAttestationID: last.body.Attestations[0].AttestationID },
    });
    // Attestations are never edited or deleted: there is no such route.
    expect(
      (await rev.api.del(`/space/roll-base-prd/attestation/${last.body.Attestations[0].AttestationID}`)).status,
    ).toBe(405);
    // Approving needs Approve in every Space, checked before anything is written.
    await env.api.patch('/space/roll-base-prd', {
      Version: (await env.api.get('/space/roll-base-prd')).body.Version,
      Permissions: { Approve: { UserIDs: ['rhea'] } },
    });
    expect(
      (await dev.api.post('/attest', { Spaces: ['roll-base-stg', 'roll-base-prd'], ChangeOrderID: 'roll-base/v2' }))
        .body.Message,
    ).toBe("Approve permission in space 'roll-base-prd' is needed to approve there");
    expect(((await env.api.get('/space/roll-base-stg/attestation')).body as unknown[]).length).toBe(1);
  });
});
