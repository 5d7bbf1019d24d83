import { parse } from '@marcbachmann/cel-js';

/** A custom prerequisite's CEL, compiled: `cel:` stripped, parsed once. */
export type CompiledCel = (vars: Record<string, unknown>) => unknown;

/** Compiles `cel:<expression>`; a broken one throws with the parser's message. */
export function compileCel(expression: string): CompiledCel {
  if (!expression.startsWith('cel:')) throw new Error("a custom prerequisite's Expression must start with 'cel:'");
  const body = expression.slice(4).trim();
  if (!body) throw new Error('the CEL expression is empty');
  return parse(body) as unknown as CompiledCel;
}
