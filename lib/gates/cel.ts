import { Environment } from '@marcbachmann/cel-js';

/** A custom prerequisite's CEL, compiled: `cel:` stripped, parsed and checked once. */
export type CompiledCel = (vars: Record<string, unknown>) => unknown;

/**
 * What an expression may name, as the spec gives it: the Space being gated, the ChangeOrder as the API
 * returns it (State, Stage, Completed, ResolvedSpaceIDs…), and the Release of the change there (or null).
 * Any other name is refused when the workflow is written, not when a gate is evaluated.
 */
export const CEL_VARIABLES = ['Space', 'ChangeOrder', 'Release'] as const;

const ENV = CEL_VARIABLES.reduce((env, name) => env.registerVariable(name, 'dyn'), new Environment({ unlistedVariablesAreDyn: false }));

/** Compiles `cel:<expression>`; a broken one, or one naming an undeclared variable, throws with the checker's message. */
export function compileCel(expression: string): CompiledCel {
  if (!expression.startsWith('cel:')) throw new Error("a custom prerequisite's Expression must start with 'cel:'");
  const body = expression.slice(4).trim();
  if (!body) throw new Error('the CEL expression is empty');
  const parsed = ENV.parse(body);
  const checked = parsed.check();
  if (!checked.valid) throw new Error(`${checked.error?.message.split('\n')[0] ?? 'it does not type-check'} (an expression may name ${CEL_VARIABLES.join(', ')})`);
  return parsed as unknown as CompiledCel;
}
