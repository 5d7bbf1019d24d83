import type { Args } from './args.ts';
import { Client, connection } from './client.ts';
import { FLAGS, GLOBAL } from './flags.ts';
import { VERBS } from './program.ts';

/** The scripts `cub completion <shell>` prints: each asks `cub __complete <index> <words…>` for candidates. */
export const COMPLETION_SCRIPTS: Record<string, string> = {
  bash: `# cub completion for bash: source <(cub completion bash)
_cub() {
  local IFS=$'\\n'
  COMPREPLY=($(cub __complete "$COMP_CWORD" "\${COMP_WORDS[@]:1}" 2>/dev/null))
}
complete -o default -F _cub cub
`,
  zsh: `#compdef cub
# cub completion for zsh: source <(cub completion zsh)
_cub() {
  local -a candidates
  candidates=("\${(@f)$(cub __complete $((CURRENT - 1)) "\${(@)words[2,-1]}" 2>/dev/null)}")
  compadd -a candidates
}
compdef _cub cub
`,
  fish: `# cub completion for fish: cub completion fish | source
function __cub_complete
  set -l words (commandline -opc) (commandline -ct)
  cub __complete (math (count $words) - 1) $words[2..-1] 2>/dev/null
end
complete -c cub -f -a '(__cub_complete)'
`,
};

/**
 * Candidates for the word at `index` (1 = the entity) of `words` (the command line after `cub`):
 * entities, then verbs, then the flags of that verb for a word starting with `-`, and the Space slugs
 * the server knows after `--space` (nothing when it cannot be reached: completion never fails loudly).
 */
export async function complete(index: number, words: string[]): Promise<string[]> {
  const current = words[index - 1] ?? '';
  const starts = (xs: Iterable<string>) => [...new Set(xs)].filter((x) => x.startsWith(current)).sort();
  if (index <= 1) return starts(Object.keys(VERBS));
  const verbs = VERBS[words[0]!] ?? {};
  if (index === 2) return starts(Object.keys(verbs));
  const verb = verbs[words[1]!];
  if (current.startsWith('-')) {
    const names = [...(verb?.flags ?? []).map((f) => (typeof f === 'string' ? f : f[0])), ...GLOBAL, 'help'].filter(
      (f) => !FLAGS[f]?.hidden,
    );
    return starts(names.map((f) => `--${f}`));
  }
  if (words[index - 2] === '--space') {
    try {
      const flags = new Map<string, string[]>();
      for (const name of ['server', 'token', 'context']) {
        const at = words.lastIndexOf(`--${name}`, index - 3);
        if (at >= 0 && words[at + 1] !== undefined) flags.set(name, [words[at + 1]!]);
      }
      const a: Args = { positional: [], flags };
      const r = await new Client(connection(a)).get('/space');
      return starts((r.body as { Slug: string }[]).map((s) => s.Slug));
    } catch {
      return [];
    }
  }
  return [];
}
