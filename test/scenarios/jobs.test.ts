import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrganization } from '../../lib/local/bootstrap.ts';
import { startServer, type LocalServer } from '../../lib/local/server.ts';
import { localDeps } from '../../lib/local/wiring.ts';
import { dynamoStore } from '../../lib/store/store.ts';
import { dynamoClient, ensureTable } from '../../lib/store/table.ts';
import { cubAt, cubOk, cubOnTerminal, type CubResult } from '../support/cli.ts';
import { deploymentYaml } from '../support/harness.ts';

/** A server whose stages of more than 3 Spaces promote as jobs of 2-Space parts. */
let server: LocalServer;
let cub: (args: string[], input?: string) => Promise<CubResult>;
let ok: (args: string[], input?: string) => Promise<string>;
let onTerminal: (args: string[], env?: Record<string, string>) => Promise<CubResult>;
const client = dynamoClient(inject('dynamoEndpoint'));

beforeAll(async () => {
  const table = `cubjobs-${randomUUID().slice(0, 8)}`;
  await ensureTable(client, table);
  const { deps } = localDeps(dynamoStore(client, table), {}, { jobs: { thresholdSpaces: 3, partSpaces: 2 } });
  server = await startServer(deps, { checkAnswers: true });
  const { token } = await createOrganization(deps, `cubjobs-${table}`);
  cub = cubAt(server.url, token);
  ok = cubOk(cub);
  onTerminal = cubOnTerminal(server.url, token);
});
afterAll(async () => server.close());

async function fleet(name: string, n: number): Promise<void> {
  await ok(['space', 'create', `${name}-base`, '--label', 'Stage=Base']);
  for (const u of ['a', 'b']) await ok(['unit', 'create', '--space', `${name}-base`, u, '-'], deploymentYaml(u));
  for (let i = 0; i < n; i++)
    await ok([
      'variant',
      'create',
      `p${i}`,
      `${name}-base`,
      '--stage',
      'Production',
      '--space-slug',
      `${name}-p${i}`,
      '-q',
    ]);
  await ok(
    ['changeworkflow', 'create', '--space', `${name}-base`, 'w', '--filename', '-'],
    JSON.stringify({
      Stages: [{ Name: 'Production', WhereSpace: `Labels.Stage = 'Production' AND Slug LIKE '${name}-%'` }],
    }),
  );
  await ok([
    'function',
    'set',
    '--space',
    `${name}-base`,
    '--where',
    "Slug IN ('a', 'b')",
    '--change-desc',
    'scale',
    '-q',
    '--',
    'set-replicas',
    '5',
  ]);
  await ok(['changeorder', 'create', '--space', `${name}-base`, 'scale', '--change-workflow', `${name}-base/w`]);
}

describe('cub follows a job to its end', () => {
  it('prints the same table for a stage promoted as a job as for one promoted in the request, and shows the job', async () => {
    await fleet('small', 3);
    await fleet('large', 6);
    const small = await ok(['variant', 'promote', '--change-order', 'small-base/scale']);
    const large = await cub(['variant', 'promote', '--change-order', 'large-base/scale']);
    expect(large.stderr).toBe('');
    expect(large.code).toBe(0);
    expect(small).toMatch(/^Promoted change order into stage 'Production': 3 of 3 space\(s\)\n/);
    expect(large.stdout).toMatch(/^Promoted change order into stage 'Production': 6 of 6 space\(s\)\n/);
    // Row for row the same table (the Spaces' names aside): a header, then a row per Unit.
    const rows = (t: string, name: string) =>
      t
        .replaceAll(name, 'X')
        .split('\n')
        .slice(1)
        .filter((l) => l.trim());
    const [smallRows, largeRows] = [rows(small, 'small'), rows(large.stdout, 'large')];
    expect(largeRows).toHaveLength(1 + 6 * 2);
    expect(largeRows.slice(0, smallRows.length)).toEqual(smallRows);
    expect(largeRows.slice(1).every((l) => /^X-p\d\s+Promote\s+[ab]\s+Upgrade\s+\d/.test(l))).toBe(true);
    expect(await ok(['changeorder', 'get', '--space', 'large-base', 'scale', '-o', 'json'])).toContain(
      '"State": "Resolved"',
    );

    const asJob = JSON.parse(
      await ok([
        'variant',
        'approve',
        '--change-order',
        'large-base/scale',
        '--stage',
        'Production',
        '--async',
        '-o',
        'json',
      ]),
    );
    expect(asJob.Attestations).toHaveLength(6);
  });

  it('draws a progress bar on a terminal while it follows, and `cub job get` shows each Space', async () => {
    await fleet('tty', 8);
    const r = await onTerminal(['variant', 'promote', '--change-order', 'tty-base/scale'], { CUB_POLL_MS: '20' });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/promoting tty-base\/scale: \d\/8 space\(s\) \[[#-]{20}\] \(job [0-9a-f-]{36}\)/);
    expect(r.stdout).toContain("Promoted change order into stage 'Production': 8 of 8 space(s)");
    const id = /\(job ([0-9a-f-]{36})\)/.exec(r.stdout)![1]!;
    const shown = await ok(['job', 'get', id]);
    expect(shown).toMatch(new RegExp(`^Job ${id} \\(Promote\\): Done, 8/8 space\\(s\\) \\[#{20}\\]; answered 200\\n`));
    expect(shown).toMatch(/tty-p7\s+Done\s+Promote/);
    const json = JSON.parse(await ok(['job', 'get', id, '-o', 'json']));
    expect(json).toMatchObject({ JobID: id, State: 'Done', Status: 200, Result: { Landed: 8, Total: 8 } });
    const missing = await cub(['job', 'get', 'nope']);
    expect(missing).toMatchObject({ code: 1, stderr: "Failed: HTTP 404: job 'nope' not found\n" });
    expect((await cub(['job', 'get'])).code).toBe(2);
  });
});
