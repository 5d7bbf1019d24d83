#!/usr/bin/env node
// `cub`: runs the bundle `npm install` built (cli/dist/cub.mjs); nothing is compiled at run time.
import { existsSync } from 'node:fs';

const bundle = new URL('./dist/cub.mjs', import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write('cub is not built: run `npm install` (or `npm run build:cli`) in the Baton checkout\n');
  process.exit(1);
}
const { main } = await import(bundle.href);
process.exitCode = await main(process.argv.slice(2));
