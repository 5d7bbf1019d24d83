/**
 * `npm run bench:hostile`: the inputs issue 14 found stalling the server, sent to a local server over
 * DynamoDB Local, each answered with its status, its wall time and the longest the event loop was held
 * while it ran (perf_hooks' event-loop delay, 10 ms resolution). One run, printed; no pass/fail.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { benchServer } from './server.ts';

const server = await benchServer('hostile');
const { call } = server;
try {
  const rows: { input: string; status: number; wallMs: number; loopMaxMs: number }[] = [];
  const measure = async (input: string, run: () => Promise<number>) => {
    const h = monitorEventLoopDelay({ resolution: 10 });
    h.enable();
    const t = performance.now();
    const status = await run();
    const wallMs = performance.now() - t;
    h.disable();
    rows.push({ input, status, wallMs: Math.round(wallMs), loopMaxMs: Math.round(h.max / 1e6) });
  };
  // A Space with long labels for the patterns to chew on.
  await call('POST', '/space', { Slug: 'target', Labels: { x: 'a'.repeat(250), y: 'a'.repeat(61) } });
  for (let i = 0; i < 50; i++)
    await call('POST', '/space', { Slug: `filler-${i}`, Labels: { x: 'a'.repeat(200) + 'b' } });
  const where = (w: string) => `/space?where=${encodeURIComponent(w)}`;
  await measure("where Labels.x ~ '(a+)+$' (51 Spaces, 250-char labels)", () =>
    call('GET', where("Labels.x ~ '(a+)+$'")),
  );
  await measure("where Labels.x ~* '^(a|aa)+c$'", () => call('GET', where("Labels.x ~* '^(a|aa)+c$'")));
  await measure("where Labels.y LIKE '%a%a%a%a%a%a%a%a%c'", () =>
    call('GET', where("Labels.y LIKE '%a%a%a%a%a%a%a%a%c'")),
  );
  await measure("where Labels.x ILIKE '%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%c'", () =>
    call('GET', where("Labels.x ILIKE '%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%a%c'")),
  );
  const nested = `cel:[${Array.from({ length: 60 }, (_, i) => i).join(',')}].all(a, [${Array.from({ length: 60 }, (_, i) => i).join(',')}].all(b, [1,2,3].all(c, a + b + c >= 0)))`;
  await measure('workflow with a nested CEL .all() (refused when written)', () =>
    call('POST', '/space/target/change_workflow', {
      Slug: 'nested',
      Stages: [{ Name: 's', WhereSpace: "Slug = 'x'", Prerequisites: ['p'] }],
      CustomPrerequisites: [{ Name: 'p', Expression: nested }],
    }),
  );
  const wide = `cel:[${Array.from({ length: 60 }, (_, i) => i).join(',')}].all(a, Space.Labels.x.size() > a)`;
  await measure('workflow with the widest CEL allowed', () =>
    call('POST', '/space/target/change_workflow', {
      Slug: 'wide',
      Stages: [{ Name: 's', WhereSpace: "Slug = 'x'", Prerequisites: ['p'] }],
      CustomPrerequisites: [{ Name: 'p', Expression: wide }],
    }),
  );
  const bomb = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  a: &a ["x","x","x","x","x","x","x","x","x"]\n  b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n  c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\n  d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n  e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n  f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n  g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\n  h: [*g,*g,*g,*g,*g,*g,*g,*g,*g]\n`;
  await measure('YAML alias bomb as a Unit', () => call('POST', '/space/target/unit', { Slug: 'bomb', Data: bomb }));
  // 80,000 keys in about 1 MB, each write different (nothing cached): a fresh process's first write, then warm ones.
  const big = (n: number, edit = '') =>
    `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big-${n}\ndata:\n${Array.from({ length: 80000 }, (_, i) => `  k${i}: ${i % 10}\n`).join('')}${edit}`;
  const kb = Math.round(Buffer.byteLength(big(0)) / 1024);
  for (const n of [0, 1, 2])
    await measure(`Unit of 80,000 keys (${kb} KB) created${n ? ', warm' : ', first in this process'}`, () =>
      call('POST', '/space/target/unit', { Slug: `big-${n}`, Data: big(n) }),
    );
  const { Version: version } = await server.get<{ Version: number }>('/space/target/unit/big-2');
  await measure('the same Unit updated (one key more)', () =>
    call('PATCH', '/space/target/unit/big-2', { Version: version, Data: big(2, '  extra: 1\n') }),
  );
  await measure('6 MB incompressible Unit', () =>
    call('POST', '/space/target/unit', {
      Slug: 'noise',
      Data: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\ndata:\n  b: ${Buffer.from(Array.from({ length: 4_400_000 }, () => Math.floor(Math.random() * 256))).toString('base64')}\n`,
    }),
  );
  await measure('60 MB body', () => call('POST', '/space/target/unit', 'x'.repeat(60 * 1024 * 1024)));
  await measure('hook body of 5.7 MB', () =>
    call('POST', '/hooks/argocd', JSON.stringify({ pad: 'p'.repeat(5_700_000) })),
  );
  // Written, not console.log'd: an input holds '%c', which console.log would read as a format.
  process.stdout.write(`${'input'.padEnd(72)} status wall ms loop max ms\n`);
  for (const r of rows)
    process.stdout.write(
      `${r.input.padEnd(72)} ${String(r.status).padEnd(6)} ${String(r.wallMs).padStart(7)} ${String(r.loopMaxMs).padStart(11)}\n`,
    );
} finally {
  await server.close();
}
