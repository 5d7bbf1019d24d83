import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The acme fleet of the spec, as the `cub` command lines a person would type: a workflow (dev → staging
 * → prod, prod gated on an approval), the base from test/fixtures/acme, five variants with release
 * Targets, and the change `release-v452` made in the base and named by a ChangeOrder. `npm run seed`
 * runs it against the server of cub's current context, and the rollout page's tests against theirs.
 */
export const ACME_WORKFLOW = `Stages:
  - Name: dev
    WhereSpace: "Labels.Stage = 'Development'"
  - Name: staging
    WhereSpace: "Labels.Stage = 'Staging'"
    Prerequisites: [Validated, Released]
  - Name: prod
    WhereSpace: "Labels.Stage = 'Production'"
    Prerequisites: [Released, Healthy, not-frozen, one-approver]
Final:
  Prerequisites: [Released, Healthy]
CustomPrerequisites:
  - Name: not-frozen
    Expression: "cel:!('code-freeze' in Space.Annotations) || Space.Annotations['code-freeze'] != 'true'"
    Description: the space is not under a code freeze
AttestationPrerequisites:
  - Name: one-approver
    Count: 1
    # A fleet one person seeds: whoever wrote the change may approve it.
    AllowAuthors: true
`;

export const ACME_VARIANTS = [
  ['dev', 'Development', 'us-east1'],
  ['staging-euw1', 'Staging', 'europe-west1'],
  ['staging-use1', 'Staging', 'us-east1'],
  ['prod-euw1', 'Production', 'europe-west1'],
  ['prod-use1', 'Production', 'us-east1'],
] as const;

/** One step: a cub command line, and the standard input it reads (a `--filename -`). */
export interface SeedStep {
  args: string[];
  input?: string;
}

/** The fleet and the ChangeOrder: nothing promoted yet. `fixtures` is the directory of the acme base's Units. */
export function acmeFleet(fixtures: string): SeedStep[] {
  return [
    { args: ['space', 'create', 'acme-workflows'] },
    {
      args: ['changeworkflow', 'create', '--space', 'acme-workflows', 'acme-main-line', '--filename', '-'],
      input: ACME_WORKFLOW,
    },
    { args: ['variant', 'upload', '--component', 'acme', '--variant', 'base', fixtures] },
    { args: ['space', 'create', 'acme-infra'] },
    ...ACME_VARIANTS.flatMap(([name, stage, region]) => [
      { args: ['target', 'create', '--space', 'acme-infra', `t-${name}`] },
      {
        args: [
          'variant',
          'create',
          name,
          'acme-base',
          '--stage',
          stage,
          '--region',
          region,
          '--namespace',
          'acme',
          '--target',
          `acme-infra/t-${name}`,
        ],
      },
    ]),
    {
      args: [
        'function',
        'set',
        '--space',
        'acme-base',
        '--unit',
        'deployment',
        '--change-desc',
        'Release v452: bump the image tag',
        '--',
        'set-image-reference-by-uri',
        'ghcr.io/acme/acme',
        ':v452',
      ],
    },
    {
      args: [
        'changeorder',
        'create',
        '--space',
        'acme-base',
        'release-v452',
        '--description',
        'Release v452: bump the image tag',
        '--change-workflow',
        'acme-workflows/acme-main-line',
      ],
    },
  ];
}

/** The change's first hop: promoted to dev, released there, and reported Synced and Healthy. */
export const ACME_DEV_DONE: SeedStep[] = [
  { args: ['variant', 'promote', '--change-order', 'acme-base/release-v452'] },
  { args: ['release', 'publish', '--revision', 'ChangeOrder:acme-base/release-v452', 'acme-dev'] },
  {
    args: [
      'release',
      'report',
      '--space',
      'acme-dev',
      '--sync',
      'Synced',
      '--health',
      'Healthy',
      '--reporter',
      'argocd',
    ],
  },
];

/** Runs the bundled cub with these arguments against the server and token of cub's context (or CUB_SERVER/CUB_TOKEN). */
function cub(step: SeedStep): Promise<string> {
  const bin = fileURLToPath(new URL('../../cli/bin.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [bin, ...step.args], (err, stdout, stderr) =>
      err ? reject(new Error(`cub ${step.args.join(' ')}: ${stderr.trim() || err.message}`)) : resolve(stdout),
    );
    child.stdin?.end(step.input ?? '');
  });
}

/** `npm run seed`: the acme fleet and release-v452, taken as far as dev, on the server of cub's context. */
async function main(): Promise<void> {
  const fixtures = fileURLToPath(new URL('../../test/fixtures/acme', import.meta.url));
  for (const step of [...acmeFleet(fixtures), ...ACME_DEV_DONE]) {
    process.stdout.write(`$ cub ${step.args.map((a) => (/[\s'"$]/.test(a) ? `'${a}'` : a)).join(' ')}\n`);
    process.stdout.write(await cub(step));
  }
  process.stdout.write(
    '\nThe acme fleet is seeded: open the rollout page (/ui/ on the same server: http://127.0.0.1:4000/ui/ for npm start) and promote release-v452 into staging.\n',
  );
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(1);
  });
}
