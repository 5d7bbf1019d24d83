import { bool, flag, flags, need, pairs, UsageError } from '../args.ts';
import { seg } from '../client.ts';
import type {
  AttestationPrerequisite,
  ChangeOrderView,
  ChangeWorkflow,
  WorkflowStage,
} from '../../lib/model/change-orders.ts';
import { print, say } from '../output.ts';
import { parse } from 'yaml';
import { workflowFromFile, workflowFromFlags } from '../workflow.ts';
import { type Command, type HelpTable, COLUMNS, out, locate, readInput, list, listHelp, refHelp } from '../common.ts';
import { explainChangeOrder, printChangeOrder } from './changeorder-view.ts';
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
