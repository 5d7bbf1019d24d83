import { bool, flag, flags, need, pairs, UsageError, type Args } from '../args.ts';
import { ApiError, Client, seg, type Answer } from '../client.ts';
import type { WithSpaceSlug } from '../../lib/model/common.ts';
import type { Component, Space, Unit } from '../../lib/model/entities.ts';
import type {
  AttestationPrerequisite,
  ChangeOrderView,
  ChangeWorkflow,
  WorkflowStage,
} from '../../lib/model/change-orders.ts';
import type { Explanation, GateResult } from '../../lib/model/change-orders.ts';
import type { ChangeOrderPromotion, UnitResult } from '../api.ts';
import { failed, print, say } from '../output.ts';
import { withProgress } from '../progress.ts';
import { parse } from 'yaml';
import { workflowFromFile, workflowFromFlags } from '../workflow.ts';
import {
  type Command,
  type HelpTable,
  COLUMNS,
  out,
  locate,
  readInput,
  list,
  printUnitResults,
  listHelp,
  refHelp,
  userNames,
} from '../common.ts';

/** ChangeWorkflows and ChangeOrders. */
export const changesCommands: Record<string, Record<string, Command>> = {
  changeworkflow: {
    list: (a, c) =>
      list(
        c,
        a,
        `/space/${seg(need(a, 'space', 'cub changeworkflow list --space <space>'))}/change_workflow`,
        COLUMNS.changeworkflow,
      ),
    get: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0],
        'changeworkflow',
        'cub changeworkflow get --space <space> <workflow>',
      );
      print((await c.get<ChangeWorkflow>(`/space/${seg(space)}/change_workflow/${seg(slug)}`)).body, out(a) ?? 'yaml');
    },
    delete: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0],
        'changeworkflow',
        'cub changeworkflow delete --space <space> <workflow>',
      );
      await c.delete(`/space/${seg(space)}/change_workflow/${seg(slug)}`);
      say(out(a), `Deleted change workflow ${slug}`, { Deleted: 'ChangeWorkflow', Space: space, Slug: slug }, slug);
    },
    create: async (a, c) => {
      const usage =
        'cub changeworkflow create --space <space> <slug> (--filename <file|-> | --stage S… [--prerequisites A,B]) | --changeworkflow <slug> --dest-space <space>';
      const source = flag(a, 'changeworkflow');
      if (source) {
        const dest = need(a, 'dest-space', usage);
        // A bare slug: in --space when given, else found by the server (in the destination, or the one of that name).
        const space = flag(a, 'space');
        const ref = source.includes('/') || !space ? source : `${space}/${source}`;
        return print(
          (
            await c.post<ChangeWorkflow>(`/space/${seg(dest)}/change_workflow/clone`, {
              Source: ref,
              Slug: a.positional[0],
            })
          ).body,
          out(a),
          COLUMNS.changeworkflow,
        );
      }
      const file = flag(a, 'filename');
      let body: Record<string, unknown>;
      let slug = a.positional[0];
      if (file) {
        const text = readInput(file);
        const parsed = parse(text) as Record<string, unknown>;
        if (!parsed || typeof parsed !== 'object') throw new UsageError(`${file} holds no workflow`);
        const w = workflowFromFile(parsed);
        slug ??= w.slug;
        body = w.definition;
      } else {
        const stages = flags(a, 'stage');
        if (!stages.length) throw new UsageError(usage);
        body = workflowFromFlags(
          stages,
          (flag(a, 'prerequisites') ?? '').split(',').filter(Boolean),
        ) as unknown as Record<string, unknown>;
      }
      if (!slug) throw new UsageError(`name the workflow: ${usage}`);
      print(
        (
          await c.post<ChangeWorkflow>(`/space/${seg(need(a, 'space', usage))}/change_workflow`, {
            Slug: slug,
            ...body,
          })
        ).body,
        out(a),
        COLUMNS.changeworkflow,
      );
    },
    update: async (a, c) => {
      const usage =
        'cub changeworkflow update --space <space> <slug> [--stage S…] [--stage-where-space S=expr] [--stage-prerequisites S=A;B] [--attestation-prerequisite N] [--attestation-prerequisite-count N=2]';
      const { space, slug } = locate(a, a.positional[0], 'changeworkflow', usage);
      const path = `/space/${seg(space)}/change_workflow/${seg(slug)}`;
      const cur = (await c.get<ChangeWorkflow>(path)).body;
      let stages: WorkflowStage[] = cur.Stages;
      const named = flags(a, 'stage');
      if (named.length) {
        // The Stages named are the Stages it has, in that order; one named again keeps its fields.
        stages = named.map(
          (n) =>
            stages.find((s) => s.Name === n) ?? { Name: n, WhereSpace: `Labels.Stage = '${n.replace(/'/g, "''")}'` },
        );
      }
      const stageValue = (kv: string, flagName: string): [WorkflowStage, string] => {
        const eq = kv.indexOf('=');
        if (eq <= 0) throw new UsageError(`--${flagName} takes <stage>=<value>, got '${kv}'`);
        const stage = stages.find((s) => s.Name === kv.slice(0, eq));
        if (!stage) throw new UsageError(`--${flagName}: the workflow has no stage '${kv.slice(0, eq)}'`);
        return [stage, kv.slice(eq + 1)];
      };
      for (const kv of flags(a, 'stage-where-space')) {
        const [stage, v] = stageValue(kv, 'stage-where-space');
        stage.WhereSpace = v;
      }
      for (const kv of flags(a, 'stage-prerequisites')) {
        const [stage, v] = stageValue(kv, 'stage-prerequisites');
        stage.Prerequisites = v
          .split(/[;,]/)
          .map((x) => x.trim())
          .filter(Boolean);
      }
      for (const kv of flags(a, 'stage-release-prerequisites')) {
        const [stage, v] = stageValue(kv, 'stage-release-prerequisites');
        stage.ReleasePrerequisites = v
          .split(/[;,]/)
          .map((x) => x.trim())
          .filter(Boolean);
      }
      const attestations: AttestationPrerequisite[] = [...(cur.AttestationPrerequisites ?? [])];
      for (const name of flags(a, 'attestation-prerequisite'))
        if (!attestations.some((x) => x.Name === name)) attestations.push({ Name: name });
      for (const [name, n] of Object.entries(pairs(a, 'attestation-prerequisite-count'))) {
        const att = attestations.find((x) => x.Name === name);
        if (!att)
          throw new UsageError(
            `--attestation-prerequisite-count: no attestation prerequisite '${name}'; declare it with --attestation-prerequisite ${name}`,
          );
        if (!/^\d+$/.test(n))
          throw new UsageError(`--attestation-prerequisite-count ${name}=${n}: the count must be a number`);
        att.Count = Number(n);
      }
      const body: Record<string, unknown> = { Version: cur.Version, Stages: stages };
      if (attestations.length) body.AttestationPrerequisites = attestations;
      if (flag(a, 'prerequisites') !== undefined)
        body.Final = { Prerequisites: flag(a, 'prerequisites')!.split(',').filter(Boolean) };
      print((await c.patch<ChangeWorkflow>(path, body)).body, out(a), COLUMNS.changeworkflow);
    },
  },
  changeorder: {
    explain: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0],
        'changeorder',
        'cub changeorder explain --space <space> <slug> [--target-stage S]',
      );
      await explainChangeOrder(a, c, `${space}/${slug}`);
    },
    create: async (a, c) => {
      const usage =
        'cub changeorder create --space <space> <slug> [--description D] [--change-workflow space/workflow] [--in-scope-space S]… [--component C] [--where-space-field W] [--space-filter space/filter] [--end-tag T] [--prior-revisions Include|Skip|Error|All] [--update-type UpgradeUnit|MergeUnits] [--allow-exists]';
      const { space, slug } = locate(a, a.positional[0], 'changeorder', usage);
      const body = {
        Slug: slug,
        Description: flag(a, 'description'),
        ChangeWorkflowID: flag(a, 'change-workflow'),
        InScopeSpaceIDs: flags(a, 'in-scope-space').flatMap((x) => x.split(',')),
        ComponentID: flag(a, 'component'),
        WhereSpace: flag(a, 'where-space-field'),
        SpaceFilterID: flag(a, 'space-filter'),
        EndTagID: flag(a, 'end-tag'),
        PriorRevisions: flag(a, 'prior-revisions'),
        UpdateType: flag(a, 'update-type'),
        AllowExists: bool(a, 'allow-exists') || undefined,
        InvocationID: flag(a, 'invocation'),
        Parameters: flags(a, 'param').length ? pairs(a, 'param') : undefined,
        WhereUnit: flag(a, 'where-unit'),
        UnitFilterID: flag(a, 'unit-filter'),
      };
      const r = await c.post<ChangeOrderView>(`/space/${seg(space)}/change_order`, body);
      await printChangeOrder(c, r.body, out(a));
    },
    get: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0],
        'changeorder',
        'cub changeorder get --space <space> <change-order>',
      );
      await printChangeOrder(
        c,
        (await c.get<ChangeOrderView>(`/space/${seg(space)}/change_order/${seg(slug)}`)).body,
        out(a),
      );
    },
    list: async (a, c) => {
      const space = flag(a, 'space');
      await list(c, a, space ? `/space/${seg(space)}/change_order` : '/change_order', COLUMNS.changeorder);
    },
    update: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0],
        'changeorder',
        'cub changeorder update --space <space> <change-order> [--refresh-spaces] [--description D] [--aborted-reason R]',
      );
      const removing = flags(a, 'remove-space').flatMap((x) => x.split(','));
      const body = {
        RefreshSpaces: bool(a, 'refresh-spaces') || undefined,
        RemoveSpaces: removing.length ? removing : undefined,
        Description: flag(a, 'description'),
        AbortedReason: flag(a, 'aborted-reason'),
      };
      await printChangeOrder(
        c,
        (await c.patch<ChangeOrderView>(`/space/${seg(space)}/change_order/${seg(slug)}`, body)).body,
        out(a),
      );
    },
  },
};

/** Space IDs → slugs, for reading a ChangeOrder. */
async function spaceSlugs(c: Client): Promise<Map<string, string>> {
  return new Map((await c.get<Space[]>('/space')).body.map((s) => [s.SpaceID, s.Slug]));
}

/** `cub changeorder get`: where the change has got to. */
async function printChangeOrder(
  c: Client,
  co: ChangeOrderView & Partial<WithSpaceSlug<object>>,
  format: string | undefined,
): Promise<void> {
  if (format === 'json' || format === 'yaml') return print(co, format);
  const slugs = await spaceSlugs(c);
  // A Space deleted since it was taken into scope has no name any more: say so, with the start of its ID.
  const names = (ids: string[] = []) =>
    ids
      .map((id) => slugs.get(id) ?? `(deleted space ${id.slice(0, 8)})`)
      .sort()
      .join(', ') || '-';
  const users =
    co.AbortedBy || co.PromotionFailures?.length || co.RemovedSpaces?.length
      ? await userNames(c)
      : new Map<string, string>();
  const user = (id: string) => users.get(id) ?? id;
  const component = co.ComponentID
    ? ((await c.get<Component[]>('/component')).body.find((x) => x.ComponentID === co.ComponentID)?.Slug ??
      co.ComponentID)
    : undefined;
  // The selection as it was asked: the Component by name, the rest of the where as written.
  const where = co.WhereSpace?.split(' AND ')
    .filter((part) => !/^ComponentID = '[^']*'$/.test(part))
    .join(' AND ');
  const units = new Map<string, string>();
  if (Object.keys(co.SkippedUnits ?? {}).length)
    for (const u of (await c.get<Unit[]>(`/space/${seg(co.SpaceID)}/unit`)).body) units.set(u.UnitID, u.Slug);
  const failure = co.PromotionFailures?.[co.PromotionFailures.length - 1];
  const rows: [string, string][] = [
    ['Name', co.Slug],
    ['Space', co.SpaceSlug ?? slugs.get(co.SpaceID) ?? co.SpaceID],
    ['Description', co.Description ?? ''],
    ['State', co.State],
    ['Stage', co.Stage ?? '-'],
    ['Completed', String(!!co.Completed)],
    ...(component ? [['Component', component] as [string, string]] : []),
    ['Where Space', where || '-'],
    ['In-Scope Spaces', names(co.InScopeSpaceIDs)],
    ['Resolved Spaces', names(co.ResolvedSpaceIDs)],
    ['Released Spaces', names(co.ReleasedSpaceIDs)],
    ...((co.RemovedSpaces ?? []).length
      ? [
          [
            'Removed Spaces',
            co.RemovedSpaces!.map((r) => `${r.SpaceSlug} (${r.RemovedAt} by ${user(r.UserID)})`).join(', '),
          ] as [string, string],
        ]
      : []),
    [
      'Skipped Units',
      Object.entries(co.SkippedUnits ?? {})
        .map(([id, why]) => `${units.get(id) ?? id} (${why})`)
        .join('; ') || '-',
    ],
  ];
  if (co.AbortedReason)
    rows.push([
      'Aborted Reason',
      `${co.AbortedReason}${co.AbortedAt ? ` (${co.AbortedAt}${co.AbortedBy ? ` by ${user(co.AbortedBy)}` : ''})` : ''}`,
    ]);
  if (co.AbortedReason || co.RestoredSpaceIDs?.length) {
    rows.push(['Restored Spaces', names(co.RestoredSpaceIDs)]);
    rows.push(['Restore-released Spaces', names(co.ReleasedRestoredSpaceIDs)]);
  }
  if (failure) {
    rows.push([
      'Promotion Failure',
      `${failure.FailedAt} by ${user(failure.UserID)}${failure.Stage ? ` into ${failure.Stage}` : ''}: ${failure.Spaces.map((s) => `${s.SpaceSlug} ${s.Action}${s.Error ? ` (${s.Error})` : ''}`).join('; ')}`,
    ]);
  }
  const width = Math.max(...rows.map(([k]) => k.length));
  process.stdout.write(rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n') + '\n');
}

/** `cub variant promote --change-order`: refusals read like the spec's, other failures per Space. */
/** What an explanation's gates read, as the API gives it. */
interface LiveEvidence {
  ReleaseNum: number;
  Digest?: string;
  LiveStatus?: { Sync?: string; Health?: string; Operation?: string; ObservedAt?: string; Reporter?: string };
  CarriesChange?: boolean;
}
interface Evidence {
  Hold?: string;
  Owner?: string;
  Covers?: string;
  Reason?: string;
  ExpiresAt?: string | null;
  Taken?: boolean;
  ReleaseTarget?: string | null;
  Releases?: { ReleaseNum: number; Digest: string; CarriesChange: boolean }[];
  Latest?: LiveEvidence | null;
  History?: { Health?: string; ObservedAt: string }[];
  Units?: {
    Unit: string;
    RevisionNum: number;
    ValidationErrors?: Record<string, string>;
    Counted?: string[];
    Rejected?: string[];
    Excluded?: { User: string; Why: string }[];
  }[];
  Expression?: string;
  Values?: Record<string, unknown>;
  Count?: number;
  Type?: string;
}

/** One line of what a gate read. */
function evidenceLine(g: GateResult): string {
  const e = (g.Evidence ?? {}) as Evidence;
  const live = (r: LiveEvidence | null | undefined) =>
    r
      ? `release ${r.ReleaseNum} (${String(r.Digest ?? '').slice(0, 19)}) ${r.LiveStatus?.Sync ?? '-'}/${r.LiveStatus?.Health ?? '-'}${r.LiveStatus?.Operation ? `/${r.LiveStatus.Operation}` : ''}${r.LiveStatus?.ObservedAt ? ` observed ${r.LiveStatus.ObservedAt}` : ''}${r.LiveStatus?.Reporter ? ` by ${r.LiveStatus.Reporter}` : ''}${r.CarriesChange === false ? ', not the change' : ''}`
      : 'no published release';
  if (g.Prerequisite === 'Hold')
    return `hold ${e.Hold} by ${e.Owner} on ${e.Covers}: ${e.Reason}${e.ExpiresAt ? `, until ${e.ExpiresAt}` : ''}`;
  if (g.Prerequisite === 'Taken') return e.Taken ? 'took the change' : 'has not taken the change';
  if (g.Prerequisite === 'Released')
    return e.ReleaseTarget === null
      ? 'no release target'
      : (e.Releases ?? [])
          .map(
            (r) => `release ${r.ReleaseNum} (${String(r.Digest).slice(0, 19)})${r.CarriesChange ? ' carries it' : ''}`,
          )
          .join(', ') || 'no published release';
  if (g.Prerequisite === 'Healthy' || g.Prerequisite.startsWith('Soak='))
    return e.ReleaseTarget === null
      ? 'no release target'
      : `${live(e.Latest)}${e.History?.length ? `; history ${e.History.map((h) => `${h.Health}@${h.ObservedAt}`).join(' → ')}` : ''}`;
  if (g.Prerequisite === 'Validated')
    return (e.Units ?? [])
      .map(
        (u) =>
          `${u.Unit} r${u.RevisionNum}: ${Object.keys(u.ValidationErrors ?? {}).length ? Object.values(u.ValidationErrors!).join('; ') : 'valid'}`,
      )
      .join(', ');
  if (e.Expression)
    return `${e.Expression} with ${
      Object.entries(e.Values ?? {})
        .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
        .join(', ') || 'no variables'
    }`;
  if (e.Units) {
    return e.Units.map(
      (u) =>
        `${u.Unit} r${u.RevisionNum}: ${u.Counted?.length ?? 0}/${e.Count} ${e.Type}${u.Counted?.length ? ` (${u.Counted.join(', ')})` : ''}${u.Rejected?.length ? `; rejected by ${u.Rejected.join(', ')}` : ''}${u.Excluded?.length ? `; not counted: ${u.Excluded.map((x) => `${x.User} (${x.Why})`).join(', ')}` : ''}`,
    ).join('; ');
  }
  return '';
}

/** `cub changeorder explain` and `cub variant promote --dry-run --explain`: each gate, what it read, what opens it. */
async function explainChangeOrder(a: Args, c: Client, co: string): Promise<Explanation> {
  const [space, slug] = co.includes('/')
    ? [co.slice(0, co.indexOf('/')), co.slice(co.indexOf('/') + 1)]
    : [flag(a, 'space') ?? '', co];
  const query = {
    target_stage: flag(a, 'target-stage'),
    space: a.positional.length > 1 ? a.positional.slice(1).join(',') : undefined,
    where_space: flag(a, 'where-space'),
  };
  const r = (await c.get<Explanation>(`/space/${seg(space)}/change_order/${seg(slug)}/explain`, query)).body;
  const format = out(a);
  if (format === 'json' || format === 'yaml') {
    print(r, format);
    return r;
  }
  if (!r.Gates.length && r.Message) {
    process.stdout.write(`${r.Message}\n`);
    return r;
  }
  const failing = r.Gates.filter((g) => !g.Satisfied).length;
  process.stdout.write(
    `${r.Stage ? `Stage '${r.Stage}'` : 'The named spaces'} (${r.Targets.map((t) => t.SpaceSlug).join(', ')}): ${r.Open ? 'open' : `blocked, ${failing} of ${r.Gates.length} gate(s) fail`}; gates over ${r.Over.map((s) => s.SpaceSlug).join(', ')}\n`,
  );
  for (const g of r.Gates) {
    process.stdout.write(
      `  ${g.Satisfied ? 'holds' : 'FAILS'}  ${g.SpaceSlug || '*'}  ${g.Prerequisite}: ${g.Message}\n`,
    );
    const line = evidenceLine(g);
    if (line) process.stdout.write(`         read: ${line}\n`);
    if (!g.Satisfied && g.Opens) process.stdout.write(`         opens: ${g.Opens}\n`);
  }
  for (const f of r.Failed ?? [])
    process.stdout.write(`  last promotion into ${f.SpaceSlug} failed (${f.FailedAt}): ${f.Error}\n`);
  return r;
}

export async function promoteChangeOrder(a: Args, c: Client, co: string, space: string | undefined): Promise<void> {
  if (bool(a, 'explain')) {
    if (!bool(a, 'dry-run')) throw new UsageError('--explain goes with --dry-run: it explains, and promotes nothing');
    // The same state, the same exit status as --dry-run alone: a blocked promotion is 1.
    const r = await explainChangeOrder(a, c, co);
    if (r.Gates.length && !r.Open) process.exitCode = 1;
    return;
  }
  const body = {
    ChangeOrderID: co,
    TargetStage: flag(a, 'target-stage'),
    Space: space,
    WhereSpace: flag(a, 'where-space'),
    DryRun: bool(a, 'dry-run') || undefined,
    PriorRevisions: flag(a, 'prior-revisions'),
    Force: bool(a, 'force') || undefined,
    ForceReason: flag(a, 'force-reason'),
    // Accepted for an Invoke change order (its Invocation's writes are protected); the server refuses it for a merge.
    Protect: bool(a, 'protect') || undefined,
    Async: bool(a, 'async') || bool(a, 'detach') || undefined,
  };
  if (flag(a, 'tag') !== undefined)
    throw new UsageError("--tag is refused with --change-order: the change order's own tags mark what it promotes");
  let r;
  try {
    const label = `${body.DryRun ? 'planning' : 'promoting'} ${co}${body.TargetStage ? ` into ${body.TargetStage}` : ''}`;
    // A large stage (or --async) runs as a job: followed to its end, then shown as the request's own answer.
    r = await c.settle<ChangeOrderPromotion>(
      await withProgress<Answer<unknown>>(label, c.post<unknown>('/promote', body)),
      label,
      { detach: bool(a, 'detach') },
    );
  } catch (e) {
    if (e instanceof ApiError && e.status === 409 && e.message.startsWith('unable to promote')) {
      failed(e.message);
      process.exitCode = 1;
      return;
    }
    throw e;
  }
  const format = out(a);
  if (format === 'json' || format === 'yaml') return print(r.body, format);
  if (format === 'mutations')
    return printUnitResults(
      r.body.Spaces.flatMap((s) => s.Units.map((u) => ({ ...u, UnitSlug: `${s.SpaceSlug}/${u.UnitSlug}` }))),
      'mutations',
    );
  if (r.body.Message && !r.body.Spaces.length) {
    process.stdout.write(`${r.body.Message}\n`);
    return;
  }
  process.stdout.write(
    `${r.body.DryRun ? 'Would promote' : 'Promoted'} change order into ${r.body.Stage ? `stage '${r.body.Stage}'` : 'the named spaces'}: ${r.body.Landed} of ${r.body.Total} space(s)${r.body.Forced ? ' (forced past failing gates)' : ''}\n`,
  );
  print(
    r.body.Spaces.flatMap((s) =>
      s.Units.length ? s.Units.map((u): { s: typeof s; u?: UnitResult } => ({ s, u })) : [{ s, u: undefined }],
    ),
    'table',
    [
      ['Space', (x) => x.s.SpaceSlug],
      ['SpaceAction', (x) => x.s.Action],
      ['Unit', (x) => x.u?.UnitSlug ?? ''],
      ['Action', (x) => x.u?.Action ?? ''],
      ['Reason', (x) => x.u?.Reason ?? ''],
      ['Revisions', (x) => (x.u?.RevisionNums ?? []).join(',')],
      ['Error', (x) => x.u?.Error?.Message ?? (x.u ? '' : (x.s.Error ?? ''))],
    ],
  );
  if (r.status === 207) {
    failed(r.body.Message ?? 'some spaces did not take the change');
    process.exitCode = 1;
  }
}

/** Per-unit results of an upgrade, clone or promotion: a table, the values that change (`-o mutations`), or JSON/YAML. */

const coArg: [string, string] = ['[change-order]', 'the ChangeOrder: <slug> with --space, or <space>/<slug>'];

export const changesHelp: HelpTable = {
  changeworkflow: {
    list: listHelp('ChangeWorkflows', 'changeworkflow', `--space acme-workflows --where "Slug LIKE 'acme-%'"`),
    get: refHelp('get', 'ChangeWorkflow', 'changeworkflow', '--space acme-workflows acme-main-line'),
    delete: refHelp('delete', 'ChangeWorkflow', 'changeworkflow', '--space acme-workflows acme-simple'),
    create: {
      summary: 'Create a ChangeWorkflow: the Stages a change goes through and what must hold before each',
      args: [['[workflow]', 'the new workflow (default the name in the file)']],
      flags: [
        'space',
        'filename',
        ['stage', 'a Stage, in order (repeatable); it selects Spaces labelled Stage=<stage>'],
        'prerequisites',
        'changeworkflow',
        'dest-space',
      ],
      example:
        'cub changeworkflow create --space acme-workflows acme-simple --stage Development --stage Staging --stage Production --prerequisites Released,Healthy',
    },
    update: {
      summary: 'Change a ChangeWorkflow’s Stages, their selection and prerequisites',
      args: [['[workflow]', '<slug> with --space, or <space>/<slug>']],
      flags: [
        'space',
        ['stage', 'the Stages it has, in order (repeatable)'],
        'stage-where-space',
        'stage-prerequisites',
        'stage-release-prerequisites',
        'attestation-prerequisite',
        'attestation-prerequisite-count',
        'prerequisites',
      ],
      example:
        "cub changeworkflow update --space acme-workflows acme-simple --stage-prerequisites 'Production=Released;Healthy;Validated'",
    },
  },
  changeorder: {
    explain: {
      summary:
        'Why the next promotion would or would not go ahead: every gate over each Space, what it read (Releases, digests, live status, CEL values, attestations, holds) and what would open it; writes nothing',
      args: [coArg],
      flags: ['space', 'target-stage'],
      example: 'cub changeorder explain --space acme-base release-v452 --target-stage prod',
    },
    create: {
      summary: 'Start a ChangeOrder: name a change made in a Space, to carry it through the workflow’s Stages',
      args: [coArg],
      flags: [
        'space',
        'description',
        'change-workflow',
        'in-scope-space',
        'component',
        'where-space-field',
        'space-filter',
        'end-tag',
        'prior-revisions',
        ['update-type', 'UpgradeUnit (default), MergeUnits, or Invoke (run an Invocation in each Space)'],
        'invocation',
        'param',
        'where-unit',
        'unit-filter',
        'allow-exists',
      ],
      example:
        "cub changeorder create --space acme-base release-v453 --description 'Release v453: bump the image tag' --change-workflow acme-workflows/acme-main-line",
    },
    get: {
      summary: 'Where a change has got to: State, Stage, Spaces resolved and released',
      args: [coArg],
      flags: ['space'],
      example: 'cub changeorder get --space acme-base release-v452',
    },
    list: {
      summary: 'List ChangeOrders, of a Space or everywhere',
      flags: ['space', 'where', 'filter', 'limit', 'continue'],
      example: 'cub changeorder list --where "State = \'InProgress\'"',
    },
    update: {
      summary: 'Refresh a ChangeOrder’s scope, change its description, or abort it',
      args: [coArg],
      flags: ['space', 'refresh-spaces', 'remove-space', 'description', 'aborted-reason'],
      example: 'cub changeorder update --space acme-base release-v452 --aborted-reason "superseded by v453"',
    },
  },
};
