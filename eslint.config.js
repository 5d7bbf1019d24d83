import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

/**
 * Dependencies point one way (docs/design.md): each folder lists the folders it must not import.
 * A pattern names a folder relative to any depth, so `../api/x.ts` and `../../api/x.ts` both match.
 */
const LIB = [
  'model',
  'util',
  'where',
  'config',
  'gates',
  'events',
  'ports',
  'people',
  'variants',
  'releases',
  'changes',
  'store',
  'api',
  'local',
];
const forbid = (folders, why) => ({
  'no-restricted-imports': [
    'error',
    {
      patterns: folders.map((f) => ({
        regex: `(^|/)(lib/)?${f}/`,
        message: `${why} (see docs/design.md: dependencies point one way)`,
      })),
    },
  ],
});
const above = (allowed) => LIB.filter((f) => !allowed.includes(f));
/** Anything but the wiring (lib/local, functions, tests) may not import the store, and nothing in lib imports the entry points. */
const OUTSIDE_LIB = ['functions', 'infra', 'cli'];

export default tseslint.config(
  { ignores: ['node_modules/**', 'cdk.out/**', '.data/**', 'cli/dist/**', 'web/dist/**', 'test-results/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
  {
    files: ['cli/bin.js', 'cli/build.mjs', 'web/build.mjs', 'bench/*.mjs', 'scripts/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
  // lib is typed: no `any`; a file holds one thing, in at most 400 lines (split along its seams past that).
  {
    files: ['lib/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'error', 'max-lines': ['error', { max: 400 }] },
  },
  // One-way dependencies inside lib/.
  { files: ['lib/model/**'], rules: forbid([...above([]), ...OUTSIDE_LIB], 'lib/model depends on nothing in lib') },
  {
    files: ['lib/util/**'],
    rules: forbid([...above(['model']), ...OUTSIDE_LIB], 'lib/util depends only on lib/model'),
  },
  {
    files: ['lib/where/**', 'lib/config/**', 'lib/gates/**'],
    rules: forbid(
      [...above(['model', 'util', 'where', 'config', 'gates']).concat(), ...OUTSIDE_LIB],
      'lib/where, lib/config and lib/gates depend only on lib/model and each other',
    ),
  },
  {
    files: ['lib/events/**'],
    rules: forbid(
      [...above(['model', 'util', 'ports']), ...OUTSIDE_LIB],
      'lib/events depends only on lib/model and the ports',
    ),
  },
  {
    files: ['lib/ports/**'],
    rules: forbid([...above(['model', 'events']), ...OUTSIDE_LIB], 'lib/ports declares interfaces over lib/model'),
  },
  {
    files: ['lib/people/**'],
    rules: forbid(
      [...above(['model', 'util', 'ports', 'events', 'people']), ...OUTSIDE_LIB],
      'lib/people (users, groups, tokens) depends only on lib/model, lib/util, the events and the ports',
    ),
  },
  {
    files: ['lib/variants/**'],
    rules: forbid(
      [
        ...above(['model', 'util', 'where', 'config', 'gates', 'events', 'ports', 'people', 'variants']),
        ...OUTSIDE_LIB,
      ],
      'lib/variants depends on the rules below it and on ports, never on releases, changes, api, local or store',
    ),
  },
  {
    files: ['lib/releases/**'],
    rules: forbid(
      [
        ...above(['model', 'util', 'where', 'config', 'gates', 'events', 'ports', 'people', 'variants', 'releases']),
        ...OUTSIDE_LIB,
      ],
      'lib/releases depends on variants, the rules and ports, never on changes, api, local or store',
    ),
  },
  {
    files: ['lib/changes/**'],
    rules: forbid(
      [
        ...above([
          'model',
          'util',
          'where',
          'config',
          'gates',
          'events',
          'ports',
          'people',
          'variants',
          'releases',
          'changes',
        ]),
        ...OUTSIDE_LIB,
      ],
      'lib/changes depends on variants, releases, the rules and ports, never on api, local or store',
    ),
  },
  {
    files: ['lib/store/**'],
    rules: forbid(
      ['variants', 'releases', 'changes', 'api', 'local', 'where', 'gates', 'config', ...OUTSIDE_LIB],
      'lib/store implements the ports over lib/model; it knows no operation',
    ),
  },
  {
    files: ['lib/api/**'],
    rules: forbid(
      ['store', 'local', ...OUTSIDE_LIB],
      'lib/api is wired to a store by lib/local and functions, never imports one',
    ),
  },
  { files: ['lib/local/**'], rules: forbid(OUTSIDE_LIB, 'nothing in lib imports the entry points') },
  // cub is a client of the HTTP API: its own modules and lib/model's types only.
  {
    files: ['cli/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)lib/(?!model/|api/answers\\.ts$)',
              message:
                'cub talks to the API over HTTP: only lib/model types and the answers of lib/api/answers.ts may be imported (see docs/design.md)',
            },
          ],
        },
      ],
      // What the API answers is typed (lib/model entities, lib/api/answers.ts answers), never `any`.
      '@typescript-eslint/no-explicit-any': 'error',
      // A file holds one noun or one seam, as in lib/.
      'max-lines': ['error', { max: 400 }],
    },
  },
  // The rollout page is a client of the HTTP API too, in a browser: lib/model types only.
  {
    files: ['web/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '(^|/)lib/(?!model/|api/answers\\.ts$)',
              message:
                'the rollout page talks to the API over HTTP: only lib/model types and the answers of lib/api/answers.ts may be imported (see docs/design.md)',
            },
            { regex: '(^|/)cli/', message: 'the rollout page does not share cub’s code' },
          ],
        },
      ],
      '@typescript-eslint/no-explicit-any': 'error',
      'max-lines': ['error', { max: 400 }],
    },
  },
  // No import cycles anywhere in the product.
  {
    files: ['lib/**/*.ts', 'cli/**/*.ts', 'web/**/*.ts', 'functions/**/*.ts', 'infra/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver': { node: { extensions: ['.ts', '.js'] } },
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
);
