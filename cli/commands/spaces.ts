import { bool, flag, flags, pairs, UsageError } from '../args.ts';
import { seg } from '../client.ts';
import { print, say } from '../output.ts';
import type { WithSpaceSlug } from '../../lib/model/common.ts';
import type { ChangeSet, Component, Filter, Invocation, Space, Tag, Target } from '../../lib/model/entities.ts';
import type { SpaceDeletion } from '../api.ts';
import { permissionsPatch } from './people.ts';
import {
  type Command,
  type HelpTable,
  COLUMNS,
  out,
  locate,
  labelsPatch,
  list,
  spaceKind,
  listHelp,
  refHelp,
} from '../common.ts';

/** Spaces, Components and the simple Space-resident kinds (ChangeSets, Tags, Filters, Targets). */
export const spacesCommands: Record<string, Record<string, Command>> = {
  space: {
    create: async (a, c) => {
      const slug = a.positional[0];
      if (!slug) throw new UsageError('cub space create <slug> [--label k=v] [--annotation k=v]');
      const body = {
        Slug: slug,
        DisplayName: flag(a, 'display-name'),
        Labels: pairs(a, 'label'),
        Annotations: pairs(a, 'annotation'),
        ReleaseTargetID: flag(a, 'release-target'),
        ComponentID: flag(a, 'component'),
      };
      print((await c.post<Space>('/space', body)).body, out(a), COLUMNS.space);
    },
    get: async (a, c) => {
      const slug = a.positional[0] ?? flag(a, 'space');
      if (!slug) throw new UsageError('cub space get <slug>');
      print((await c.get<Space>(`/space/${seg(slug)}`)).body, out(a), COLUMNS.space);
    },
    list: (a, c) => list(c, a, '/space', COLUMNS.space),
    update: async (a, c) => {
      const slug = a.positional[0] ?? flag(a, 'space');
      if (!slug)
        throw new UsageError(
          'cub space update <slug> [--label k=v] [--annotation k=v] [--release-target space/target]',
        );
      const cur = (await c.get<Space>(`/space/${seg(slug)}`)).body;
      const rt = flag(a, 'release-target') ?? flag(a, 'target');
      const permissions = permissionsPatch(
        a,
        cur.Permissions as Record<string, { UserIDs: string[]; GroupIDs: string[] }> | undefined,
      );
      const body = {
        Version: cur.Version,
        ...labelsPatch(a),
        ...(flag(a, 'display-name') ? { DisplayName: flag(a, 'display-name') } : {}),
        ...(flag(a, 'new-slug') ? { Slug: flag(a, 'new-slug') } : {}),
        ...(rt !== undefined ? { ReleaseTargetID: rt || null } : {}),
        ...(permissions ? { Permissions: permissions } : {}),
      };
      print((await c.patch<Space>(`/space/${seg(slug)}`, body)).body, out(a), COLUMNS.space);
    },
    delete: async (a, c) => {
      const slug = a.positional[0] ?? flag(a, 'space');
      if (!slug) throw new UsageError('cub space delete <slug> [--recursive]');
      const r = await c.delete<SpaceDeletion | undefined>(`/space/${seg(slug)}`, {
        recursive: bool(a, 'recursive') || bool(a, 'recursive-force') ? 'true' : undefined,
        force: bool(a, 'recursive-force') ? 'true' : undefined,
      });
      const removed = ((r.body?.RemovedLinks ?? []) as { Slug: string; SpaceID: string }[])
        .map((l) => `Removed link ${l.Slug} (space ${l.SpaceID}) that pointed into it\n`)
        .join('');
      say(
        out(a),
        `Deleted space ${slug}${r.body?.DeletedUnits?.length ? ` with ${r.body.DeletedUnits.length} unit(s)` : ''}\n${removed}`,
        { Deleted: 'Space', Slug: slug, ...(r.body ?? {}) },
        slug,
      );
    },
  },
  component: {
    list: (a, c) => list(c, a, '/component', COLUMNS.component),
    create: async (a, c) => {
      const slug = a.positional[0];
      if (!slug) throw new UsageError('cub component create <slug>');
      print(
        (await c.post<Component>('/component', { Slug: slug, Labels: pairs(a, 'label') })).body,
        out(a),
        COLUMNS.component,
      );
    },
    get: async (a, c) =>
      print((await c.get<Component>(`/component/${seg(a.positional[0] ?? '')}`)).body, out(a), COLUMNS.component),
  },
  changeset: {
    ...spaceKind('changeset', 'change_set'),
    create: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0],
        'changeset',
        'cub changeset create --space <space> <slug> [--description D]',
      );
      print(
        (
          await c.post<ChangeSet>(`/space/${seg(space)}/change_set`, {
            Slug: slug,
            Description: flag(a, 'description'),
          })
        ).body,
        out(a),
        COLUMNS.changeset,
      );
    },
    close: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0],
        'changeset',
        'cub changeset close --space <space> <changeset>',
      );
      const path = `/space/${seg(space)}/change_set/${seg(slug)}`;
      const cur = (await c.get<ChangeSet>(path)).body;
      print(
        (await c.patch<ChangeSet>(path, { Version: cur.Version, State: 'Closed' })).body,
        out(a),
        COLUMNS.changeset,
      );
    },
  },
  tag: {
    ...spaceKind('tag', 'tag'),
    create: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'tag', 'cub tag create --space <space> <slug>');
      print(
        (await c.post<WithSpaceSlug<Tag>>(`/space/${seg(space)}/tag`, { Slug: slug, Labels: pairs(a, 'label') })).body,
        out(a),
        COLUMNS.tag,
      );
    },
  },
  filter: {
    ...spaceKind('filter', 'filter'),
    create: async (a, c) => {
      const usage = 'cub filter create --space <space> <slug> <Entity> --where-field <where>';
      const { space, slug } = locate(a, a.positional[0], 'filter', usage);
      const from = a.positional[1] ?? flag(a, 'from');
      if (!from) throw new UsageError(`name the entity the filter selects: ${usage}`);
      const where = flag(a, 'where-field') ?? flag(a, 'where') ?? '';
      print(
        (await c.post<Filter>(`/space/${seg(space)}/filter`, { Slug: slug, From: from, Where: where })).body,
        out(a),
        COLUMNS.filter,
      );
    },
  },
  invocation: {
    ...spaceKind('invocation', 'invocation'),
    create: async (a, c) => {
      const usage =
        'cub invocation create --space <space> <slug> <ToolchainType> [--parameter name:type:required]… -- <function> <args…>';
      const [ref, toolchain, fn, ...words] = a.positional;
      const { space, slug } = locate(a, ref, 'invocation', usage);
      if (!toolchain || !fn) throw new UsageError(`name the toolchain and the function: ${usage}`);
      // Arguments as typed: --name=value or positional; a value starting template: is rendered from the parameters.
      const Arguments = words.map((w) => {
        const m = /^--([a-z][a-z-]*)=(.*)$/s.exec(w);
        const [name, value] = m ? [m[1], m[2]!] : [undefined, w];
        return {
          ...(name ? { ParameterName: name } : {}),
          ...(value.startsWith('template:')
            ? { Value: value.slice('template:'.length), Evaluator: 'template' }
            : { Value: value }),
        };
      });
      const Parameters = flags(a, 'parameter').map((p) => {
        const m = /^([^:]+):([^:]+)(?::(true|false))?$/.exec(p);
        if (!m) throw new UsageError(`--parameter takes name:type[:required], e.g. tag:string:true; got '${p}'`);
        return { ParameterName: m[1], DataType: m[2], Required: m[3] === 'true' };
      });
      const body = {
        Slug: slug,
        ToolchainType: toolchain,
        FunctionInvocations: [{ FunctionName: fn, Arguments }],
        Parameters,
        Labels: pairs(a, 'label'),
      };
      print((await c.post<Invocation>(`/space/${seg(space)}/invocation`, body)).body, out(a), COLUMNS.invocation);
    },
  },
  target: {
    ...spaceKind('target', 'target'),
    create: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0],
        'target',
        'cub target create --space <space> <slug> [--fact k=v] [--argocd-application [NS/]NAME | --flux-object KIND/NS/NAME]',
      );
      print(
        (
          await c.post<WithSpaceSlug<Target>>(`/space/${seg(space)}/target`, {
            Slug: slug,
            Facts: pairs(a, 'fact'),
            Labels: pairs(a, 'label'),
            DeployObject: deployObject(a),
          })
        ).body,
        out(a),
        COLUMNS.target,
      );
    },
    update: async (a, c) => {
      const { space, slug } = locate(
        a,
        a.positional[0],
        'target',
        'cub target update --space <space> <slug> [--fact k=v] [--argocd-application [NS/]NAME | --flux-object KIND/NS/NAME | --remove-deploy-object]',
      );
      const object = deployObject(a);
      if (object && bool(a, 'remove-deploy-object'))
        throw new UsageError(
          '--remove-deploy-object takes the deploy object off: give it alone, without --argocd-application or --flux-object',
        );
      const facts = pairs(a, 'fact');
      const current = (await c.get<Target>(`/space/${seg(space)}/target/${seg(slug)}`)).body;
      const body = {
        Version: current.Version,
        ...(Object.keys(facts).length ? { Facts: facts } : {}),
        ...labelsPatch(a),
        ...(object ? { DeployObject: object } : bool(a, 'remove-deploy-object') ? { DeployObject: null } : {}),
      };
      print(
        (await c.patch<WithSpaceSlug<Target>>(`/space/${seg(space)}/target/${seg(slug)}`, body)).body,
        out(a),
        COLUMNS.target,
      );
    },
  },
};

/** The deploy tool's object a Target names, from --argocd-application or --flux-object (one of the two). */
function deployObject(a: Parameters<Command>[0]): string | undefined {
  const [argo, flux] = [flag(a, 'argocd-application'), flag(a, 'flux-object')];
  if (argo !== undefined && flux !== undefined)
    throw new UsageError('a Target is deployed by one object: give --argocd-application or --flux-object, not both');
  return argo !== undefined ? `argocd:${argo}` : flux !== undefined ? `flux:${flux}` : undefined;
}

const LABELS = ['label', 'remove-label', 'annotation', 'remove-annotation'];
const spaceArg = (what: string): [string, string] => ['[space]', `the Space ${what} (or --space)`];

export const spacesHelp: HelpTable = {
  space: {
    create: {
      summary: 'Create a Space',
      args: [['<slug>', 'the new Space']],
      flags: ['display-name', 'label', 'annotation', 'release-target', 'component'],
      example: 'cub space create acme-scratch --label Stage=Scratch --annotation owner=dev-team',
    },
    get: {
      summary: 'Show a Space',
      args: [spaceArg('to show')],
      flags: ['space'],
      example: 'cub space get acme-dev -o yaml',
    },
    list: listHelp('Spaces', 'space', `--where "Labels.Stage = 'Production'"`, false),
    update: {
      summary: 'Change a Space: labels, annotations, name, release target',
      args: [spaceArg('to change')],
      flags: [
        'space',
        ...LABELS,
        'display-name',
        'new-slug',
        'release-target',
        'target',
        'permission',
        'remove-permission',
      ],
      example: 'cub space update acme-prod-euw1 --permission Approve=group:release-managers',
    },
    delete: {
      summary: 'Delete a Space (empty, or with --recursive)',
      args: [spaceArg('to delete')],
      flags: ['space', 'recursive', 'recursive-force'],
      example: 'cub space delete acme-scratch --recursive',
    },
  },
  component: {
    list: listHelp('Components', 'component', `--where "Slug LIKE 'acme%'"`, false),
    create: {
      summary: 'Create a Component (one application across its variants)',
      args: [['<slug>', 'the new Component']],
      flags: ['label'],
      example: 'cub component create billing',
    },
    get: { summary: 'Show a Component', args: [['<component>', 'its slug']], example: 'cub component get acme' },
  },
  changeset: {
    list: listHelp('ChangeSets', 'changeset', `--space acme-base --where "Slug LIKE 'release-%'"`),
    get: refHelp('get', 'ChangeSet', 'changeset', '--space acme-base release-v453'),
    delete: refHelp('delete', 'ChangeSet', 'changeset', '--space acme-base release-v453'),
    create: {
      summary: 'Open a ChangeSet: Units written within it are locked to it until it closes',
      args: [['<changeset>', '<slug> with --space, or <space>/<slug>']],
      flags: ['space', 'description'],
      example: "cub changeset create --space acme-base release-v453 --description 'v453'",
    },
    close: {
      summary: 'Close a ChangeSet, tagging its start and end revisions',
      args: [['[changeset]', '<slug> with --space, or <space>/<slug>']],
      flags: ['space'],
      example: 'cub changeset close --space acme-base release-v453',
    },
  },
  tag: {
    list: listHelp('Tags', 'tag', `--space acme-base --where "Slug LIKE 'v%'"`),
    get: refHelp('get', 'Tag', 'tag', '--space acme-base v1'),
    delete: refHelp('delete', 'Tag', 'tag', '--space acme-base v1'),
    create: {
      summary: 'Create a Tag (name revisions with cub unit tag)',
      args: [['<tag>', '<slug> with --space, or <space>/<slug>']],
      flags: ['space', 'label'],
      example: 'cub tag create --space acme-base v1',
    },
  },
  filter: {
    list: listHelp('Filters', 'filter', `--space acme-base --where "Slug LIKE 'prod-%'"`),
    get: refHelp('get', 'Filter', 'filter', '--space acme-base prod-spaces'),
    delete: refHelp('delete', 'Filter', 'filter', '--space acme-base prod-spaces'),
    create: {
      summary: 'Save a where expression over an entity, to select by name later',
      args: [
        ['<filter>', '<slug> with --space, or <space>/<slug>'],
        ['[entity]', 'what it selects: Space, Unit, … (or --from)'],
      ],
      flags: [
        'space',
        ['from', 'the entity it selects (or the second argument)', '<entity>'],
        'where-field',
        ['where', 'the same as --where-field'],
      ],
      example: 'cub filter create --space acme-base prod-spaces Space --where-field "Labels.Stage = \'Production\'"',
    },
  },
  invocation: {
    list: listHelp('Invocations', 'invocation', `--space acme-workflows --where "Slug LIKE 'set-%'"`),
    get: refHelp('get', 'Invocation', 'invocation', '--space acme-workflows set-image'),
    delete: refHelp('delete', 'Invocation', 'invocation', '--space acme-workflows set-image'),
    create: {
      summary:
        'Save an operation to run in each Space a ChangeOrder reaches: a function with arguments, templates over declared parameters',
      args: [
        ['<invocation>', '<slug> with --space, or <space>/<slug>'],
        ['<toolchain>', 'the ToolchainType it runs on, e.g. Kubernetes/YAML'],
        [
          '[function-and-args...]',
          "after --: the function and its arguments, positional or --name=value; 'template:{{ .Params.x }}' renders a parameter",
        ],
      ],
      flags: ['space', 'parameter', 'label'],
      example:
        "cub invocation create --space acme-workflows set-image Kubernetes/YAML --parameter tag:string:true -- set-image-reference-by-uri --repository-uri=ghcr.io/acme/acme --image-reference='template:{{ .Params.tag }}'",
    },
  },
  target: {
    list: listHelp('Targets', 'target', `--space acme-infra --where "Slug LIKE 't-prod%'"`),
    get: refHelp('get', 'Target', 'target', '--space acme-infra t-prod-apse1'),
    delete: refHelp('delete', 'Target', 'target', '--space acme-infra t-prod-apse1'),
    create: {
      summary:
        'Create a release Target (where a Space’s Releases deploy), and the Argo CD or Flux object that deploys it',
      args: [['<target>', '<slug> with --space, or <space>/<slug>']],
      flags: ['space', 'fact', 'label', 'argocd-application', 'flux-object'],
      example:
        'cub target create --space acme-infra t-prod-apse1 --fact cluster=prod-apse1 --argocd-application argocd/acme-prod-apse1',
    },
    update: {
      summary: 'Change a Target: its facts, labels, and the Argo CD or Flux object that deploys it',
      args: [['<target>', '<slug> with --space, or <space>/<slug>']],
      flags: ['space', 'fact', ...LABELS, 'argocd-application', 'flux-object', 'remove-deploy-object'],
      example:
        'cub target update --space acme-infra t-prod-apse1 --flux-object Kustomization/flux-system/acme-prod-apse1',
    },
  },
};
