// Bundles `cub` into one JavaScript file (cli/dist/cub.mjs), so running it loads no TypeScript tooling.
// Run by `npm install` (prepare) and before `npm test`, so the bundle is never older than the source.
import { readFileSync } from 'node:fs';
import { build } from 'esbuild';

const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

await build({
  entryPoints: [new URL('./main.ts', import.meta.url).pathname],
  outfile: new URL('./dist/cub.mjs', import.meta.url).pathname,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  // CommonJS dependencies (yaml) require Node's built-ins; give the ES module bundle a require.
  banner: {
    js: "import { createRequire as __cubRequire } from 'node:module'; const require = __cubRequire(import.meta.url);",
  },
  logLevel: 'warning',
  define: { CUB_VERSION: JSON.stringify(version) },
});
