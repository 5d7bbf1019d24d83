import { deflateRawSync } from 'node:zlib';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/** Bundles a function as the CDK stack does (minified ESM for Node 22; the AWS SDK v3 comes with the runtime). */
async function bundle(name: string) {
  const r = await build({
    entryPoints: [new URL(`../../functions/${name}.ts`, import.meta.url).pathname],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    minify: true,
    sourcemap: 'external',
    sourcesContent: false,
    outdir: '/tmp/baton-bundle-check',
    write: false,
    metafile: true,
    mainFields: ['module', 'main'],
    external: ['@aws-sdk/*'],
    banner: { js: "import { createRequire as __cr } from 'module'; const require = __cr(import.meta.url);" },
    logLevel: 'error',
  });
  const packages = new Set(
    Object.keys(r.metafile.inputs).flatMap((p) => p.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? []),
  );
  // The code and its source map, as the deployment package holds them.
  return {
    zipped: r.outputFiles.reduce((n, f) => n + deflateRawSync(f.contents).length, 0),
    files: r.outputFiles.length,
    packages,
  };
}

describe('the Lambda bundles', () => {
  it('are each under 1 MB zipped', async () => {
    for (const name of ['api', 'authorizer', 'live-status', 'reevaluate', 'outbox', 'notify', 'blocked-sweep']) {
      const { zipped, files } = await bundle(name);
      expect(files, name).toBe(2);
      expect(zipped, name).toBeLessThan(1024 * 1024);
    }
  }, 120_000);

  it('give the authorizer only what a token lookup needs', async () => {
    const { packages } = await bundle('authorizer');
    for (const heavy of ['zod', 'zod-openapi', 'yaml', '@marcbachmann/cel-js', 'commander', 'aws-cdk-lib'])
      expect(packages.has(heavy), heavy).toBe(false);
    expect(packages.has('electrodb')).toBe(true);
  }, 60_000);
});
