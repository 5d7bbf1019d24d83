/** docs/reference/cub.md: every `cub <entity> <verb>` with its arguments, flags and example, from the help cub prints (`npm run docs`). */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ENTITY_HELP, VERBS } from './program.ts';
import { FLAGS, GLOBAL } from './flags.ts';

/** The reference, as Markdown. */
export function cubReference(): string {
  const out = [
    '# cub reference',
    '',
    'Generated from the help `cub` prints (`npm run docs`; a test fails when it is stale). Every verb also takes',
    `the global flags ${GLOBAL.map((g) => `\`--${g}\``).join(', ')}; \`cub <entity> <verb> --help\` prints the same. Each example runs as`,
    'written on the fleet `npm run seed` makes (`test/scenarios/help-examples.test.ts` runs them all).',
    '',
  ];
  for (const [entity, what] of ENTITY_HELP) {
    out.push(`## ${entity}`, '', what, '');
    for (const [verb, h] of Object.entries(VERBS[entity]!)) {
      out.push(`### cub ${entity} ${verb}${(h.args ?? []).map(([name]) => ` ${name}`).join('')}`, '', h.summary, '');
      for (const [name, help] of h.args ?? []) out.push(`- \`${name}\`: ${help}`);
      for (const f of h.flags ?? []) {
        const [name, help, value] = typeof f === 'string' ? [f] : f;
        const spec = FLAGS[name]!;
        if (spec.hidden) continue;
        const v = value ?? spec.value;
        out.push(`- \`--${name}${v ? ` ${v}` : ''}\`: ${help ?? spec.help}`);
      }
      out.push('', '```sh', h.example, '```', '');
    }
  }
  return out.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(new URL('../docs/reference/cub.md', import.meta.url), cubReference());
  console.log('wrote docs/reference/cub.md');
}
