#!/usr/bin/env node
// `npm test`: build cub and the page, then the checks and the tests side by side, each stage timed. The tests
// keep both cores mostly busy but wait on DynamoDB Local between requests; the checks (tsc, eslint, prettier,
// one at a time) fill that time instead of taking 31 s of their own before the tests start. The first stage
// that fails ends the run with its output and exit status (a failed check stops the tests).
import { spawn } from 'node:child_process';

const BUILDS = [
  ['build cub', 'node', ['cli/build.mjs']],
  ['build the rollout page', 'node', ['web/build.mjs']],
];
// One at a time beside the tests, the longest first.
const CHECKS = [
  ['type check', 'npx', ['tsc', '-p', '.']],
  ['lint', 'npx', ['eslint', '.']],
  ['format', 'npx', ['prettier', '--check', '--log-level', 'warn', '.']],
  ['type check the page', 'npx', ['tsc', '-p', 'web']],
];
// vitest itself, not through npx, started in a process group of its own: a failed check stops the group (vitest, its
// workers and the DynamoDB Local it started).
const TESTS = ['tests', process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...process.argv.slice(2)]];

const times = [];
const total = Date.now();
const seconds = (since) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const fail = (name, code) => {
  console.error(`\nnpm test: ${name} failed (${times.join(', ')})`);
  process.exit(code || 1);
};

/**
 * Runs a stage; `quiet` keeps its output until it ends (so stages run side by side do not interleave). `group`
 * starts it in a process group of its own, so that stopping it stops what it started too (vitest's workers and
 * DynamoDB Local).
 */
function stage([name, cmd, args], { quiet = false, group = false, started = () => {} } = {}) {
  const start = Date.now();
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit', detached: group });
    started(child);
    let out = '';
    child.stdout?.on('data', (d) => (out += d));
    child.stderr?.on('data', (d) => (out += d));
    child.on('close', (code, signal) => {
      if (out) process.stdout.write(out);
      times.push(`${name} ${seconds(start)}`);
      resolve({ name, code: code ?? (signal ? 1 : 0), signal });
    });
  });
}

for (const s of BUILDS) {
  const r = await stage(s);
  if (r.code !== 0) fail(r.name, r.code);
}
/** The tests' process group, stopped when a check fails or this run is interrupted. */
let tests;
const stopTests = (signal = 'SIGTERM') => {
  try {
    if (tests?.exitCode === null) process.kill(-tests.pid, signal);
  } catch {
    // Already gone.
  }
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'])
  process.on(signal, () => {
    stopTests(signal);
    process.exit(130);
  });
let check;
let checkFailed;
const checks = (async () => {
  const start = Date.now();
  for (const c of CHECKS) {
    const r = await stage(c, { quiet: true, started: (child) => (check = child) });
    if (r.code !== 0) {
      checkFailed = r;
      stopTests();
      return;
    }
  }
  times.push(`checks ${seconds(start)}`);
})();
const r = await stage(TESTS, { group: true, started: (child) => (tests = child) });
// Tests that failed on their own end the run at once; tests a failed check stopped report that check.
if (r.code !== 0 && !checkFailed) {
  if (check?.exitCode === null) check.kill('SIGTERM');
  fail(r.name, r.code);
}
await checks;
if (checkFailed) fail(checkFailed.name, checkFailed.code);
console.log(`\nnpm test: ${times.join(', ')}; ${seconds(total)} in all`);
