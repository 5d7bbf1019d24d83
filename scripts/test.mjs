#!/usr/bin/env node
// `npm test`: build cub and the page, then the tests with the checks beside them (tsc, eslint, prettier, one
// at a time); each stage timed. A failed build ends the run; a failed check or test fails it, with its output
// and exit status, once both are done.
import { spawn } from 'node:child_process';

const BUILDS = [
  ['build cub', 'node', ['cli/build.mjs']],
  ['build the rollout page', 'node', ['web/build.mjs']],
];
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
// The checks run beside the tests, one at a time: the tests leave a core idle part of the time (both
// workers waiting on DynamoDB Local), and the checks fill it.
const checksStart = Date.now();
const checks = (async () => {
  const results = [];
  for (const c of CHECKS) results.push(await stage(c, true));
  times.push(`checks ${seconds(checksStart)} wall`);
  return results;
})();
const r = await stage(TESTS, false);
const failed = (await checks).find((c) => c.code !== 0);
if (failed) fail(failed.name, failed.code);
if (r.code !== 0) fail(r.name, r.code);
console.log(`\nnpm test: ${times.join(', ')}; ${seconds(total)} in all`);
