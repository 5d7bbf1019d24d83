import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, Client } from '../../cli/client.ts';
import { main } from '../../cli/main.ts';
import { VERBS } from '../../cli/program.ts';
import { FLAGS, GLOBAL } from '../../cli/flags.ts';

let stdout = '';
let stderr = '';
const fetched: string[] = [];

beforeEach(() => {
  stdout = '';
  stderr = '';
  fetched.length = 0;
  vi.spyOn(process.stdout, 'write').mockImplementation((s) => ((stdout += String(s)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((s) => ((stderr += String(s)), true));
  // Any request would be acting; record it and fail it.
  vi.spyOn(Client.prototype, 'request').mockImplementation(async (method: string, path: string) => {
    fetched.push(`${method} ${path}`);
    throw new ApiError(0, 'Unreachable', 'no server in this test');
  });
});
afterEach(() => {
  vi.restoreAllMocks();
});

/** `cub <words…>`: its exit code; what it printed is in stdout/stderr. */
const cub = (...words: string[]) => main(words);

describe('cub --help, for every verb', () => {
  const verbs = Object.entries(VERBS).flatMap(([entity, vs]) =>
    Object.entries(vs).map(([verb, h]) => ({ entity, verb, h })),
  );

  it.each(verbs)(
    'cub $entity $verb --help prints its usage, every flag with its line, and an example; it contacts nothing',
    async ({ entity, verb, h }) => {
      // -h after an argument, --help before: both only ask.
      for (const words of [
        [entity, verb, 'some-name', '--space', 'acme', '-h'],
        [entity, verb, '--help', 'some-name'],
      ]) {
        stdout = '';
        expect(await cub(...words), words.join(' ')).toBe(0);
        expect(stdout).toMatch(new RegExp(`^Usage: cub ${entity} ${verb} \\[options\\]`));
        expect(stdout.replace(/\s+/g, ' ')).toContain(` ${h.summary} `);
        for (const [name, help] of h.args ?? [])
          expect(stdout).toMatch(
            new RegExp(
              `\\n  ${name.replace(/[<>[\].]/g, '')} +${help.slice(0, 20).replace(/[()[\].*+?|\\]/g, '\\$&')}`,
            ),
          );
        for (const f of [...(h.flags ?? []), ...GLOBAL]) {
          const [name, help] = typeof f === 'string' ? [f, FLAGS[f]!.help] : f;
          if (FLAGS[name]!.hidden) expect(stdout).not.toContain(`--${name} `);
          else
            expect(stdout).toMatch(
              new RegExp(
                `--${name}\\b[^\\n]* {2}${help
                  .split(' ')
                  .slice(0, 3)
                  .join(' ')
                  .replace(/[()[\].*+?|\\]/g, '\\$&')}`,
              ),
            );
        }
        expect(stdout).toMatch(new RegExp(`\\nExample:\\n  cub ${entity} ${verb}( |\\n)`));
        expect(stderr).toBe('');
      }
      expect(fetched).toEqual([]);
    },
  );

  it.each(Object.keys(VERBS))('cub %s --help lists its verbs, and cub help %s says the same', async (entity) => {
    expect(await cub(entity, '--help')).toBe(0);
    for (const verb of Object.keys(VERBS[entity]!)) expect(stdout).toMatch(new RegExp(`\\n  ${verb} \\[options\\]`));
    const byFlag = stdout;
    stdout = '';
    expect(await cub('help', entity)).toBe(0);
    expect(stdout).toBe(byFlag);
    expect(fetched).toEqual([]);
  });

  it('cub, cub help and cub --help list every entity; --version answers; none contacts the server', async () => {
    for (const words of [[], ['help'], ['--help'], ['-h']]) {
      stdout = '';
      expect(await cub(...words)).toBe(0);
      for (const entity of Object.keys(VERBS)) expect(stdout).toMatch(new RegExp(`\\n  ${entity} +`));
    }
    stdout = '';
    expect(await cub('--version')).toBe(0);
    expect(stdout).toMatch(/^cub \S+\n$/);
    expect(fetched).toEqual([]);
  });

  it('a -h after -- is a function argument, not a request for help', async () => {
    expect(await cub('function', 'get', '--space', 'acme', '--', 'get-x', '-h')).toBe(1);
    expect(fetched).toEqual(['POST /space/acme/function/invoke']);
    expect(stderr).toBe('Failed: no server in this test\n');
  });
});

describe('the parser refuses what it does not know, naming it', () => {
  it.each([
    [['space', 'create', 'y', '--lable', 'x'], "Usage: unknown option '--lable'; Did you mean --label?\n"],
    [['unit', 'create', '--space', 'a', 'x'], "Usage: missing required argument 'file'\n"],
    [['space', 'list', 'extra'], "Usage: too many arguments for 'list'. Expected 0 arguments but got 1.\n"],
    [['space', 'create', 'x', '--label'], "Usage: option '--label <k=v>' argument missing\n"],
    [['spaces', 'list'], "Usage: unknown command 'spaces'; Did you mean space?\n"],
    [['space', 'lst'], "Usage: unknown command 'lst'; Did you mean list?\n"],
  ])('cub %j → exit 2: %s', async (words, message) => {
    expect(await cub(...words)).toBe(2);
    expect(stderr).toBe(message);
    expect(stdout).toBe('');
    expect(fetched).toEqual([]);
  });

  it('a flag given twice keeps the last value; a repeatable one keeps all', async () => {
    const sent: unknown[] = [];
    vi.spyOn(Client.prototype, 'request').mockImplementation(
      async (_m: string, _p: string, opts?: { body?: unknown }) => {
        sent.push(opts?.body);
        throw new ApiError(0, 'Unreachable', 'no server in this test');
      },
    );
    expect(
      await cub(
        'space',
        'create',
        'x',
        '--label',
        'a=1',
        '--label',
        'b=2',
        '--display-name',
        'one',
        '--display-name',
        'two',
      ),
    ).toBe(1);
    expect(sent).toEqual([{ Slug: 'x', DisplayName: 'two', Labels: { a: '1', b: '2' }, Annotations: {} }]);
  });
});

describe('docs/reference/cub.md', () => {
  it('is the help cub prints, every verb with its example (npm run docs writes it)', async () => {
    const { readFileSync } = await import('node:fs');
    const { cubReference } = await import('../../cli/reference.ts');
    const doc = readFileSync(new URL('../../docs/reference/cub.md', import.meta.url), 'utf8');
    expect(doc).toBe(cubReference());
    for (const [entity, verbs] of Object.entries(VERBS))
      for (const [verb, h] of Object.entries(verbs)) {
        expect(doc).toContain(`### cub ${entity} ${verb}`);
        expect(doc).toContain(h.example);
      }
  });
});
