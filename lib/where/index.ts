/** The where language: parse once (errors carry positions), then match entities as the API's JSON. */
export { parseWhere, relationsUsed } from './parse.ts';
export { matches } from './evaluate.ts';
export { WhereError } from './tokens.ts';
export type { Query } from './ast.ts';
export { FILTERABLE } from './attributes.ts';
