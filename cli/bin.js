#!/usr/bin/env node
// `cub`: runs the bundle `npm install` built (cli/dist/cub.mjs); nothing is compiled at run time.
import { existsSync } from 'node:fs';

const bundle = new URL('./dist/cub.mjs', import.meta.url);
if (!existsSync(bundle)) {
  process.stderr.write('cub is not built: run `npm install` (or `npm run build:cli`) in the Baton checkout\n');
  process.exit(1);
}
// A reader that stops early (cub … | head -1) closes the pipe: end quietly, as a Unix command does.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (e) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });
}
const { main } = await import(bundle.href);
process.exitCode = await main(process.argv.slice(2));
