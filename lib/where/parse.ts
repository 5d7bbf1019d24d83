import { ENTITY_ATTRIBUTES, type EntityAttributes } from './attributes.ts';
import type { AttrType, Literal, Operand, Operator, Query, Term } from './ast.ts';
import { tokenize, WhereError, type Token } from './tokens.ts';
import { compileRegex } from './patterns.ts';

const MAX_ATTRIBUTE = 41;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Which operators each operand type accepts. */
const OPS_BY_TYPE: Record<AttrType, readonly string[]> = {
  string: [
    '<',
    '<=',
    '>',
    '>=',
    '=',
    '!=',
    'LIKE',
    'NOT LIKE',
    'ILIKE',
    'NOT ILIKE',
    '~',
    '~*',
    '!~',
    '!~*',
    'IN',
    'NOT IN',
    'IS NULL',
    'IS NOT NULL',
  ],
  int: ['<', '<=', '>', '>=', '=', '!=', 'IN', 'NOT IN', 'IS NULL', 'IS NOT NULL'],
  bool: ['=', '!=', 'IS NULL', 'IS NOT NULL', 'IS BOOL'],
  uuid: ['=', '!=', 'IN', 'NOT IN', 'IS NULL', 'IS NOT NULL'],
  time: ['<', '<=', '>', '>=', '=', '!=', 'IS NULL', 'IS NOT NULL'],
  array: ['?', 'IS NULL', 'IS NOT NULL'],
  map: ['IS NULL', 'IS NOT NULL'],
  idset: ['?', 'IS NULL', 'IS NOT NULL'],
};

/** Parses and type-checks a where query against one entity's allow-list. */
export function parseWhere(text: string, entity: string): Query {
  const schema = ENTITY_ATTRIBUTES[entity];
  if (!schema) throw new Error(`no where attributes declared for ${entity}`);
  const p = new Parser(tokenize(text), schema);
  const terms: Term[] = [];
  if (p.peek().kind === 'end') throw new WhereError('empty query', 1);
  terms.push(p.term());
  while (p.peek().kind !== 'end') {
    const t = p.next();
    if (t.kind === 'keyword' && t.text === 'AND') {
      terms.push(p.term());
      continue;
    }
    if (t.kind === 'keyword' && t.text === 'OR')
      throw new WhereError('OR is not supported; only AND joins terms', t.pos);
    throw new WhereError(`expected AND or end of query, found '${t.text}'`, t.pos);
  }
  return { terms, text };
}

class Parser {
  private i = 0;
  constructor(
    private readonly tokens: Token[],
    private readonly schema: EntityAttributes,
  ) {}

  peek(offset = 0): Token {
    return this.tokens[Math.min(this.i + offset, this.tokens.length - 1)]!;
  }
  next(): Token {
    const t = this.peek();
    if (this.i < this.tokens.length - 1) this.i++;
    return t;
  }
  private isKw(word: string, offset = 0): boolean {
    const t = this.peek(offset);
    return t.kind === 'keyword' && t.text === word;
  }
  private expectPunct(c: string): Token {
    const t = this.next();
    if (t.kind !== 'punct' || t.text !== c) throw new WhereError(`expected '${c}', found ${describe(t)}`, t.pos);
    return t;
  }

  term(): Term {
    const left = this.operand(true);
    const pos = left.pos;
    let op: Term['op'];
    let right: Term['right'];
    if (this.isKw('IS')) {
      const isTok = this.next();
      const not = this.isKw('NOT');
      if (not) this.next();
      const t = this.next();
      if (t.kind === 'keyword' && t.text === 'NULL') {
        op = not ? 'IS NOT NULL' : 'IS NULL';
      } else if (t.kind === 'keyword' && (t.text === 'TRUE' || t.text === 'FALSE')) {
        this.checkOp(left, 'IS BOOL', isTok);
        return { left, op: 'IS BOOL', truth: { not, value: t.text === 'TRUE' }, pos };
      } else throw new WhereError(`expected NULL, TRUE or FALSE after IS, found ${describe(t)}`, t.pos);
      this.checkOp(left, op, isTok);
      return { left, op, pos };
    }
    const opTok = this.peek();
    op = this.operator();
    this.checkOp(left, op, opTok);
    if (op === 'IN' || op === 'NOT IN') {
      this.expectPunct('(');
      const items: Literal[] = [this.literal(left)];
      while (this.peek().kind === 'punct' && this.peek().text === ',') {
        this.next();
        items.push(this.literal(left));
      }
      this.expectPunct(')');
      right = { kind: 'list', items };
    } else if (this.peek().kind === 'ident' || this.peek().kind === 'mapkey' || this.isKw('LEN')) {
      const operand = this.operand(false);
      const want = op === '?' ? 'string' : left.type;
      if (operand.type !== want && !compatible(want, operand.type)) {
        throw new WhereError(`cannot compare ${left.type} with ${operand.type} attribute`, operand.pos);
      }
      right = { kind: 'operand', operand };
    } else {
      right = { kind: 'literal', literal: this.literal(left, op) };
    }
    let truth: Term['truth'];
    if (this.isKw('IS')) {
      const isTok = this.next();
      const not = this.isKw('NOT');
      if (not) this.next();
      const t = this.next();
      if (t.kind !== 'keyword' || (t.text !== 'TRUE' && t.text !== 'FALSE'))
        throw new WhereError(`expected TRUE or FALSE after IS, found ${describe(t)}`, t.pos ?? isTok.pos);
      truth = { not, value: t.text === 'TRUE' };
    }
    return { left, op, right, truth, pos };
  }

  private checkOp(left: Operand, op: Term['op'], at: Token): void {
    if (!OPS_BY_TYPE[left.type].includes(op)) {
      throw new WhereError(
        `operator ${op === 'IS BOOL' ? 'IS TRUE/FALSE' : op} does not apply to ${operandName(left)} (${left.type})`,
        at.pos,
      );
    }
  }

  private operator(): Operator {
    const t = this.next();
    if (t.kind === 'op') {
      const map: Record<string, Operator> = { '~~': 'LIKE', '!~~': 'NOT LIKE' };
      return map[t.text] ?? (t.text as Operator);
    }
    if (t.kind === 'keyword') {
      if (t.text === 'LIKE' || t.text === 'ILIKE' || t.text === 'IN') return t.text;
      if (t.text === 'NOT') {
        const u = this.next();
        if (u.kind === 'keyword' && (u.text === 'LIKE' || u.text === 'ILIKE' || u.text === 'IN'))
          return `NOT ${u.text}` as Operator;
        throw new WhereError(`expected LIKE, ILIKE or IN after NOT, found ${describe(u)}`, u.pos);
      }
    }
    throw new WhereError(`expected an operator, found ${describe(t)}`, t.pos);
  }

  private literal(left: Operand, op?: Term['op']): Literal {
    const t = this.next();
    const want: AttrType = op === '?' ? 'string' : left.type;
    let lit: Literal;
    if (t.kind === 'string') lit = { kind: 'string', value: t.text, pos: t.pos };
    else if (t.kind === 'int') lit = { kind: 'int', value: Number(t.text), pos: t.pos };
    else if (t.kind === 'keyword' && (t.text === 'TRUE' || t.text === 'FALSE'))
      lit = { kind: 'bool', value: t.text === 'TRUE', pos: t.pos };
    else throw new WhereError(`expected a literal, found ${describe(t)}`, t.pos);
    const ok =
      (want === 'string' && lit.kind === 'string') ||
      (want === 'int' && lit.kind === 'int') ||
      (want === 'bool' && lit.kind === 'bool') ||
      (want === 'uuid' && lit.kind === 'string') ||
      (want === 'time' && lit.kind === 'string');
    if (!ok) throw new WhereError(`${operandName(left)} needs ${article(want)} literal, found ${describe(t)}`, t.pos);
    if (want === 'uuid' && lit.kind === 'string' && !UUID.test(lit.value))
      throw new WhereError(`'${lit.value}' is not a UUID`, t.pos);
    if (want === 'time' && lit.kind === 'string' && Number.isNaN(Date.parse(lit.value)))
      throw new WhereError(`'${lit.value}' is not a time`, t.pos);
    if (lit.kind === 'string' && (op === '~' || op === '~*' || op === '!~' || op === '!~*')) {
      try {
        compileRegex(lit.value, op === '~*' || op === '!~*');
      } catch (e) {
        throw new WhereError(
          `bad regular expression '${lit.value}' (RE2 syntax: no backreferences or lookaround): ${(e as Error).message}`,
          t.pos,
        );
      }
    }
    return lit;
  }

  /** `LEN(attr)`, `Labels.key`, `Entity.[*.]Attr` or `Attr`. */
  operand(isLeft: boolean): Operand {
    const t = this.next();
    if (t.kind === 'keyword' && t.text === 'LEN') {
      this.expectPunct('(');
      const inner = this.operand(isLeft);
      this.expectPunct(')');
      if (inner.kind !== 'attr' || (inner.type !== 'array' && inner.type !== 'map' && inner.type !== 'idset')) {
        throw new WhereError(`LEN() needs an array or map attribute, not ${operandName(inner)}`, inner.pos);
      }
      return { kind: 'len', path: inner.path, type: 'int', pos: t.pos };
    }
    if (t.kind === 'mapkey') {
      const [map, key] = t.text.split('\u0000') as ['Labels' | 'Annotations', string];
      return { kind: 'mapkey', map, key, type: 'string', pos: t.pos };
    }
    if (t.kind !== 'ident') throw new WhereError(`expected an attribute, found ${describe(t)}`, t.pos);
    checkName(t);
    const relation = this.schema.relations[t.text];
    if (relation && this.peek().kind === 'punct' && this.peek().text === '.') {
      this.next();
      let any = false;
      if (this.peek().kind === 'punct' && this.peek().text === '*') {
        this.next();
        this.expectPunct('.');
        any = true;
      }
      const a = this.next();
      if (a.kind === 'mapkey') {
        throw new WhereError(`labels of a related ${relation} cannot be queried`, a.pos);
      }
      if (a.kind !== 'ident') throw new WhereError(`expected an attribute of ${relation}, found ${describe(a)}`, a.pos);
      checkName(a);
      const type = ENTITY_ATTRIBUTES[relation]?.attributes[a.text];
      if (!type) throw new WhereError(`unknown attribute '${a.text}' of ${relation}`, a.pos);
      return { kind: 'attr', path: [t.text, a.text], any, type, pos: t.pos };
    }
    const type = this.schema.attributes[t.text];
    if (!type) throw new WhereError(`unknown attribute '${t.text}' for ${this.schema.entity}`, t.pos);
    return { kind: 'attr', path: [t.text], any: false, type, pos: t.pos };
  }
}

function checkName(t: Token): void {
  if (t.text.length > MAX_ATTRIBUTE)
    throw new WhereError(`attribute name '${t.text.slice(0, 20)}…' is longer than ${MAX_ATTRIBUTE} characters`, t.pos);
}

function compatible(a: AttrType, b: AttrType): boolean {
  return (a === 'uuid' && b === 'string') || (a === 'string' && b === 'uuid');
}

function operandName(o: Operand): string {
  if (o.kind === 'mapkey') return `${o.map}.${o.key}`;
  if (o.kind === 'len') return `LEN(${o.path.join('.')})`;
  return o.path.join('.');
}

function article(t: AttrType): string {
  return t === 'int' || t === 'uuid'
    ? `an ${t === 'int' ? 'integer' : 'UUID (quoted)'}`
    : t === 'time'
      ? 'a quoted time'
      : `a ${t}`;
}

function describe(t: Token): string {
  if (t.kind === 'end') return 'end of query';
  if (t.kind === 'string') return `'${t.text}'`;
  if (t.kind === 'mapkey') return t.text.replace('\u0000', '.');
  return `'${t.text}'`;
}

/** The related entities (e.g. `UpstreamUnit`) a query reads, so a list can load them first. */
export function relationsUsed(q: Query): Set<string> {
  const out = new Set<string>();
  const visit = (o: Operand) => {
    if (o.kind !== 'mapkey' && o.path.length > 1) out.add(o.path[0]!);
  };
  for (const t of q.terms) {
    visit(t.left);
    if (t.right?.kind === 'operand') visit(t.right.operand);
  }
  return out;
}
