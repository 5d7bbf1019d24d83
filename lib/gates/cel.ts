import { Environment } from '@marcbachmann/cel-js';

/** A custom prerequisite's CEL, compiled: `cel:` stripped, parsed and checked once. */
export type CompiledCel = (vars: Record<string, unknown>) => unknown;

/**
 * What an expression may name, as the spec gives it: the Space being gated, the ChangeOrder as the API
 * returns it (State, Stage, Completed, ResolvedSpaceIDs…), and the Release of the change there (or null).
 * Any other name is refused when the workflow is written, not when a gate is evaluated.
 */
export const CEL_VARIABLES = ['Space', 'ChangeOrder', 'Release'] as const;

/**
 * Bounds on what an expression may cost, checked when the workflow is written: its length, its parsed
 * size and depth, literal lists and maps, and no comprehension (all, exists, exists_one, map, filter)
 * inside another, whose costs would multiply. What is left costs at most its size times the largest
 * collection it reads. `matches()` is refused: the library runs it on JavaScript's backtracking
 * regex engine, which a pattern such as `(a+)+$` stalls (a where `~` in the Stage's WhereSpace runs on
 * RE2 instead).
 */
export const CEL_LIMITS = {
  maxLength: 2048,
  maxAstNodes: 256,
  maxDepth: 24,
  maxListElements: 64,
  maxMapEntries: 64,
  maxCallArguments: 8,
} as const;
const COMPREHENSIONS = new Set(['all', 'exists', 'exists_one', 'map', 'filter']);

const ENV = CEL_VARIABLES.reduce(
  (env, name) => env.registerVariable(name, 'dyn'),
  new Environment({
    unlistedVariablesAreDyn: false,
    limits: {
      maxAstNodes: CEL_LIMITS.maxAstNodes,
      maxDepth: CEL_LIMITS.maxDepth,
      maxListElements: CEL_LIMITS.maxListElements,
      maxMapEntries: CEL_LIMITS.maxMapEntries,
      maxCallArguments: CEL_LIMITS.maxCallArguments,
    },
  }),
);

interface AstNode {
  op: string;
  args: unknown;
}
const isNode = (x: unknown): x is AstNode => !!x && typeof x === 'object' && typeof (x as AstNode).op === 'string';

/** Refuses what the limits cannot express: a comprehension inside another, and matches(). */
function checkShape(node: unknown, inComprehension: boolean): void {
  if (Array.isArray(node)) return node.forEach((n) => checkShape(n, inComprehension));
  if (!isNode(node)) return;
  const args = Array.isArray(node.args) ? node.args : [node.args];
  if (node.op === 'rcall' || node.op === 'call') {
    const name = String(args[0]);
    if (name === 'matches')
      throw new Error(
        'matches() is not available in gate expressions (it would run a backtracking regular expression); select Spaces by pattern with a where ~ instead',
      );
    if (node.op === 'rcall' && COMPREHENSIONS.has(name)) {
      if (inComprehension)
        throw new Error(
          `${name}() inside another comprehension is not allowed: nested comprehensions multiply their cost`,
        );
      checkShape(args[1], inComprehension);
      return checkShape(args[2], true);
    }
  }
  for (const a of args) checkShape(a, inComprehension);
}

const compiled = new Map<string, CompiledCel>();

/** Compiles `cel:<expression>` within the limits; a broken one, one over a limit, or one naming an undeclared variable, throws saying why. Compiled once per expression. */
export function compileCel(expression: string): CompiledCel {
  const cached = compiled.get(expression);
  if (cached) return cached;
  if (!expression.startsWith('cel:')) throw new Error("a custom prerequisite's Expression must start with 'cel:'");
  const body = expression.slice(4).trim();
  if (!body) throw new Error('the CEL expression is empty');
  if (body.length > CEL_LIMITS.maxLength)
    throw new Error(`the CEL expression is ${body.length} characters, more than ${CEL_LIMITS.maxLength}`);
  const parsed = ENV.parse(body);
  checkShape((parsed as unknown as { ast: unknown }).ast, false);
  const checked = parsed.check();
  if (!checked.valid)
    throw new Error(
      `${checked.error?.message.split('\n')[0] ?? 'it does not type-check'} (an expression may name ${CEL_VARIABLES.join(', ')})`,
    );
  const fn = parsed as unknown as CompiledCel;
  if (compiled.size >= 1000) compiled.delete(compiled.keys().next().value!);
  compiled.set(expression, fn);
  return fn;
}

const readsCache = new Map<string, string[][]>();

/**
 * The variable paths an expression reads (`Space.Labels.tier`, `Release.ReleaseNum`, `Space.Labels['x']`),
 * the longest of each chain, in the order they appear: what an explanation shows the values of.
 */
export function celReads(expression: string): string[][] {
  const cached = readsCache.get(expression);
  if (cached) return cached;
  const ast = (ENV.parse(expression.slice(4).trim()) as unknown as { ast: unknown }).ast;
  const out: string[][] = [];
  const seen = new Set<string>();
  const pathOf = (n: unknown): string[] | undefined => {
    if (!isNode(n)) return undefined;
    const args = Array.isArray(n.args) ? n.args : [n.args];
    if (n.op === 'id') return [String(n.args)];
    if (n.op === '.') {
      const base = pathOf(args[0]);
      return base && [...base, String(args[1])];
    }
    if (
      n.op === '[]' &&
      isNode(args[1]) &&
      args[1].op === 'value' &&
      (typeof args[1].args === 'string' || typeof args[1].args === 'number' || typeof args[1].args === 'bigint')
    ) {
      const base = pathOf(args[0]);
      return base && [...base, String(args[1].args)];
    }
    return undefined;
  };
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!isNode(n)) return;
    const p = pathOf(n);
    if (p && (CEL_VARIABLES as readonly string[]).includes(p[0]!)) {
      const key = p.join('\u0000');
      if (!seen.has(key)) {
        seen.add(key);
        out.push(p);
      }
      return;
    }
    walk(n.args);
  };
  walk(ast);
  if (readsCache.size >= 1000) readsCache.delete(readsCache.keys().next().value!);
  readsCache.set(expression, out);
  return out;
}
