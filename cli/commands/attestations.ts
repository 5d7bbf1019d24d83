import { bool, flag, need, pairs, UsageError, type Args } from '../args.ts';
import { seg, type Client } from '../client.ts';
import { print, say, type Column } from '../output.ts';
import { type Command, type HelpTable, out, list, userNames } from '../common.ts';
import type { Attestation, AttestationView } from '../../lib/model/entities.ts';
import type { ApproveAnswer } from '../api.ts';
import { ref } from './people.ts';

export const attestationCols = (names: Map<string, string> = new Map()): Column<AttestationView>[] => [
  ['ID', (a) => a.AttestationID],
  ['Type', (a) => a.Type],
  ['Result', (a) => (a.RevokedAttestationID ? `revokes ${a.RevokedAttestationID.slice(0, 8)}` : a.Result)],
  ['By', (a) => names.get(a.UserID) ?? a.UserID],
  ['Revisions', (a) => a.Revisions.map((r) => r.RevisionNum).join(',')],
  ['Revoked', (a) => (a.RevokedBy ? 'yes' : '')],
  ['Created', (a) => a.CreatedAt],
  ['Note', (a) => a.Note ?? ''],
];

/** Prints what `variant approve` / `attestation create` recorded (or would), per Space and Unit. */
export function printApproval(a: Args, r: ApproveAnswer): void {
  const format = out(a);
  if (format === 'json' || format === 'yaml') return print(r, format);
  // The sentence's verb, as it would be and as it was: "Would approve" / "Approved", "Recorded ChangeRecord for".
  const [would, did] =
    r.Result === 'Fail'
      ? ['reject', 'Rejected']
      : r.Type === 'Approval'
        ? ['approve', 'Approved']
        : [`record ${r.Type} for`, `Recorded ${r.Type} for`];
  const recorded = r.Spaces.filter((s) => s.Action === 'Attest').length;
  for (const s of r.Spaces) if (s.Warning) process.stderr.write(`Warning: ${s.SpaceSlug}: ${s.Warning}\n`);
  process.stdout.write(`${r.DryRun ? `Would ${would}` : did} revisions in ${recorded} space(s)\n`);
  print(
    r.Spaces.flatMap(
      (s): { s: ApproveAnswer['Spaces'][number]; u?: ApproveAnswer['Spaces'][number]['Units'][number] }[] =>
        s.Units.length ? s.Units.map((u) => ({ s, u })) : [{ s }],
    ),
    'table',
    [
      ['Space', (x) => x.s.SpaceSlug],
      ['Attestation', (x) => x.s.AttestationID ?? (x.s.Action === 'Skipped' ? 'skipped' : '')],
      ['Unit', (x) => x.u?.UnitSlug ?? ''],
      ['Revision', (x) => x.u?.RevisionNum ?? ''],
      ['Skipped', (x) => x.u?.Skipped ?? (x.u ? '' : (x.s.Reason ?? ''))],
    ],
  );
}

/** Attestations: approvals and other records about revisions, listed, shown and revoked. */
export const attestationsCommands: Record<string, Record<string, Command>> = {
  attestation: {
    create: async (a, c) => {
      const usage = 'cub attestation create --space <space> --type <type> [--change-order space/co] [--claim k=v]…';
      const space = need(a, 'space', usage);
      const r = await c.post<ApproveAnswer>(`/space/${seg(space)}/attestation`, {
        Type: need(a, 'type', usage),
        ChangeOrderID: flag(a, 'change-order'),
        Where: flag(a, 'where'),
        Revision: flag(a, 'revision'),
        Note: flag(a, 'note'),
        Claims: pairs(a, 'claim'),
        ExpiresIn: flag(a, 'expires-in'),
        Reject: bool(a, 'reject') || undefined,
        DryRun: bool(a, 'dry-run') || undefined,
      });
      printApproval(a, r.body);
    },
    list: async (a, c) => {
      const space = need(a, 'space', 'cub attestation list --space <space>');
      await list(
        c,
        a,
        `/space/${seg(space)}/attestation`,
        attestationCols((out(a) ?? 'table') === 'table' ? await userNames(c) : undefined),
      );
    },
    get: async (a, c) => {
      const space = need(a, 'space', 'cub attestation get --space <space> <attestation-id>');
      print(
        (
          await c.get<AttestationView>(
            `/space/${seg(space)}/attestation/${seg(ref(a, 'attestation', 'cub attestation get --space <space> <attestation-id>'))}`,
          )
        ).body,
        out(a) ?? 'yaml',
      );
    },
    revoke: async (a, c) => {
      const id = ref(a, 'attestation', 'cub attestation revoke <attestation-id> [--space S] --note N');
      // The ID is unique in the organization: without --space, find the Space it lives in among those the caller sees.
      let space = flag(a, 'space');
      if (!space) space = await spaceOfAttestation(c, id);
      const r = await c.post<Attestation>(`/space/${seg(space)}/attestation/${seg(id)}/revoke`, {
        Note: flag(a, 'note'),
      });
      say(out(a), `Revoked attestation ${id} (revocation ${r.body.AttestationID})`, r.body, r.body.AttestationID);
    },
  },
};

/** The Space holding an attestation, found by listing (the spec's `cub attestation revoke <id>` names no Space). */
async function spaceOfAttestation(c: Client, id: string): Promise<string> {
  const spaces = (await c.get<{ SpaceID: string; Slug: string }[]>('/space')).body;
  for (const s of spaces) {
    const found = (
      await c.get<AttestationView[]>(`/space/${seg(s.SpaceID)}/attestation`, {
        where: `AttestationID = '${id.replace(/'/g, "''")}'`,
      })
    ).body;
    if (found.length) return s.SpaceID;
  }
  throw new UsageError(`no attestation '${id}' in any space you can see; give --space`);
}

export const attestationsHelp: HelpTable = {
  attestation: {
    create: {
      summary:
        'Record an attestation of a type in a Space (a change record, a security review…): over a ChangeOrder’s revisions there, or Units’ heads',
      flags: [
        'space',
        'type',
        'change-order',
        'claim',
        'note',
        'where',
        ['revision', 'attest this revision of each Unit (default the head)'],
        'expires-in',
        'reject',
        'dry-run',
      ],
      example:
        'cub attestation create --space acme-prod-use1 --type ChangeRecord --change-order acme-base/release-v452 --claim servicenow.com/change=CHG0012345',
    },
    list: {
      summary: 'The attestations of a Space, newest first (revocations included)',
      flags: ['space', 'where', 'filter', 'limit', 'continue'],
      example: 'cub attestation list --space acme-staging-euw1',
    },
    get: {
      summary: 'Show one attestation',
      args: [['<attestation-id>', 'its ID']],
      flags: ['space'],
      example:
        'cub attestation get --space acme-staging-euw1 "$(cub attestation list --space acme-staging-euw1 -q | head -1)"',
    },
    revoke: {
      summary: 'Revoke an attestation: records a revocation beside it (it is never edited or deleted)',
      args: [['<attestation-id>', 'its ID (cub attestation list)']],
      flags: [['space', 'the Space it lives in (found when omitted)'], 'note'],
      example:
        'cub attestation revoke "$(cub attestation list --space acme-staging-euw1 -q | head -1)" --note "looked again"',
    },
  },
};
