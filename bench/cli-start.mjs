// `npm run bench:cli`: how long `cub help` takes to start, against `node -e ""` on the same machine,
// as medians of a few runs each, and their ratio (the bundled cub should stay within 3x).
import { execFileSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../cli/bin.js', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 9);

function median(args) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    execFileSync(process.execPath, args, { stdio: 'ignore' });
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)];
}

const node = median(['-e', '']);
const cub = median([BIN, 'help']);
console.log(`node -e ""   ${node.toFixed(0)} ms`);
console.log(`cub help     ${cub.toFixed(0)} ms`);
console.log(`cub help / node -e "": ${(cub / node).toFixed(2)}x (goal: within 3x)`);
