import { Invalid } from '../model/errors.ts';

/** A where-language error; `position` is 1-based into the query text. */
export class WhereError extends Invalid {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`where: ${message} at position ${position}`);
  }
}

export type TokenKind = 'ident' | 'mapkey' | 'string' | 'int' | 'op' | 'punct' | 'keyword' | 'end';

/** One lexical token; `pos` is 1-based. */
export interface Token {
  kind: TokenKind;
  text: string;
  pos: number;
}

const KEYWORDS = new Set(['AND', 'OR', 'IN', 'NOT', 'LIKE', 'ILIKE', 'IS', 'NULL', 'TRUE', 'FALSE', 'LEN']);
// Longest first, so '!~~' wins over '!~' and '<=' over '<'.
const OPERATORS = ['!~~', '!~*', '<=', '>=', '!=', '<>', '~~', '~*', '!~', '<', '>', '=', '?', '~'];
export const MAX_QUERY = 4096;
export const MAX_STRING = 255;
export const MAX_INT_DIGITS = 10;

/** Splits a where query into tokens; `Labels.` and `Annotations.` are followed by a raw map key. */
export function tokenize(text: string): Token[] {
  if (text.length > MAX_QUERY)
    throw new WhereError(`query is ${text.length} characters, more than ${MAX_QUERY}`, MAX_QUERY + 1);
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const pos = i + 1;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === "'") {
      let s = '';
      i++;
      for (;;) {
        if (i >= text.length) throw new WhereError('unterminated string literal', pos);
        const d = text[i]!;
        if (d === "'") {
          if (text[i + 1] === "'") {
            s += "'";
            i += 2;
            continue;
          }
          i++;
          break;
        }
        s += d;
        i++;
      }
      if (s.length > MAX_STRING)
        throw new WhereError(`string literal is ${s.length} characters, more than ${MAX_STRING}`, pos);
      out.push({ kind: 'string', text: s, pos });
      continue;
    }
    if (/[0-9]/.test(c) || (c === '-' && /[0-9]/.test(text[i + 1] ?? ''))) {
      let j = i + 1;
      while (j < text.length && /[0-9]/.test(text[j]!)) j++;
      if (j < text.length && /[A-Za-z_]/.test(text[j]!))
        throw new WhereError(`bad number '${text.slice(i, j + 1)}'`, pos);
      const num = text.slice(i, j);
      if (num.replace('-', '').length > MAX_INT_DIGITS)
        throw new WhereError(`integer ${num} has more than ${MAX_INT_DIGITS} digits`, pos);
      out.push({ kind: 'int', text: num, pos });
      i = j;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < text.length && /[A-Za-z0-9_]/.test(text[j]!)) j++;
      const word = text.slice(i, j);
      const upper = word.toUpperCase();
      if ((word === 'Labels' || word === 'Annotations') && text[j] === '.') {
        let k = j + 1;
        while (k < text.length && /[A-Za-z0-9_.\-/]/.test(text[k]!)) k++;
        const key = text.slice(j + 1, k);
        if (!key) throw new WhereError(`${word}. must be followed by a key`, j + 2);
        if (key.length > 128) throw new WhereError(`${word} key is ${key.length} characters, more than 128`, j + 2);
        out.push({ kind: 'mapkey', text: `${word}\u0000${key}`, pos });
        i = k;
        continue;
      }
      out.push(KEYWORDS.has(upper) ? { kind: 'keyword', text: upper, pos } : { kind: 'ident', text: word, pos });
      i = j;
      continue;
    }
    if ('(),.*'.includes(c)) {
      out.push({ kind: 'punct', text: c, pos });
      i++;
      continue;
    }
    const op = OPERATORS.find((o) => text.startsWith(o, i));
    if (op) {
      out.push({ kind: 'op', text: op === '<>' ? '!=' : op, pos });
      i += op.length;
      continue;
    }
    throw new WhereError(`unexpected character '${c}'`, pos);
  }
  out.push({ kind: 'end', text: '', pos: text.length + 1 });
  return out;
}
