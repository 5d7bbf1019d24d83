import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChangeOrderRecalledDetail, HoldEventDetail } from '../../lib/events/contracts.ts';
import { deploymentYaml, startEnv, type Env } from '../support/harness.ts';
import { cubAt } from '../support/cli.ts';

// The bodies as Argo CD ({{toJson .app}}) and Flux's notification-controller send them for a failed rollout
// (an Application gone Degraded; kustomize-controller's HealthCheckFailed); only the revision is filled in.
const fixture = (name: string, revision: string) =>
  readFileSync(new URL(`../fixtures/deploy-tools/${name}`, import.meta.url), 'utf8').replaceAll('REVISION', revision);

let env: Env;
let cub: ReturnType<typeof cubAt>;
let reporter: string;
/** The server's clock: the change is taken at 12:00 UTC on 2 December 2026; the tools report a few minutes later. */
let clock = Date.parse('2026-12-02T12:00:00Z');

const hook = (path: string, body: string) =>
  fetch(`${env.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${reporter}`, 'content-type': 'application/json' },
    body,
  }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

/**
 * A base `<c>-base` of one Unit, a canary Space (released to the Target `deployer` names) and a prod Space,
 * a two-Stage workflow whose canary Stage recalls as `recall` says, and a change order `scale` taken by the canary.
 */
async function fleet(c: string, deployer: string[], recall: object): Promise<string> {
  expect(
    (
      await env.api.post('/variant/upload', {
        Component: c,
        Variant: 'base',
        Units: [{ Slug: 'api', Data: deploymentYaml('api', { namespace: 'acme' }) }],
      })
    ).status,
  ).toBe(201);
  const t = await cub(['target', 'create', '--space', 'clusters', `${c}-canary`, ...deployer]);
  expect([t.code, t.stderr]).toEqual([0, '']);
  for (const [name, target] of [
    ['canary', `clusters/${c}-canary`],
    ['prod', undefined],
  ] as const)
    expect(
      (
        await env.api.post('/variant', {
          Name: name,
          UpstreamSpaceID: `${c}-base`,
          Stage: 'Production',
          Namespace: 'acme',
          ...(target ? { ReleaseTargetID: target } : {}),
        })
      ).status,
    ).toBe(201);
  const wf = await env.api.post(`/space/${c}-base/change_workflow`, {
    Slug: 'w',
    Stages: [
      { Name: 'canary', WhereSpace: `Slug = '${c}-canary'`, Recall: recall },
      { Name: 'prod', WhereSpace: `Slug = '${c}-prod'` },
    ],
  });
  expect(wf.status, wf.text).toBe(201);
  await env.api.post(`/space/${c}-base/function/invoke`, {
    FunctionName: 'set-replicas',
    Arguments: ['3'],
    UnitIDs: ['api'],
  });
  expect(
    (await env.api.post(`/space/${c}-base/change_order`, { Slug: 'scale', ChangeWorkflowID: `${c}-base/w` })).status,
  ).toBe(201);
  const promoted = await env.api.post('/promote', { ChangeOrderID: `${c}-base/scale` });
  expect([promoted.status, promoted.body.Stage]).toEqual([200, 'canary']);
  const rel = await env.api.post(`/space/${c}-canary/release`, { Revision: `ChangeOrder:${c}-base/scale` });
  expect(rel.status, rel.text).toBe(201);
  return rel.body.Release.Digest as string;
}

beforeAll(async () => {
  env = await startEnv({ now: () => new Date(clock) });
  cub = cubAt(env.url, env.api.token!);
  await env.api.post('/space', { Slug: 'clusters' });
  reporter = (await env.api.post('/token', { Service: 'deploy-tools', Scope: 'ReportStatus' })).body.Token;
});
afterAll(async () => env.close());

describe('recall on failure', () => {
  it('Flux reporting a failed health check minutes after the canary took the change freezes it and, with Demote, takes it back out', async () => {
    clock = Date.parse('2026-12-02T12:00:00Z');
    const digest = await fleet('fx', ['--flux-object', 'Kustomization/flux-system/acme-prod'], {
      Within: '30m',
      On: ['Degraded', 'Failed'],
      Demote: true,
    });
    clock = Date.parse('2026-12-02T12:04:11Z');
    const r = await hook('/hooks/flux', fixture('flux-event-health-check-failed.json', `latest@sha256:${digest}`));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      Applied: true,
      SpaceSlug: 'fx-canary',
      LiveStatus: expect.objectContaining({ Health: 'Degraded', Operation: 'Failed' }),
    });

    const co = (await env.api.get('/space/fx-base/change_order/scale')).body;
    expect(co.Recall).toEqual({
      RecalledAt: '2026-12-02T12:04:11.000Z',
      Stage: 'canary',
      SpaceID: expect.any(String),
      SpaceSlug: 'fx-canary',
      ReleaseID: expect.any(String),
      ReleaseNum: 1,
      Report: expect.objectContaining({
        Health: 'Degraded',
        Operation: 'Failed',
        Reporter: 'kustomize-controller',
        ObservedAt: '2026-12-02T12:04:10Z',
        Message: expect.stringContaining('Health check failed after 2m0s'),
      }),
      Matched: 'Degraded',
      TakenAt: '2026-12-02T12:00:00.000Z',
      Within: '30m',
      Hold: 'recall-scale',
      Demote: true,
    });
    // Frozen by a hold named after it, Baton's own; the event carries the evidence.
    const hold = (await env.api.get('/hold/recall-scale')).body;
    expect(hold).toMatchObject({
      Scope: 'ChangeOrder',
      ChangeOrderSlug: 'scale',
      OwnerID: 'baton',
      InForce: true,
      Blocks: ['promote'],
    });
    const recalled = env.bus.log.find((e) => e.detailType === 'ChangeOrder Recalled' && e.detail.Slug === 'scale')!;
    expect(ChangeOrderRecalledDetail.parse(recalled.detail)).toMatchObject({
      RecalledSpaceSlug: 'fx-canary',
      Matched: 'Degraded',
      ReleaseNum: 1,
    });
    const placed = env.bus.log.find((e) => e.detailType === 'Hold Placed' && e.detail.Slug === 'recall-scale')!;
    expect(HoldEventDetail.parse(placed.detail)).toMatchObject({ Scope: 'ChangeOrder', OwnerID: 'baton' });
    // Demote: aborted, and demoted from every Space that took it, each step recorded.
    expect(co.AbortedReason).toBe('recalled: fx-canary reported Degraded');
    expect(co.AbortedBy).toBe('baton');
    expect(co.Demotions).toEqual([
      expect.objectContaining({
        Recall: true,
        UserID: 'baton',
        Spaces: [{ SpaceID: expect.any(String), SpaceSlug: 'fx-canary', Restored: true }],
      }),
    ]);
    expect(co.RestoredSpaceIDs).toEqual([co.Recall.SpaceID]);
    expect((await env.api.get('/space/fx-canary/unit/api/data')).text).toContain('replicas: 1');
    // No further Space takes it.
    const next = await env.api.post('/promote', { ChangeOrderID: 'fx-base/scale' });
    expect(next.status).toBe(409);
    // Shown by cub changeorder get and in the rollout.
    const got = await cub(['changeorder', 'get', '--space', 'fx-base', 'scale']);
    expect(got.stdout).toMatch(
      /Recalled +2026-12-02T12:04:11.000Z: fx-canary \(stage canary\) reported Degraded for release 1 at 2026-12-02T12:04:10Z, within 30m of taking it at 2026-12-02T12:00:00.000Z; frozen by hold recall-scale; demoted by Baton/,
    );
    expect(got.stdout).toMatch(/Demoted +2026-12-02T12:04:11.000Z \(recall\): fx-canary Restored/);
    const rollout = (await env.api.get('/space/fx-base/change_order/scale/rollout')).body;
    expect(rollout.ChangeOrder.Recall.Hold).toBe('recall-scale');
    expect(rollout.Holds.map((h: { Slug: string }) => h.Slug)).toEqual(['recall-scale']);
  });

  it('Argo CD reporting the canary Degraded freezes the change order; explain prints the one command that takes it back out, and it does', async () => {
    clock = Date.parse('2026-12-02T12:00:00Z');
    const digest = await fleet('ar', ['--argocd-application', 'argocd/acme-prod'], { Within: '30m', On: ['Degraded'] });
    clock = Date.parse('2026-12-02T12:05:11Z');
    const r = await hook('/hooks/argocd', fixture('argocd-application-degraded.json', `v1@sha256:${digest}`));
    expect(r.status).toBe(200);
    const co = (await env.api.get('/space/ar-base/change_order/scale')).body;
    expect(co.Recall).toMatchObject({
      SpaceSlug: 'ar-canary',
      Matched: 'Degraded',
      Demote: false,
      Report: expect.objectContaining({ Reporter: 'argocd' }),
    });
    expect(co.AbortedReason).toBeUndefined();
    const refused = await env.api.post('/promote', { ChangeOrderID: 'ar-base/scale' });
    expect(refused.status).toBe(409);
    // Named after it; another ChangeOrder's recall already took the plain name, so its ID's start follows.
    expect(co.Recall.Hold).toBe(`recall-scale-${co.ChangeOrderID.slice(0, 8)}`);
    expect(refused.body.Message.replaceAll(co.Recall.Hold, 'recall-scale')).toMatch(
      /^unable to promote to stage 'prod': hold 'recall-scale' on this change order is in force \(placed by baton\): recalled: ar-canary \(stage canary\) reported Degraded for release 1 at 2026-12-02T12:05:10Z, within 30m of taking the change; take it back out: cub changeorder demote --space ar-base scale --reason 'recalled: ar-canary reported Degraded'; lift it/,
    );
    const explained = await cub(['changeorder', 'explain', '--space', 'ar-base', 'scale']);
    expect(explained.code, explained.stderr).toBe(0);
    const command = /take it back out of every space that took it: (.*)\n/.exec(explained.stdout)![1]!;
    expect(command).toBe(
      "cub changeorder demote --space ar-base scale --reason 'recalled: ar-canary reported Degraded'",
    );
    // The command as printed.
    const args = [
      'changeorder',
      'demote',
      '--space',
      'ar-base',
      'scale',
      '--reason',
      'recalled: ar-canary reported Degraded',
    ];
    expect(command).toBe(`cub ${args.slice(0, 6).join(' ')} '${args[6]}'`);
    // Forced past the recall's hold, prod took it too; a window there that governs demotes keeps it from being restored.
    const forced = await env.api.post('/promote', {
      ChangeOrderID: 'ar-base/scale',
      Force: true,
      ForceReason: 'prod needs it anyway',
    });
    expect([forced.status, forced.body.Landed]).toEqual([200, 1]);
    const guard = await env.api.post('/window', {
      Slug: 'ar-prod-no-demote',
      Deny: true,
      Space: 'ar-prod',
      Start: '2026-12-02T00:00:00Z',
      End: '2026-12-03T00:00:00Z',
      Blocks: ['demote'],
      Reason: 'prod freeze',
    });
    expect(guard.status, guard.text).toBe(201);
    const ran = await cub(args);
    // The latest Stage first: prod fails (reported), canary is restored all the same; some failed, so exit 1.
    expect(ran.code).toBe(1);
    expect(ran.stdout).toBe(
      "Took change order scale back out of 1 of 2 space(s), latest first:\n  ar-prod  not restored: unable to demote change order 'scale': freeze window 'ar-prod-no-demote' (from 2026-12-02T00:00:00.000Z to 2026-12-03T00:00:00.000Z, placed by admin: prod freeze) is in force over space 'ar-prod', until 2026-12-03T00:00:00.000Z; wait, or its owner or an Admin deletes it (cub window delete ar-prod-no-demote)\n  ar-canary  Restored\n",
    );
    const after = (await env.api.get('/space/ar-base/change_order/scale')).body;
    expect(after.AbortedReason).toBe('recalled: ar-canary reported Degraded');
    expect(after.Demotions).toEqual([
      expect.objectContaining({
        Recall: false,
        Spaces: [
          expect.objectContaining({
            SpaceSlug: 'ar-prod',
            Restored: false,
            Error: expect.stringContaining("window 'ar-prod-no-demote'"),
          }),
          expect.objectContaining({ SpaceSlug: 'ar-canary', Restored: true }),
        ],
      }),
    ]);
    // Once the window is gone, the same command restores what is left.
    expect((await env.api.del('/window/ar-prod-no-demote')).status).toBe(200);
    const again = await cub(['changeorder', 'demote', '--space', 'ar-base', 'scale', '--reason', 'again']);
    expect([again.code, again.stdout]).toEqual([
      0,
      'Took change order scale back out of 1 of 1 space(s), latest first:\n  ar-prod  Restored\n',
    ]);
    const done = await cub(['changeorder', 'demote', '--space', 'ar-base', 'scale', '--reason', 'again']);
    expect(done.code).not.toBe(0);
    expect(done.stderr).toContain("change order 'scale' is in no Space to take back out of");
  });

  it('does not recall on a report long after the Space took the change, or on a status it does not watch; a bad Recall is refused', async () => {
    clock = Date.parse('2026-12-02T11:00:00Z');
    // One Target per deploy tool object: the last test's canary gives the Application up.
    const off = await cub(['target', 'update', '--space', 'clusters', 'ar-canary', '--remove-deploy-object']);
    expect([off.code, off.stderr]).toEqual([0, '']);
    const digest = await fleet('late', ['--argocd-application', 'argocd/acme-prod'], {
      Within: '30m',
      On: ['Degraded'],
    });
    // Within the window, but Missing is not watched: no recall.
    clock = Date.parse('2026-12-02T11:05:00Z');
    const missing = await env.api.patch('/space/late-canary/release/1', {
      LiveStatus: { Health: 'Missing', ObservedAt: '2026-12-02T11:05:00Z', Reporter: 'cub' },
    });
    expect(missing.status, missing.text).toBe(200);
    expect((await env.api.get('/space/late-base/change_order/scale')).body.Recall).toBeUndefined();
    // Degraded, but observed 65 minutes after the canary took it: outside Within.
    clock = Date.parse('2026-12-02T12:05:11Z');
    const r = await hook('/hooks/argocd', fixture('argocd-application-degraded.json', `v1@sha256:${digest}`));
    expect([r.status, (r.body.LiveStatus as { Health: string }).Health]).toEqual([200, 'Degraded']);
    expect((await env.api.get('/space/late-base/change_order/scale')).body.Recall).toBeUndefined();
    expect(
      env.bus.log.filter((e) => e.detailType === 'ChangeOrder Recalled').map((e) => e.detail.RecalledSpaceSlug),
    ).toEqual(['fx-canary', 'ar-canary']);
    for (const [recall, message] of [
      [
        { Within: 'soon', On: ['Degraded'] },
        "Stage 'canary' Recall.Within 'soon' must be a duration such as 30m or 2h (at most 30d)",
      ],
      [{ Within: '30m', On: ['Broken'] }, 'Stages.0.Recall.On.0'],
      [{ Within: '30m', On: [] }, 'Stages.0.Recall.On'],
    ] as const) {
      const bad = await env.api.post('/space/late-base/change_workflow', {
        Slug: 'bad',
        Stages: [{ Name: 'canary', WhereSpace: "Slug = 'late-canary'", Recall: recall }],
      });
      expect(bad.status).toBe(400);
      expect(bad.body.Message).toContain(message);
    }
    expect((await env.api.get('/space/late-base/change_workflow/bad')).status).toBe(404);
  });
});
