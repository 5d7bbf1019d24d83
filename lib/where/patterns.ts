/**
 * Pattern matching in linear time, whatever the pattern: regular expressions (`~`, `~*`, `!~`, `!~*`)
 * run on RE2 (re2js: no backtracking, so `(a+)+$` cannot stall the server), LIKE/ILIKE on a matcher
 * that places each `%`-separated segment leftmost, never backtracking. Patterns are at most
 * MAX_STRING characters (the where tokenizer's bound); compiled regexes are cached.
 */
import { RE2JS } from 're2js';

const cache = new Map<string, RE2JS>();
const CACHE_MAX = 512;

/** A regex compiled for RE2; throws with RE2's reason when it is not one (backreferences, lookaround…). */
export function compileRegex(pattern: string, caseInsensitive: boolean): RE2JS {
  const key = `${caseInsensitive ? 'i' : 's'}:${pattern}`;
  let re = cache.get(key);
  if (!re) {
    re = RE2JS.compile(pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value!);
    cache.set(key, re);
  }
  return re;
}

/** Whether the regex matches anywhere in the value (as `~` asks). */
export function regexFinds(pattern: string, value: string, caseInsensitive: boolean): boolean {
  return compileRegex(pattern, caseInsensitive).matcher(value).find();
}

/** Whether a segment (with `_` for any one character) matches `chars` at `at`. */
function segmentAt(seg: string[], chars: string[], at: number): boolean {
  if (at + seg.length > chars.length) return false;
  for (let i = 0; i < seg.length; i++) if (seg[i] !== '_' && seg[i] !== chars[at + i]) return false;
  return true;
}

/**
 * SQL LIKE: `%` any run of characters, `_` any one character, the rest literal, the whole value.
 * Each segment between `%`s is placed at its leftmost fit after the one before: if any placement
 * matches, the leftmost does, so no backtracking is needed. O(value × longest segment).
 */
export function likeMatches(pattern: string, value: string, caseInsensitive: boolean): boolean {
  const p = Array.from(caseInsensitive ? pattern.toLowerCase() : pattern);
  const v = Array.from(caseInsensitive ? value.toLowerCase() : value);
  const segments: string[][] = [[]];
  for (const c of p) {
    if (c === '%') segments.push([]);
    else segments.at(-1)!.push(c);
  }
  if (segments.length === 1) return segments[0]!.length === v.length && segmentAt(segments[0]!, v, 0);
  const first = segments[0]!;
  const last = segments.at(-1)!;
  if (first.length + last.length > v.length || !segmentAt(first, v, 0) || !segmentAt(last, v, v.length - last.length))
    return false;
  let at = first.length;
  const end = v.length - last.length;
  for (const seg of segments.slice(1, -1)) {
    if (!seg.length) continue;
    let found = -1;
    for (let i = at; i + seg.length <= end; i++) {
      if (segmentAt(seg, v, i)) {
        found = i;
        break;
      }
    }
    if (found < 0) return false;
    at = found + seg.length;
  }
  return true;
}
