import { flag, UsageError } from '../args.ts';
import { out } from '../common.ts';
import { print, say } from '../output.ts';
import type { Command, HelpTable } from '../common.ts';
import { readContexts, writeContexts } from '../contexts.ts';

/** Named contexts (a server and a token each), so one person can work as several users or against several servers. */
export const contextCommands: Record<string, Record<string, Command>> = {
  context: {
    set: async (a) => {
      const name = a.positional[0];
      if (!name) throw new UsageError('cub context set <name> [--server URL] [--token T]');
      const f = readContexts();
      const server = flag(a, 'server');
      const token = flag(a, 'token');
      const had = f.contexts[name] ?? {};
      if (server === undefined && token === undefined && !f.contexts[name])
        throw new UsageError(`context '${name}' is new: give it --server URL and --token T`);
      f.contexts[name] = {
        ...had,
        ...(server !== undefined ? { server: server.replace(/\/$/, '') } : {}),
        ...(token !== undefined ? { token } : {}),
      };
      f.current ??= name;
      writeContexts(f);
      say(
        out(a),
        `Context '${name}' ${Object.keys(had).length ? 'updated' : 'saved'}${f.current === name ? ' (in use)' : ''}`,
        { Name: name, Current: f.current === name, Server: f.contexts[name].server ?? '' },
        name,
      );
    },
    use: async (a) => {
      const name = a.positional[0];
      if (!name) throw new UsageError('cub context use <name>');
      const f = readContexts();
      if (!f.contexts[name])
        throw new UsageError(
          `no context '${name}'; one of ${Object.keys(f.contexts).sort().join(', ') || '(none yet)'}`,
        );
      f.current = name;
      writeContexts(f);
      say(out(a), `Using context '${name}'`, { Name: name, Current: true }, name);
    },
    list: async (a) => {
      const f = readContexts();
      // Tokens are secrets: listed only as whether one is set.
      const rows = Object.entries(f.contexts)
        .sort(([x], [y]) => (x < y ? -1 : 1))
        .map(([name, c]) => ({
          Name: name,
          Current: name === f.current,
          Server: c.server ?? '',
          Token: c.token ? 'set' : '',
        }));
      print(rows, out(a), [
        ['Name', (r) => r.Name],
        ['Current', (r) => (r.Current ? '*' : '')],
        ['Server', (r) => r.Server],
        ['Token', (r) => r.Token],
      ]);
    },
    current: async (a) => {
      const f = readContexts();
      if (!f.current) throw new UsageError('no context in use; cub context set <name> --server URL --token T');
      say(out(a), f.current, { Name: f.current, Server: f.contexts[f.current]?.server ?? '' }, f.current);
    },
  },
};

export const contextHelp: HelpTable = {
  context: {
    set: {
      summary: 'Save a named context: a server and a token (the first one saved is put in use)',
      args: [['<name>', 'the context']],
      example:
        'cub context set reviewer --server http://127.0.0.1:4000 --token "$(cub user create reviewer --role Viewer -q)"',
    },
    use: {
      summary: 'Use a saved context from now on',
      args: [['<name>', 'the context']],
      example: 'cub context use reviewer',
    },
    list: { summary: 'The saved contexts (tokens are not shown)', example: 'cub context list' },
    current: { summary: 'The name of the context in use', example: 'cub context current' },
  },
};
