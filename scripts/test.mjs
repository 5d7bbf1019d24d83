#!/usr/bin/env node
// `npm test`: build cub and the page, then the checks (two at a time: tsc and eslint each use one core), then
// the tests; each stage timed. The first stage that fails ends the run with its output and exit status.
import { spawn } from 'node:child_process';

const BUILDS = [
  ['build cub', 'node', ['cli/build.mjs']],
  ['build the rollout page', 'node', ['web/build.mjs']],
];
// In this order two at a time: the longest first, so the two queues end near each other (type check and the
// page's; lint and format).
const CHECKS = [
  ['type check', 'npx', ['tsc', '-p', '.']],
  ['lint', 'npx', ['eslint', '.']],
  ['format', 'npx', ['prettier', '--check', '--log-level', 'warn', '.']],
  ['type check the page', 'npx', ['tsc', '-p', 'web']],
];
const TESTS = ['tests', 'npx', ['vitest', 'run', ...process.argv.slice(2)]];

const times = [];
const total = Date.now();
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const fail = (name, code) => {
  console.error(`\nnpm test: ${name} failed (${times.join(', ')})`);
  process.exit(code || 1);
};

/** Runs a stage; `quiet` keeps its output until it ends (so stages run side by side do not interleave). */
function stage([name, cmd, args], quiet) {
  const start = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    let out = '';
    child.stdout?.on('data', (d) => (out += d));
    child.stderr?.on('data', (d) => (out += d));
    child.on('close', (code) => {
      if (out) process.stdout.write(out);
      times.push(`${name} ${seconds(start)}`);
      resolve({ name, code });
    });
  });
}

for (const s of BUILDS) {
  const r = await stage(s, false);
  if (r.code !== 0) fail(r.name, r.code);
}
const checksStart = Date.now();
const queue = [...CHECKS];
const results = [];
await Promise.all(
  [0, 1].map(async () => {
    while (queue.length) results.push(await stage(queue.shift(), true));
  }),
);
times.push(`checks ${seconds(checksStart)} wall`);
const failed = results.find((r) => r.code !== 0);
if (failed) fail(failed.name, failed.code);
const r = await stage(TESTS, false);
if (r.code !== 0) fail(r.name, r.code);
console.log(`\nnpm test: ${times.join(', ')}; ${seconds(total)} in all`);
