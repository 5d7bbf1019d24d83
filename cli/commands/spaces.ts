import { bool, flag, pairs, UsageError } from '../args.ts';
import { seg } from '../client.ts';
import { print } from '../output.ts';
import { type Command, COLUMNS, out, locate, labelsPatch, list, spaceKind } from '../common.ts';

/** Spaces, Components and the simple Space-resident kinds (ChangeSets, Tags, Filters, Targets). */
export const spacesCommands: Record<string, Record<string, Command>> = {
  space: {
    create: async (a, c) => {
      const slug = a.positional[0];
      if (!slug) throw new UsageError('cub space create <slug> [--label k=v] [--annotation k=v]');
      const body = { Slug: slug, DisplayName: flag(a, 'display-name'), Labels: pairs(a, 'label'), Annotations: pairs(a, 'annotation'), ReleaseTargetID: flag(a, 'release-target'), ComponentID: flag(a, 'component') };
      print((await c.post('/space', body)).body, out(a), COLUMNS.space);
    },
    get: async (a, c) => {
      const slug = a.positional[0] ?? flag(a, 'space');
      if (!slug) throw new UsageError('cub space get <slug>');
      print((await c.get(`/space/${seg(slug)}`)).body, out(a), COLUMNS.space);
    },
    list: (a, c) => list(c, a, '/space', 'space'),
    update: async (a, c) => {
      const slug = a.positional[0] ?? flag(a, 'space');
      if (!slug) throw new UsageError('cub space update <slug> [--label k=v] [--annotation k=v] [--release-target space/target]');
      const cur = (await c.get(`/space/${seg(slug)}`)).body;
      const rt = flag(a, 'release-target') ?? flag(a, 'target');
      const body = { Version: cur.Version, ...labelsPatch(a), ...(flag(a, 'display-name') ? { DisplayName: flag(a, 'display-name') } : {}), ...(flag(a, 'new-slug') ? { Slug: flag(a, 'new-slug') } : {}), ...(rt !== undefined ? { ReleaseTargetID: rt || null } : {}) };
      print((await c.patch(`/space/${seg(slug)}`, body)).body, out(a), COLUMNS.space);
    },
    delete: async (a, c) => {
      const slug = a.positional[0] ?? flag(a, 'space');
      if (!slug) throw new UsageError('cub space delete <slug> [--recursive]');
      const r = await c.delete(`/space/${seg(slug)}`, { recursive: bool(a, 'recursive') || bool(a, 'recursive-force') ? 'true' : undefined, force: bool(a, 'recursive-force') ? 'true' : undefined });
      process.stdout.write(`Deleted space ${slug}${r.body?.DeletedUnits?.length ? ` with ${r.body.DeletedUnits.length} unit(s)` : ''}\n`);
      for (const l of r.body?.RemovedLinks ?? []) process.stdout.write(`Removed link ${l.Slug} (space ${l.SpaceID}) that pointed into it\n`);
    },
  },
  component: {
    list: (a, c) => list(c, a, '/component', 'component'),
    create: async (a, c) => {
      const slug = a.positional[0];
      if (!slug) throw new UsageError('cub component create <slug>');
      print((await c.post('/component', { Slug: slug, Labels: pairs(a, 'label') })).body, out(a), COLUMNS.component);
    },
    get: async (a, c) => print((await c.get(`/component/${seg(a.positional[0] ?? '')}`)).body, out(a), COLUMNS.component),
  },
  changeset: {
    ...spaceKind('changeset', 'change_set'),
    create: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'changeset', 'cub changeset create --space <space> <slug> [--description D]');
      print((await c.post(`/space/${seg(space)}/change_set`, { Slug: slug, Description: flag(a, 'description') })).body, out(a), COLUMNS.changeset);
    },
    close: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'changeset', 'cub changeset close --space <space> <changeset>');
      const path = `/space/${seg(space)}/change_set/${seg(slug)}`;
      const cur = (await c.get(path)).body;
      print((await c.patch(path, { Version: cur.Version, State: 'Closed' })).body, out(a), COLUMNS.changeset);
    },
  },
  tag: {
    ...spaceKind('tag', 'tag'),
    create: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'tag', 'cub tag create --space <space> <slug>');
      print((await c.post(`/space/${seg(space)}/tag`, { Slug: slug, Labels: pairs(a, 'label') })).body, out(a), COLUMNS.tag);
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
      print((await c.post(`/space/${seg(space)}/filter`, { Slug: slug, From: from, Where: where })).body, out(a), COLUMNS.filter);
    },
  },
  target: {
    ...spaceKind('target', 'target'),
    create: async (a, c) => {
      const { space, slug } = locate(a, a.positional[0], 'target', 'cub target create --space <space> <slug> [--fact k=v]');
      print((await c.post(`/space/${seg(space)}/target`, { Slug: slug, Facts: pairs(a, 'fact'), Labels: pairs(a, 'label') })).body, out(a), COLUMNS.target);
    },
  },
};
