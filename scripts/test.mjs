#!/usr/bin/env node
// `npm test`: the stages in order, each timed; the first that fails ends the run with its exit status.
import { spawnSync } from 'node:child_process';

const STAGES = [
  ['build cub', 'node', ['cli/build.mjs']],
  ['build the rollout page', 'node', ['web/build.mjs']],
  ['type check', 'npx', ['tsc', '-p', '.']],
  ['type check the page', 'npx', ['tsc', '-p', 'web']],
  ['lint', 'npx', ['eslint', '.']],
  ['format', 'npx', ['prettier', '--check', '--log-level', 'warn', '.']],
  ['tests', 'npx', ['vitest', 'run', ...process.argv.slice(2)]],
];
const times = [];
const total = Date.now();
for (const [name, cmd, args] of STAGES) {
  const start = Date.now();
  const r = spawnSync(cmd, args, { stdio: 'inherit' });
  times.push(`${name} ${((Date.now() - start) / 1000).toFixed(1)} s`);
  if (r.status !== 0) {
    console.error(`\nnpm test: ${name} failed (${times.join(', ')})`);
    process.exit(r.status ?? 1);
  }
}
console.log(`\nnpm test: ${times.join(', ')}; ${((Date.now() - total) / 1000).toFixed(1)} s in all`);
