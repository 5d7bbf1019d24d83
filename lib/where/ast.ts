/** The where language's syntax tree. */
/** `idset`: a map whose keys are IDs and values empty (a revision's Tags, ChangeOrders…), asked `Attr ? '<id>'`. */
export type AttrType = 'string' | 'int' | 'bool' | 'uuid' | 'time' | 'array' | 'map' | 'idset';

/** What a term reads: an attribute (maybe of a related entity), a map entry, or the length of a collection. */
export type Operand =
  | { kind: 'attr'; path: string[]; any: boolean; type: AttrType; pos: number }
  | { kind: 'mapkey'; map: 'Labels' | 'Annotations'; key: string; type: 'string'; pos: number }
  | { kind: 'len'; path: string[]; type: 'int'; pos: number };

/** A literal value as written. */
export type Literal =
  | { kind: 'string'; value: string; pos: number }
  | { kind: 'int'; value: number; pos: number }
  | { kind: 'bool'; value: boolean; pos: number };

export type Operator =
  | '<'
  | '<='
  | '>'
  | '>='
  | '='
  | '!='
  | '?'
  | 'LIKE'
  | 'NOT LIKE'
  | 'ILIKE'
  | 'NOT ILIKE'
  | '~'
  | '~*'
  | '!~'
  | '!~*'
  | 'IN'
  | 'NOT IN'
  | 'IS NULL'
  | 'IS NOT NULL';

/** One comparison; `truth` is the trailing `IS [NOT] TRUE|FALSE`, if any. */
export interface Term {
  left: Operand;
  op: Operator | 'IS BOOL';
  right?:
    { kind: 'literal'; literal: Literal } | { kind: 'list'; items: Literal[] } | { kind: 'operand'; operand: Operand };
  truth?: { not: boolean; value: boolean };
  pos: number;
}

/** A parsed query: terms joined by AND. */
export interface Query {
  terms: Term[];
  text: string;
}
