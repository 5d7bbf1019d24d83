import { bool, flag, flags, UsageError, type Args } from '../args.ts';
import { seg, type Client } from '../client.ts';
import { isQuiet, print, say, type Column } from '../output.ts';
import { type Command, type HelpTable, out, listHelp } from '../common.ts';
import type { Group, TokenView, User } from '../../lib/model/entities.ts';

const userCols: Column<User>[] = [
  ['Name', (u) => u.Slug],
  ['Role', (u) => u.Role],
  ['Display', (u) => u.DisplayName],
  ['ID', (u) => u.UserID],
];
const groupCols: Column<Group>[] = [
  ['Name', (g) => g.Slug],
  ['Members', (g) => g.MemberUserIDs.length],
  ['ID', (g) => g.GroupID],
];
/** Token columns; a user is shown by name when the names are at hand. */
const tokenCols = (names: Map<string, string> = new Map()): Column<TokenView>[] => [
  ['ID', (t) => t.TokenID],
  ['For', (t) => (t.Service ? `service:${t.Service}` : (names.get(t.UserID ?? '') ?? t.UserID ?? ''))],
  ['Scope', (t) => t.Scope ?? ''],
  ['Expires', (t) => t.ExpiresAt ?? 'never'],
  ['Revoked', (t) => t.RevokedAt ?? ''],
  ['Description', (t) => t.Description ?? ''],
];

/** --permission Verb=user:slug|group:slug (repeatable) → the grants to add, by verb. */
function grants(a: Args, name: string): Map<string, { users: string[]; groups: string[]; whole: boolean }> {
  const out = new Map<string, { users: string[]; groups: string[]; whole: boolean }>();
  for (const kv of flags(a, name)) {
    const m = /^(View|Edit|Approve|Manage|ReportStatus)(?:=(user|group):(.+))?$/.exec(kv);
    if (!m || (name === 'permission' && !m[2]))
      throw new UsageError(
        `--${name} takes <View|Edit|Approve|Manage|ReportStatus>=user:<user>|group:<group>${name === 'remove-permission' ? ', or a verb alone' : ''}; got '${kv}'`,
      );
    const g = out.get(m[1]!) ?? { users: [], groups: [], whole: false };
    if (!m[2]) g.whole = true;
    else (m[2] === 'user' ? g.users : g.groups).push(m[3]!);
    out.set(m[1]!, g);
  }
  return out;
}

/** The Permissions patch for `space update --permission/--remove-permission`: each verb named, in full. */
export function permissionsPatch(
  a: Args,
  have: Record<string, { UserIDs: string[]; GroupIDs: string[] }> | undefined,
): Record<string, { UserIDs: string[]; GroupIDs: string[] } | null> | undefined {
  const add = grants(a, 'permission');
  const remove = grants(a, 'remove-permission');
  if (!add.size && !remove.size) return undefined;
  const patch: Record<string, { UserIDs: string[]; GroupIDs: string[] } | null> = {};
  for (const verb of new Set([...add.keys(), ...remove.keys()])) {
    const r = remove.get(verb);
    if (r?.whole) {
      patch[verb] = null;
      continue;
    }
    const cur = have?.[verb] ?? { UserIDs: [], GroupIDs: [] };
    const plus = add.get(verb) ?? { users: [], groups: [] };
    // Removal names users and groups as given (slugs or IDs); the server resolves what stays.
    patch[verb] = {
      UserIDs: [...cur.UserIDs, ...plus.users].filter((u) => !r?.users.includes(u)),
      GroupIDs: [...cur.GroupIDs, ...plus.groups].filter((g) => !r?.groups.includes(g)),
    };
  }
  return patch;
}

export const ref = (a: Args, what: string, usage: string) => {
  const v = a.positional[0];
  if (!v) throw new UsageError(`name the ${what}: ${usage}`);
  return v;
};

async function listOf<R>(c: Client, a: Args, path: string, cols: Column<R>[]): Promise<void> {
  print(
    (await c.get<R[]>(path, { where: flag(a, 'where'), limit: flag(a, 'limit'), continue: flag(a, 'continue') })).body,
    out(a),
    cols,
  );
}

/** Users, groups and tokens. */
export const peopleCommands: Record<string, Record<string, Command>> = {
  user: {
    create: async (a, c) => {
      const slug = ref(a, 'user', 'cub user create <slug> [--role Admin|Member|Viewer]');
      const r = await c.post<{ User: User; Token: string }>('/user', {
        Slug: slug,
        Role: flag(a, 'role'),
        DisplayName: flag(a, 'display-name'),
      });
      if ((out(a) ?? 'table') !== 'table') return print(r.body, out(a));
      // -q: the token alone, for a pipeline to keep (USER_TOKEN=$(cub user create bob -q)).
      if (isQuiet()) return void process.stdout.write(`${r.body.Token}\n`);
      // The secret is shown this once: only its hash is kept.
      process.stdout.write(
        `Created user ${r.body.User.Slug} (${r.body.User.Role}). Their token (shown once):\n\n  ${r.body.Token}\n\ncub context set ${r.body.User.Slug} --server <url> --token ${r.body.Token}\n`,
      );
    },
    list: (a, c) => listOf(c, a, '/user', userCols),
    get: async (a, c) =>
      print((await c.get<User>(`/user/${seg(ref(a, 'user', 'cub user get <user>'))}`)).body, out(a), userCols),
    update: async (a, c) => {
      const path = `/user/${seg(ref(a, 'user', 'cub user update <user> --role R'))}`;
      const cur = (await c.get<User>(path)).body;
      print(
        (
          await c.patch<User>(path, {
            Version: cur.Version,
            Role: flag(a, 'role'),
            DisplayName: flag(a, 'display-name'),
          })
        ).body,
        out(a),
        userCols,
      );
    },
    delete: async (a, c) => {
      const user = ref(a, 'user', 'cub user delete <user>');
      const r = await c.delete<{ Deleted: string; RevokedTokens: number }>(`/user/${seg(user)}`);
      say(
        out(a),
        `Deleted user ${r.body.Deleted} and ${r.body.RevokedTokens} token(s) of theirs`,
        r.body,
        r.body.Deleted,
      );
    },
  },
  group: {
    create: async (a, c) => {
      const slug = ref(a, 'group', 'cub group create <slug> [--member U]…');
      print(
        (
          await c.post<Group>('/group', {
            Slug: slug,
            DisplayName: flag(a, 'display-name'),
            Members: flags(a, 'member').flatMap((m) => m.split(',')),
          })
        ).body,
        out(a),
        groupCols,
      );
    },
    list: (a, c) => listOf(c, a, '/group', groupCols),
    get: async (a, c) =>
      print((await c.get<Group>(`/group/${seg(ref(a, 'group', 'cub group get <group>'))}`)).body, out(a) ?? 'yaml'),
    delete: async (a, c) => {
      const g = ref(a, 'group', 'cub group delete <group>');
      await c.delete(`/group/${seg(g)}`);
      say(out(a), `Deleted group ${g}`, { Deleted: g }, g);
    },
    'add-member': async (a, c) => {
      const g = ref(a, 'group', 'cub group add-member <group> <user>…');
      const users = a.positional.slice(1);
      if (!users.length) throw new UsageError('name the users to add: cub group add-member <group> <user>…');
      print((await c.post<Group>(`/group/${seg(g)}/members`, { Add: users })).body, out(a), groupCols);
    },
    'remove-member': async (a, c) => {
      const g = ref(a, 'group', 'cub group remove-member <group> <user>…');
      const users = a.positional.slice(1);
      if (!users.length) throw new UsageError('name the users to remove: cub group remove-member <group> <user>…');
      print((await c.post<Group>(`/group/${seg(g)}/members`, { Remove: users })).body, out(a), groupCols);
    },
  },
  token: {
    create: async (a, c) => {
      const body = {
        User: flag(a, 'user'),
        Service: flag(a, 'service'),
        Scope: flag(a, 'scope'),
        Spaces: flags(a, 'space').flatMap((s) => s.split(',')),
        RequireSignature: bool(a, 'require-signature') || undefined,
        ExpiresIn: flag(a, 'expires-in'),
        Description: flag(a, 'description'),
      };
      const r = await c.post<{ Token: string; TokenInfo: TokenView }>('/token', body);
      if ((out(a) ?? 'table') !== 'table') return print(r.body, out(a));
      // -q: the secret alone (TOKEN=$(cub token create --service argocd --scope ReportStatus -q)).
      if (isQuiet()) return void process.stdout.write(`${r.body.Token}\n`);
      process.stdout.write(
        `Token ${r.body.TokenInfo.TokenID}${r.body.TokenInfo.ExpiresAt ? `, expires ${r.body.TokenInfo.ExpiresAt}` : ''} (the secret is shown once):\n\n  ${r.body.Token}\n`,
      );
    },
    list: async (a, c) => {
      const r = await c.get<TokenView[]>('/token', { limit: flag(a, 'limit'), continue: flag(a, 'continue') });
      const table = (out(a) ?? 'table') === 'table';
      const names = table ? new Map((await c.get<User[]>('/user')).body.map((u) => [u.UserID, u.Slug])) : undefined;
      print(r.body, out(a), tokenCols(names));
      const next = r.headers.get('x-continue');
      if (next && table) process.stderr.write(`more: --continue ${next}\n`);
    },
    revoke: async (a, c) => {
      const id = ref(a, 'token', 'cub token revoke <token-id>');
      const r = await c.post<TokenView>(`/token/${seg(id)}/revoke`);
      say(out(a), `Revoked token ${r.body.TokenID} at ${r.body.RevokedAt}`, r.body, r.body.TokenID);
    },
  },
};

export const peopleHelp: HelpTable = {
  user: {
    create: {
      summary: 'Add a user to the organization (Admin only); prints their first token once',
      args: [['<user>', 'the new user’s slug']],
      flags: ['role', 'display-name'],
      example: 'cub user create alice --role Member',
    },
    list: listHelp('users', 'user', `--where "Role = 'Member'"`, false),
    get: { summary: 'Show a user', args: [['<user>', 'slug or ID']], example: 'cub user get alice' },
    update: {
      summary: 'Change a user’s role or name (Admin only)',
      args: [['<user>', 'slug or ID']],
      flags: ['role', 'display-name'],
      example: 'cub user update alice --role Viewer',
    },
    delete: {
      summary: 'Remove a user; their tokens stop working at once (Admin only)',
      args: [['<user>', 'slug or ID']],
      example: 'cub user delete alice',
    },
  },
  group: {
    create: {
      summary: 'Create a group of users (Admin only)',
      args: [['<group>', 'the new group’s slug']],
      flags: ['member', 'display-name'],
      example: 'cub group create release-managers --member alice --member bob',
    },
    list: listHelp('groups', 'group', `--where "Slug LIKE 'release-%'"`, false),
    get: { summary: 'Show a group', args: [['<group>', 'slug or ID']], example: 'cub group get release-managers' },
    delete: {
      summary: 'Delete a group (Admin only)',
      args: [['<group>', 'slug or ID']],
      example: 'cub group delete release-managers',
    },
    'add-member': {
      summary: 'Add users to a group (Admin only)',
      args: [
        ['<group>', 'slug or ID'],
        ['<users...>', 'users by slug or ID'],
      ],
      example: 'cub group add-member release-managers carol',
    },
    'remove-member': {
      summary: 'Remove users from a group (Admin only)',
      args: [
        ['<group>', 'slug or ID'],
        ['<users...>', 'users by slug or ID'],
      ],
      example: 'cub group remove-member release-managers carol',
    },
  },
  token: {
    create: {
      summary:
        'Make a bearer token (yours, a user’s as Admin, or a service token for a deploy tool); the secret is shown once',
      flags: [
        ['user', 'make it for this user (Admin only; default you)'],
        'service',
        'scope',
        ['space', 'a service token reports only on these Spaces (repeatable; default all)'],
        'require-signature',
        'expires-in',
        'description',
      ],
      example: 'cub token create --service argocd --scope ReportStatus --space acme-prod-euw1 --expires-in 720h',
    },
    list: {
      summary: 'The tokens you may see (yours; an Admin’s: all), oldest first, never their secrets',
      flags: ['limit', 'continue'],
      example: 'cub token list --limit 20',
    },
    revoke: {
      summary: 'Revoke a token: it stops working at once',
      args: [['<token-id>', 'its ID (cub token list)']],
      example: 'cub token revoke "$(cub token list -q | tail -1)"',
    },
  },
};
