// `npm run bench:cli`: how long `cub help` and `cub space list` take, against `node -e ""` on the same
// machine, as medians of a few runs each, and their ratios (the bundled cub should stay within 3x).
// `space list` talks to a local HTTP server in this process that answers at once with two Spaces, so
// what is measured is cub's own start, parse, request and print, not the store behind a real server.
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { promisify } from 'node:util';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../cli/bin.js', import.meta.url));
const RUNS = Number(process.env.BENCH_RUNS ?? 9);

const run = promisify(execFile);

async function median(args, env = {}) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    await run(process.execPath, args, { env: { ...process.env, CUB_CONTEXT: '/nonexistent', ...env } });
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[Math.floor(RUNS / 2)];
}

const spaces = JSON.stringify(
  ['acme-base', 'acme-dev'].map((Slug, i) => ({ Slug, SpaceID: `s${i}`, Labels: {}, Version: 1 })),
);
const server = createServer((req, res) => {
  res.writeHead(req.url === '/space' ? 200 : 404, { 'content-type': 'application/json' });
  res.end(req.url === '/space' ? spaces : '{"Message":"not found"}');
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}`;

const node = await median(['-e', '']);
const help = await median([BIN, 'help']);
const list = await median([BIN, 'space', 'list'], { CUB_SERVER: url, CUB_TOKEN: 'bench' });
server.close();
console.log(`node -e ""       ${node.toFixed(0)} ms`);
console.log(`cub help         ${help.toFixed(0)} ms`);
console.log(`cub space list   ${list.toFixed(0)} ms`);
console.log(`cub help / node -e "":       ${(help / node).toFixed(2)}x (goal: within 3x)`);
console.log(`cub space list / node -e "": ${(list / node).toFixed(2)}x (goal: within 3x)`);
