import { fc, test } from '@fast-check/vitest';
import { describe, expect, it } from 'vitest';
import { compileCel } from '../../lib/gates/cel.ts';
import { validateData } from '../../lib/config/documents.ts';
import { diffData } from '../../lib/config/diff.ts';
import { loadYaml } from '../../lib/config/load.ts';
import { runFunction } from '../../lib/config/functions.ts';
import { Invalid } from '../../lib/model/errors.ts';
import { observedAtProblem } from '../../lib/releases/live-status.ts';
import { compactChanges } from '../../lib/variants/revisions.ts';
import { matches, parseWhere, WhereError } from '../../lib/where/index.ts';
import { likeMatches } from '../../lib/where/patterns.ts';

/** LIKE as a regular expression, for comparison on small inputs only (it backtracks). */
const likeByRegex = (pattern: string, value: string) =>
  new RegExp(
    `^${[...pattern].map((c) => (c === '%' ? '.*' : c === '_' ? '.' : c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('')}$`,
    's',
  ).test(value);

describe('bounded pattern matching in where', () => {
  it('runs regexes on RE2: what backtracks in JavaScript is answered, and RE2-only syntax is a 400 when parsed', () => {
    const space = { Slug: 's', Labels: { x: 'a'.repeat(5000) + 'b' } };
    // JavaScript's engine backtracks for minutes on these; RE2 answers in one pass.
    expect(matches(parseWhere("Labels.x ~ '(a+)+$'", 'Space'), space)).toBe(false);
    expect(matches(parseWhere("Labels.x ~ '(a+)+b$'", 'Space'), space)).toBe(true);
    expect(matches(parseWhere("Labels.x ~* '^A+B$'", 'Space'), space)).toBe(true);
    expect(() => parseWhere("Slug ~ '(?=a)b'", 'Space')).toThrow(WhereError);
    expect(() => parseWhere("Slug ~ '(a)\\1'", 'Space')).toThrow(/bad regular expression .*RE2 syntax/);
  });

  it('matches LIKE without backtracking, as SQL does', () => {
    expect(likeMatches('%a%a%a%a%a%a%a%a%c', 'a'.repeat(4000), false)).toBe(false);
    expect(likeMatches('%a%a%a%a%a%a%a%a%c', 'a'.repeat(4000) + 'c', false)).toBe(true);
    expect(likeMatches('acme-%-us_1', 'acme-prod-use1', false)).toBe(true);
    expect(likeMatches('ACME-%', 'acme-dev', true)).toBe(true);
    expect(likeMatches('a%', 'b', false)).toBe(false);
    expect(likeMatches('%', '', false)).toBe(true);
    expect(likeMatches('a%a', 'a', false)).toBe(false);
  });

  test.prop([fc.stringMatching(/^[ab%_]{0,8}$/), fc.stringMatching(/^[abc]{0,10}$/)])(
    'agrees with a regex translation of LIKE on every small pattern',
    (pattern, value) => {
      expect(likeMatches(pattern, value, false)).toBe(likeByRegex(pattern, value));
    },
  );

  it("reads only a map's own keys: Labels.constructor is a label named constructor", () => {
    expect(matches(parseWhere('Labels.constructor IS NOT NULL', 'Space'), { Labels: {} })).toBe(false);
    expect(matches(parseWhere("Labels.constructor = 'x'", 'Space'), { Labels: { constructor: 'x' } })).toBe(true);
  });

  test.prop([fc.string({ maxLength: 300 })])('never throws anything but a WhereError on any text', (text) => {
    try {
      const q = parseWhere(text, 'Space');
      matches(q, { Slug: 'a', Labels: { a: 'b' }, SpaceID: '00000000-0000-4000-8000-000000000001' });
    } catch (e) {
      expect(e).toBeInstanceOf(WhereError);
    }
  });
});

describe('bounded CEL', () => {
  it('refuses, when compiled, what could stall an evaluation: nested comprehensions, matches(), size', () => {
    expect(() => compileCel('cel:Space.Labels.all(k, ChangeOrder.ResolvedSpaceIDs.exists(s, s == k))')).toThrow(
      'exists() inside another comprehension is not allowed: nested comprehensions multiply their cost',
    );
    expect(() => compileCel("cel:Space.Slug.matches('(a+)+$')")).toThrow(/matches\(\) is not available/);
    expect(() => compileCel(`cel:${'Space.Slug == "a" || '.repeat(120)}true`)).toThrow(/more than 2048|AST|nodes/i);
    expect(() => compileCel(`cel:[${Array.from({ length: 100 }, (_, i) => i).join(',')}].size() > 0`)).toThrow();
    // One comprehension is fine.
    expect(
      compileCel("cel:Space.Labels.exists(k, k == 'tier')")({
        Space: { Labels: { tier: 'x' } },
        ChangeOrder: {},
        Release: null,
      }),
    ).toBe(true);
  });

  test.prop([fc.string({ maxLength: 200 })])(
    'compiles or refuses any text with an Error, never hangs or crashes',
    (text) => {
      try {
        compileCel(`cel:${text}`);
      } catch (e) {
        expect(e).toBeInstanceOf(Error);
      }
    },
  );
});

describe('unit data, loaded once and bounded', () => {
  const billion = `a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]\ni: [*h,*h,*h,*h,*h,*h,*h,*h,*h]\n`;
  it('refuses alias bombs, unknown tags and duplicate keys with a 400', () => {
    expect(() => loadYaml(billion)).toThrow(/Data expands to more than 2000000 values/);
    expect(() => validateData('ConfigHub/YAML', 'a: !evil 1\n')).toThrow(Invalid);
    expect(() => validateData('Kubernetes/YAML', 'kind: A\nmetadata:\n  name: a\nkind: B\n')).toThrow(
      /duplicated mapping key/,
    );
  });

  it('reads __proto__ and constructor as plain keys', () => {
    const [doc] = loadYaml(
      'kind: ConfigMap\nmetadata:\n  name: p\ndata:\n  __proto__: polluted\n  constructor: x\n',
    ) as Record<string, Record<string, unknown>>[];
    expect(Object.getPrototypeOf(doc!.data)).toBe(Object.prototype);
    expect(Object.keys(doc!.data!)).toEqual(['__proto__', 'constructor']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('keeps a Mutation small however large the write: values and, past a budget, changes left out with their count', () => {
    const data = `kind: ConfigMap\nmetadata:\n  name: big\ndata:\n${Array.from({ length: 20000 }, (_, i) => `  k${i}: v${i}\n`).join('')}`;
    const whole = compactChanges(diffData('Kubernetes/YAML', '', data));
    expect(whole).toEqual({ Changes: [{ Resource: 'ConfigMap/big', Path: '', Op: 'Add', ValueOmitted: true }] });
    const each = compactChanges(diffData('Kubernetes/YAML', data, data.replace(/: v/g, ': w')));
    expect(each.Changes.length).toBeGreaterThan(100);
    expect(each.Changes.length + each.ChangesOmitted!).toBe(20000);
    expect(JSON.stringify(each.Changes).length).toBeLessThan(150 * 1024);
  });

  test.prop([
    fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), {
      maxKeys: 8,
    }),
  ])('functions never crash on generated resources: a result or a 400', (extra) => {
    const doc = `kind: Deployment\nmetadata:\n  name: d\n${Object.entries(extra)
      .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
      .join('\n')}\n`;
    try {
      validateData('Kubernetes/YAML', doc);
      runFunction('set-label', ['tier', 'web'], doc);
      runFunction('set-replicas', ['2'], doc);
    } catch (e) {
      expect(e).toBeInstanceOf(Invalid);
    }
  });
});

describe('live status that cannot be pinned', () => {
  const now = new Date('2026-12-03T00:00:00Z');
  it('takes ObservedAt up to five minutes ahead (clock skew), not later, not a non-time', () => {
    expect(observedAtProblem('2026-12-03T00:04:59Z', now)).toBeUndefined();
    expect(observedAtProblem('2999-01-01T00:00:00Z', now)).toMatch(/more than 5 minutes ahead of this server's clock/);
    expect(observedAtProblem('not-a-date', now)).toBe("ObservedAt 'not-a-date' is not a time");
  });
});

describe('YAML scalars read as the writer means them', () => {
  it('reads plain scalars by YAML 1.2 core, as the yaml library that writes Unit data does', async () => {
    const { parse } = await import('yaml');
    const { loadYaml } = await import('../../lib/config/load.ts');
    for (const v of [
      '0b0',
      '1_000',
      '0o17',
      '0x1F',
      '+12',
      '-3',
      '1e3',
      '.5',
      '1.',
      '.inf',
      '-.Inf',
      'true',
      'True',
      'yes',
      '~',
      'null',
      '012',
      '1:20',
      '2026-12-03',
      '0.1e-2',
      '+.5',
    ]) {
      expect((loadYaml(`k: ${v}\n`)[0] as { k: unknown }).k, v).toEqual(parse(`k: ${v}\n`).k);
    }
    expect(Number.isNaN((loadYaml('k: .nan\n')[0] as { k: number }).k)).toBe(true);
  });
});
