import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cubIn, type CubResult } from '../support/cli.ts';
import { startEnv, type Env } from '../support/harness.ts';

const acmeDir = fileURLToPath(new URL('../fixtures/acme', import.meta.url));
/** One context file for every user of this test, as one person working as several users would have. */
const contexts = join(mkdtempSync(join(tmpdir(), 'cub-approvals-')), 'context.json');
let env: Env;

/** `cub <args…>` with the context file; whose it is comes from `--context` or the context in use. */
function cub(args: string[], input?: string): Promise<CubResult> {
  const env: Record<string, string | undefined> = { ...process.env, CUB_CONTEXT: contexts };
  delete env.CUB_SERVER;
  delete env.CUB_TOKEN;
  return cubIn(env)(args, input);
}
async function ok(args: string[], input?: string): Promise<string> {
  const r = await cub(args, input);
  expect(r.stderr, `cub ${args.join(' ')}`).toBe('');
  expect(r.code, `cub ${args.join(' ')}`).toBe(0);
  return r.stdout;
}
/** As a user: `cub <entity> <verb> --context <user> …` (before any `--`). */
const withContext = (user: string, args: string[]) => [...args.slice(0, 2), '--context', user, ...args.slice(2)];
const as = (user: string) => (args: string[], input?: string) => ok(withContext(user, args), input);
const tryAs = (user: string) => (args: string[]) => cub(withContext(user, args));

const workflow = `Stages:
  - Name: dev
    WhereSpace: "Labels.Stage = 'Development'"
  - Name: staging
    WhereSpace: "Labels.Stage = 'Staging'"
  - Name: prod
    WhereSpace: "Labels.Stage = 'Production'"
    Prerequisites: [Released, two-approvers]
    ReleasePrerequisites: [release-manager]
AttestationPrerequisites:
  - Name: two-approvers
    Count: 2
    Description: two approvals of the change in staging, by people who did not write it
  - Name: release-manager
    FromGroupIDs: [release-managers]
    MaxAge: 72h
`;

beforeAll(async () => {
  env = await startEnv();
  await ok(['context', 'set', 'admin', '--server', env.url, '--token', env.api.token!]);
});
afterAll(async () => env.close());

describe('review and approval, as the spec walks it, with people switching contexts', () => {
  it('the admin adds people, each gets a token once, and a group', async () => {
    for (const [name, role] of [
      ['dana', 'Member'],
      ['alice', 'Member'],
      ['bob', 'Member'],
      ['carol', 'Member'],
      ['vic', 'Viewer'],
    ] as const) {
      const made = JSON.parse(await as('admin')(['user', 'create', name, '--role', role, '-o', 'json']));
      expect(made.User).toMatchObject({ Slug: name, Role: role });
      expect(made.Token).toMatch(/^bt_/);
      await ok(['context', 'set', name, '--server', env.url, '--token', made.Token]);
    }
    await as('admin')(['group', 'create', 'release-managers', '--member', 'carol']);
    expect(await as('admin')(['user', 'list'])).toMatch(/alice\s+Member/);
    // Members cannot make users; the list of tokens never shows a secret.
    expect((await tryAs('dana')(['user', 'create', 'mallory'])).stderr).toBe(
      'Failed: HTTP 403: only an Admin may POST /user\n',
    );
    expect(await as('dana')(['token', 'list'])).not.toMatch(/bt_/);
    // Switching the context in use switches who cub is.
    await ok(['context', 'use', 'vic']);
    expect(await ok(['context', 'current'])).toBe('vic\n');
    expect((await cub(['space', 'create', 'vics'])).stderr).toBe(
      'Failed: HTTP 403: a Viewer may only read; POST /space needs a Member or Admin\n',
    );
    await ok(['context', 'use', 'admin']);
    expect(await ok(['space', 'create', 'admins-space', '-q'])).toBe('admins-space\n');
  });

  it('a Member writes the change and carries it to staging; a Viewer may only look', async () => {
    const admin = as('admin');
    await admin(['variant', 'upload', '--component', 'acme', '--variant', 'base', acmeDir]);
    await admin(['space', 'create', 'infra']);
    for (const [name, stage] of [
      ['dev', 'Development'],
      ['staging-euw1', 'Staging'],
      ['staging-use1', 'Staging'],
      ['prod-use1', 'Production'],
    ] as const) {
      await admin(['target', 'create', '--space', 'infra', `t-${name}`]);
      await admin([
        'variant',
        'create',
        name,
        'acme-base',
        '--stage',
        stage,
        '--namespace',
        'acme',
        '--target',
        `infra/t-${name}`,
      ]);
    }
    const [dana, alice, bob, carol, vic] = [as('dana'), as('alice'), as('bob'), as('carol'), as('vic')] as const;
    await dana(['changeworkflow', 'create', '--space', 'acme-base', 'reviewed', '--filename', '-'], workflow);
    await dana([
      'function',
      'set',
      '--space',
      'acme-base',
      '--unit',
      'deployment',
      '--change-desc',
      'Release v452',
      '--',
      'set-image-reference-by-uri',
      'ghcr.io/acme/acme',
      ':v452',
    ]);
    await dana([
      'changeorder',
      'create',
      '--space',
      'acme-base',
      'release-v452',
      '--change-workflow',
      'acme-base/reviewed',
    ]);
    await dana(['variant', 'promote', '--change-order', 'acme-base/release-v452']);
    await dana(['variant', 'promote', '--change-order', 'acme-base/release-v452', '--target-stage', 'staging']);
    for (const s of ['acme-staging-euw1', 'acme-staging-use1'])
      await dana(['release', 'publish', s, '--revision', 'ChangeOrder:acme-base/release-v452']);
    // A Viewer reads, and is refused any write, naming the permission and the Space.
    expect(await vic(['changeorder', 'get', '--space', 'acme-base', 'release-v452'])).toMatch(/Stage\s+staging/);
    expect(
      (await tryAs('vic')(['function', 'set', '--space', 'acme-dev', '--unit', 'deployment', 'set-replicas', '3']))
        .stderr,
    ).toBe("Failed: HTTP 403: Edit permission in space 'acme-dev' is needed to run set-replicas there\n");
    expect((await tryAs('vic')(['space', 'create', 'vics'])).stderr).toBe(
      'Failed: HTTP 403: a Viewer may only read; POST /space needs a Member or Admin\n',
    );
    expect(
      (await tryAs('vic')(['variant', 'approve', '--change-order', 'acme-base/release-v452', '--stage', 'staging']))
        .stderr,
    ).toBe("Failed: HTTP 403: Approve permission in space 'acme-staging-euw1' is needed to approve there\n");
    // A Member may not forge the health that opens a gate: live status needs ReportStatus.
    expect(
      (
        await tryAs('dana')([
          'release',
          'report',
          '--space',
          'acme-staging-euw1',
          '--sync',
          'Synced',
          '--health',
          'Healthy',
        ])
      ).stderr,
    ).toBe(
      "Failed: HTTP 403: ReportStatus permission in space 'acme-staging-euw1' is needed to PATCH /space/{space_id}/release/{release_id}\n",
    );

    // prod needs two approvals of the change as it stands in staging, from people who did not write it.
    const promote = ['variant', 'promote', '--change-order', 'acme-base/release-v452', '--target-stage', 'prod'];
    const refusal = (n: number) =>
      `Failed: unable to promote to stage 'prod', Variant 'staging-euw1': requires two-approvers: 2 Approval attestation(s) from eligible attesters who did not write the change; deployment revision 3 has ${n} of 2; unable to promote to stage 'prod', Variant 'staging-use1': requires two-approvers: 2 Approval attestation(s) from eligible attesters who did not write the change; deployment revision 3 has ${n} of 2\n`;
    expect((await tryAs('dana')(promote)).stderr).toBe(refusal(0));
    // Preview, then approve: dana promoted into staging, so she wrote its revisions there and her approval does not count.
    expect(
      await alice([
        'variant',
        'approve',
        '--change-order',
        'acme-base/release-v452',
        '--stage',
        'staging',
        '--dry-run',
      ]),
    ).toMatch(/^Would approve revisions in 2 space\(s\)\n[^]*acme-staging-euw1\s+deployment\s+3/);
    expect(await alice(['attestation', 'list', '--space', 'acme-staging-euw1'])).toBe(
      'ID  TYPE  RESULT  BY  REVISIONS  REVOKED  CREATED  NOTE\n',
    );
    // She is told so at once: recorded, not counted toward two-approvers.
    const own = await tryAs('dana')([
      'variant',
      'approve',
      '--change-order',
      'acme-base/release-v452',
      '--stage',
      'staging',
    ]);
    expect(own.code).toBe(0);
    expect(own.stderr).toMatch(
      /^Warning: acme-staging-euw1: recorded, but it does not count toward two-approvers, release-manager: you wrote \(or promoted\) the change here \(deployment r3\)/,
    );
    expect((await tryAs('dana')(promote)).stderr).toBe(refusal(0));
    expect(
      await alice([
        'variant',
        'approve',
        '--change-order',
        'acme-base/release-v452',
        '--stage',
        'staging',
        '--note',
        'looks right',
      ]),
    ).toMatch(/^Approved revisions in 2 space\(s\)/);
    expect((await tryAs('dana')(promote)).stderr).toBe(refusal(1));
    // A rejection from an eligible user blocks until it is revoked.
    await bob([
      'variant',
      'approve',
      'acme-staging-euw1',
      '--change-order',
      'acme-base/release-v452',
      '--reject',
      '--note',
      'breaks the EU ingress',
    ]);
    expect((await tryAs('dana')(promote)).stderr).toMatch(
      /Variant 'staging-euw1': requires two-approvers: [^;]*; deployment revision 3 was rejected by bob \(breaks the EU ingress\)/,
    );
    const listed = JSON.parse(await bob(['attestation', 'list', '--space', 'acme-staging-euw1', '-o', 'json']));
    const rejection = listed.find((x: { Result: string }) => x.Result === 'Fail');
    expect(rejection).toMatchObject({
      Type: 'Approval',
      Note: 'breaks the EU ingress',
      Revisions: [expect.objectContaining({ RevisionNum: 3 })],
    });
    expect(await bob(['attestation', 'revoke', rejection.AttestationID, '--note', 'looked again'])).toMatch(
      /^Revoked attestation /,
    );
    expect(
      JSON.parse(
        await bob(['attestation', 'get', '--space', 'acme-staging-euw1', rejection.AttestationID, '-o', 'json']),
      ).RevokedBy,
    ).toMatch(/^[0-9a-f-]{36}$/);
    // Attestations are never edited or deleted: a second revocation is refused.
    expect(
      (await tryAs('bob')(['attestation', 'revoke', rejection.AttestationID, '--space', 'acme-staging-euw1'])).stderr,
    ).toMatch(/HTTP 400: attestation '[^']+' was already revoked/);
    await bob(['variant', 'approve', '--change-order', 'acme-base/release-v452', '--stage', 'staging']);
    expect(await dana(promote)).toMatch(/^Promoted change order into stage 'prod': 1 of 1 space\(s\)/);

    // prod's Releases need a release manager's approval of what they bundle there.
    const publish = ['release', 'publish', 'acme-prod-use1', '--revision', 'ChangeOrder:acme-base/release-v452'];
    const needsRm =
      "Failed: HTTP 422: unable to publish a release of change order 'release-v452' in stage 'prod': requires release-manager: 1 Approval attestation(s) from eligible attesters who did not write the change; deployment revision 3 has 0 of 1\n";
    expect((await tryAs('dana')(publish)).stderr).toBe(needsRm);
    await alice(['variant', 'approve', 'acme-prod-use1', '--change-order', 'acme-base/release-v452']);
    expect((await tryAs('dana')(publish)).stderr).toBe(needsRm);
    await carol(['variant', 'approve', 'acme-prod-use1', '--change-order', 'acme-base/release-v452']);
    expect(await dana(publish)).toMatch(/^Published release 1 of acme-prod-use1/);
  });

  it('approves without a change order: Units with a Target, --all in a base, --where, --revision, and skips a Unit with no such revision', async () => {
    const alice = as('alice');
    const base = await alice(['variant', 'approve', 'acme-base']);
    expect(base).toMatch(
      /^Approved revisions in 0 space\(s\)\n[^]*acme-base\s+skipped\s+no Unit a Release would publish \(a Space without a release Target needs --all\)/,
    );
    expect(await alice(['variant', 'approve', 'acme-base', '--all', '--where', "Slug = 'deployment'"])).toMatch(
      /acme-base\s+[0-9a-f-]{36}\s+deployment\s+2\s*\n$/,
    );
    const tagged = await alice([
      'variant',
      'approve',
      '--where-space',
      "Labels.Stage = 'Staging'",
      '--revision',
      'Tag:acme-base/release-v452-co-start',
    ]);
    expect(tagged).toMatch(
      /acme-staging-euw1\s+[0-9a-f-]{36}\s+config\s+2\nacme-staging-euw1\s+[0-9a-f-]{36}\s+deployment\s+2\n/,
    );
    expect(await alice(['variant', 'approve', 'acme-dev', '--revision', 'LastReleasedRevisionNum'])).toMatch(
      /acme-dev\s+skipped\s+config\s+unit 'config' has never been released/,
    );
    await as('admin')([
      'attestation',
      'create',
      '--space',
      'acme-prod-use1',
      '--type',
      'ChangeRecord',
      '--change-order',
      'acme-base/release-v452',
      '--claim',
      'servicenow.com/change=CHG0012345',
    ]);
    const records = JSON.parse(
      await alice([
        'attestation',
        'list',
        '--space',
        'acme-prod-use1',
        '--where',
        "Type = 'ChangeRecord'",
        '-o',
        'json',
      ]),
    );
    expect(records).toEqual([
      expect.objectContaining({
        Type: 'ChangeRecord',
        Result: 'Pass',
        Claims: { 'servicenow.com/change': 'CHG0012345' },
      }),
    ]);
  });

  it('people, tokens and Space permissions through cub', async () => {
    const admin = as('admin');
    expect(await admin(['group', 'add-member', 'release-managers', 'alice', 'bob'])).toMatch(/release-managers\s+3\s/);
    expect(await admin(['group', 'remove-member', 'release-managers', 'bob'])).toMatch(/release-managers\s+2\s/);
    expect(await admin(['group', 'list', '-q'])).toBe('release-managers\n');
    expect(await admin(['user', 'update', 'vic', '--role', 'Member'])).toMatch(/vic\s+Member/);
    // Approve in acme-dev goes to the release managers only.
    expect(
      await admin([
        'space',
        'update',
        'acme-dev',
        '--permission',
        'Approve=group:release-managers',
        '--permission',
        'Approve=user:vic',
        '-o',
        'json',
      ]),
    ).toMatch(/"Approve"/);
    const dev = JSON.parse(await admin(['space', 'get', 'acme-dev', '-o', 'json']));
    expect(dev.Permissions.Approve.GroupIDs).toHaveLength(1);
    expect(dev.Permissions.Approve.UserIDs).toHaveLength(1);
    expect((await tryAs('bob')(['variant', 'approve', 'acme-dev', '--dry-run'])).code).toBe(0);
    expect((await tryAs('bob')(['variant', 'approve', 'acme-dev'])).stderr).toBe(
      "Failed: HTTP 403: Approve permission in space 'acme-dev' is needed to approve there\n",
    );
    expect(
      await as('vic')(['variant', 'approve', 'acme-dev', '--claim', 'ticket=T-1', '--expires-in', '24h', '-o', 'json']),
    ).toMatch(/"Result": "Pass"/);
    await admin(['space', 'update', 'acme-dev', '--remove-permission', 'Approve']);
    expect(JSON.parse(await admin(['space', 'get', 'acme-dev', '-o', 'json'])).Permissions).toBeUndefined();
    expect((await tryAs('bob')(['variant', 'approve', 'acme-dev'])).code).toBe(0);
    expect((await tryAs('admin')(['space', 'update', 'acme-dev', '--permission', 'Approve=team:x'])).stderr).toMatch(
      /^Usage: --permission takes <View\|Edit\|Approve\|Manage\|ReportStatus>=user:<user>\|group:<group>; got 'Approve=team:x'/,
    );
    // Tokens: made (the secret shown once), listed without secrets, revoked.
    const made = await as('bob')(['token', 'create', '--expires-in', '720h', '--description', 'ci']);
    const [, id, secret] =
      /^Token (\S+), expires \S+ \(the secret is shown once\):\n\n {2}(bt_\S+)\n$/.exec(made) ?? [];
    expect(secret).toBeDefined();
    await ok(['context', 'set', 'bob-ci', '--server', env.url, '--token', secret!]);
    expect(await as('bob-ci')(['space', 'list', '-q'])).toMatch(/acme-base/);
    const tokens = await as('bob')(['token', 'list']);
    expect(tokens).toMatch(new RegExp(`${id}\\s+\\S+\\s+\\S+Z\\s+ci`));
    expect(tokens).not.toContain(secret!);
    expect(await as('bob')(['token', 'revoke', id!])).toMatch(new RegExp(`^Revoked token ${id} at `));
    expect((await tryAs('bob-ci')(['space', 'list'])).stderr).toMatch(
      /^Failed: HTTP 401: the bearer token was revoked at /,
    );
    expect(
      await admin(['token', 'create', '--service', 'argocd', '--scope', 'ReportStatus', '--space', 'acme-prod-use1']),
    ).toMatch(/^Token \S+ \(the secret is shown once\)/);
    expect((await tryAs('bob')(['token', 'create', '--service', 'flux', '--scope', 'ReportStatus'])).stderr).toBe(
      'Failed: HTTP 403: only an Admin may create service tokens\n',
    );
    // A deleted user's tokens stop at once.
    expect(await admin(['user', 'delete', 'bob'])).toBe('Deleted user bob and 2 token(s) of theirs\n');
    expect((await tryAs('bob')(['space', 'list'])).stderr).toBe('Failed: HTTP 401: the bearer token is not valid\n');
  });
});
