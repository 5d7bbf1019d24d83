import { BUILTIN_PREREQUISITES, parseDuration, type WorkflowDefinition } from '../model/entities.ts';
import { Invalid } from '../model/errors.ts';
import { parseWhere } from '../where/index.ts';
import { compileCel } from '../gates/cel.ts';
import { soakDuration } from '../gates/prerequisites.ts';

/** The longest Soak a workflow may ask for. */
const MAX_SOAK_MS = 30 * 24 * 3600 * 1000;

const BUILTINS = new Set<string>(Object.values(BUILTIN_PREREQUISITES));

/**
 * Checks a workflow when it is written: Stage names unique, every named prerequisite known (built-in,
 * custom, attestation), each WhereSpace parses over Spaces, each `cel:` compiles, and
 * ReleasePrerequisites name only attestation prerequisites.
 */
/**
 * Invoke and the Link types (TransformPaths, Insert, Upsert) carry a change that is in no Space before
 * its first promotion, so a first Stage with prerequisites (evaluated over the base) fits them not:
 * why, naming the Stage, or undefined.
 */
export function firstStageGatesProblem(
  updateType: string,
  w: Pick<WorkflowDefinition, 'Stages'> & { Slug?: string },
): string | undefined {
  if (updateType !== 'Invoke' && !['TransformPaths', 'Insert', 'Upsert'].includes(updateType)) return undefined;
  const first = w.Stages[0];
  if (!first?.Prerequisites?.length) return undefined;
  return `${updateType === 'Invoke' ? 'an' : 'a'} ${updateType} change order cannot follow workflow${w.Slug ? ` '${w.Slug}'` : ''}: its first Stage '${first.Name}' has prerequisites (${first.Prerequisites.join(', ')}), evaluated over the base, where ${updateType === 'Invoke' ? 'an' : 'a'} ${updateType} change never is; move them to the next Stage`;
}

export function validateWorkflow(w: WorkflowDefinition): void {
  if (!w.Stages.length) throw new Invalid('a workflow needs at least one Stage');
  const names = new Set<string>();
  for (const s of w.Stages) {
    if (names.has(s.Name)) throw new Invalid(`Stage '${s.Name}' is named twice; Stage names must be unique`);
    names.add(s.Name);
  }
  const custom = new Set<string>();
  for (const c of w.CustomPrerequisites ?? []) {
    if (BUILTINS.has(c.Name)) throw new Invalid(`custom prerequisite '${c.Name}' has the name of a built-in one`);
    if (custom.has(c.Name)) throw new Invalid(`custom prerequisite '${c.Name}' is declared twice`);
    custom.add(c.Name);
    try {
      compileCel(c.Expression);
    } catch (e) {
      throw new Invalid(
        `custom prerequisite '${c.Name}': the expression does not compile: ${(e as Error).message.split('\n')[0]}`,
      );
    }
  }
  const attestations = new Set<string>();
  for (const a of w.AttestationPrerequisites ?? []) {
    if (BUILTINS.has(a.Name) || custom.has(a.Name) || attestations.has(a.Name))
      throw new Invalid(`attestation prerequisite '${a.Name}' clashes with another prerequisite's name`);
    if (a.MaxAge !== undefined && !/^\d+[smhd]$/.test(a.MaxAge))
      throw new Invalid(`attestation prerequisite '${a.Name}': MaxAge '${a.MaxAge}' must be a duration such as 72h`);
    attestations.add(a.Name);
  }
  const known = (p: string) => (BUILTINS.has(p) && p !== 'Soak') || custom.has(p) || attestations.has(p);
  const check = (where: string, list: string[] | undefined) => {
    for (const p of list ?? []) {
      const soak = soakDuration(p);
      if (p === 'Soak' || (soak !== undefined && !(soak > 0 && soak <= MAX_SOAK_MS)))
        throw new Invalid(`${where} names prerequisite '${p}': Soak takes a duration, e.g. Soak=30m (at most 30d)`);
      if (soak === undefined && !known(p))
        throw new Invalid(
          `${where} names prerequisite '${p}', which is neither built in (${[...BUILTINS].map((b) => (b === 'Soak' ? 'Soak=<duration>' : b)).join(', ')}) nor declared`,
        );
    }
  };
  for (const s of w.Stages) {
    try {
      parseWhere(s.WhereSpace, 'Space');
    } catch (e) {
      throw new Invalid(`Stage '${s.Name}' WhereSpace: ${(e as Error).message}`);
    }
    if (
      s.FailureBudget &&
      (s.FailureBudget.MaxFailedSpaces === undefined) === (s.FailureBudget.MaxFailedPercent === undefined)
    ) {
      throw new Invalid(`Stage '${s.Name}' FailureBudget takes one of MaxFailedSpaces or MaxFailedPercent`);
    }
    if (s.Recall) {
      const within = parseDuration(s.Recall.Within);
      if (!within || within > MAX_SOAK_MS)
        throw new Invalid(
          `Stage '${s.Name}' Recall.Within '${s.Recall.Within}' must be a duration such as 30m or 2h (at most 30d)`,
        );
    }
    check(`Stage '${s.Name}'`, s.Prerequisites);
    check(`Stage '${s.Name}' ReleasePrerequisites`, s.ReleasePrerequisites);
    for (const p of s.ReleasePrerequisites ?? [])
      if (!attestations.has(p))
        throw new Invalid(`Stage '${s.Name}' ReleasePrerequisites may name only attestation prerequisites, not '${p}'`);
  }
  check('Final', w.Final?.Prerequisites);
}
