// Prometheus regexes (label matchers, label_replace) on a linear-time RE2
// engine, with the fast paths of Prometheus' FastRegexMatcher in front of it.
// A user's pattern must never reach V8's backtracking RegExp: one `(a+)+b`
// would freeze the event loop for every tenant.

import { RE2JS } from 're2js';

/** A compiled label-value regex: fully anchored, `.` matches newlines, as Prometheus. */
export interface Regex {
  readonly source: string;
  matches(value: string): boolean;
  /** The literal values it matches, when it is an alternation of literals (`a|b|c`): postings can look them up. */
  readonly setMatches: readonly string[] | undefined;
}

/** Capture groups of a match, by index (0 = whole match) or name; undefined for a group that did not take part. */
export type RegexGroups = (group: number | string) => string | undefined;

const CACHE_SIZE = 10_000;
const regexCache = new Map<string, Regex>();
const captureCache = new Map<string, RE2JS>();

function cached<T>(cache: Map<string, T>, key: string, make: () => T): T {
  let v = cache.get(key);
  if (v === undefined) {
    v = make();
    if (cache.size >= CACHE_SIZE) cache.clear();
    cache.set(key, v);
  }
  return v;
}

/**
 * Compiles a Prometheus regex. Throws an Error worded as Go's regexp
 * (`error parsing regexp: missing closing ): \`(a\``) on bad syntax.
 */
export function compileRegex(source: string): Regex {
  return cached(regexCache, source, () => {
    const re = compileRe2(source);
    return fastPath(source, re) ?? { source, matches: (v) => re.testExact(v), setMatches: undefined };
  });
}

/** Matches `value` against the anchored regex; the groups of the match, or null when it does not match. */
export function execRegex(source: string, value: string): RegexGroups | null {
  const re = cached(captureCache, source, () => {
    compileRe2(source); // Reports errors on the user's pattern, not the anchored one.
    return RE2JS.compile(`^(?s:${source})$`);
  });
  const m = re.matcher(value);
  if (!m.matches()) return null;
  return (group) => {
    const g = typeof group === 'number' ? (group <= m.groupCount() ? m.group(group) : null) : namedGroup(re, m, group);
    return g ?? undefined;
  };
}

function namedGroup(re: RE2JS, m: ReturnType<RE2JS['matcher']>, name: string): string | null {
  return Object.hasOwn(re.namedGroups(), name) ? m.group(name) : null;
}

function compileRe2(source: string): RE2JS {
  try {
    return RE2JS.compile(source, RE2JS.DOTALL);
  } catch {
    // DOTALL is a `(?s)` prefix to re2js, which would show in the message: take it from the bare pattern.
    try {
      RE2JS.compile(source);
    } catch (err) {
      const msg = (err as Error).message;
      throw new Error(msg.startsWith('error parsing regexp:') ? msg : `error parsing regexp: ${msg}`);
    }
    throw new Error(`error parsing regexp: invalid regular expression: \`${source}\``);
  }
}

// --- Fast paths ------------------------------------------------------------------
// Each is taken only when the pattern's whole meaning is certain from its text;
// anything else goes to RE2, with a literal prefix as a cheap first rejection.

const META = new Set(['\\', '.', '+', '*', '?', '(', ')', '|', '[', ']', '{', '}', '^', '$']);
const QUANTIFIERS = new Set(['*', '+', '?', '{']);

interface Literal {
  text: string;
  /** Index after the literal run. */
  end: number;
}

/** The literal run at `i`: plain characters and escaped punctuation (`\.`), stopping before a quantified character. */
function literalRun(src: string, i: number): Literal {
  let text = '';
  // Where the last character starts, in the source and in the text.
  let lastSrc = -1;
  let lastText = 0;
  let j = i;
  while (j < src.length) {
    const c = src[j];
    if (c === '\\') {
      const n = src[j + 1];
      if (n === undefined || /[0-9A-Za-z]/.test(n) || n.charCodeAt(0) > 0x7f) break;
      lastSrc = j;
      lastText = text.length;
      text += n;
      j += 2;
      continue;
    }
    if (META.has(c)) {
      if (QUANTIFIERS.has(c) && lastSrc >= 0) {
        // The quantifier binds to the last character: it is not part of the literal.
        text = text.slice(0, lastText);
        j = lastSrc;
      }
      break;
    }
    const ch = String.fromCodePoint(src.codePointAt(j)!);
    lastSrc = j;
    lastText = text.length;
    text += ch;
    j += ch.length;
  }
  return { text, end: j };
}

/** `a|b|c` (optionally inside one `(...)` or `(?:...)`) as its literals, or undefined. */
function literalAlternation(src: string): string[] | undefined {
  let body = src;
  const group = /^\((?:\?:)?(.*)\)$/s.exec(src);
  if (group && !/[()]/.test(group[1])) body = group[1];
  const out: string[] = [];
  let i = 0;
  for (;;) {
    const lit = literalRun(body, i);
    out.push(lit.text);
    if (lit.end === body.length) return out;
    if (body[lit.end] !== '|') return undefined;
    i = lit.end + 1;
  }
}

function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

function fastPath(source: string, re: RE2JS): Regex | undefined {
  const make = (matches: (v: string) => boolean, setMatches?: string[]): Regex => ({ source, matches, setMatches });

  const set = literalAlternation(source);
  if (set) {
    if (set.length === 1) return make((v) => v === set[0], set);
    const values = new Set(set);
    return make((v) => values.has(v), [...values]);
  }

  // (?i)a|b: ASCII values compare folded; anything else (Unicode folding) goes to RE2.
  if (source.startsWith('(?i)')) {
    const folded = literalAlternation(source.slice(4));
    if (folded && folded.every(isAscii)) {
      const lower = new Set(folded.map((s) => s.toLowerCase()));
      return make((v) => (isAscii(v) ? lower.has(v.toLowerCase()) : re.testExact(v)));
    }
  }

  if (source === '.*') return make(() => true);
  if (source === '.+') return make((v) => v.length > 0);

  // .*lit.*, .*lit, lit.*, lit.+, .+lit, with lit a literal or a literal alternation.
  const m = /^(\.[*+])?(.*?)(\.[*+])?$/s.exec(source)!;
  const [, lead, middle, trail] = m;
  if (lead || trail) {
    const lits = literalAlternation(middle);
    if (lits && lits.every((l) => l !== '')) {
      const minLen = (l: string) => l.length + (lead === '.+' ? 1 : 0) + (trail === '.+' ? 1 : 0);
      let test: (v: string, l: string) => boolean;
      if (lead && trail) {
        // .+lit.+ needs a character on each side: search from the second position, end before the last.
        const from = lead === '.+' ? 1 : 0;
        const back = trail === '.+' ? 1 : 0;
        test = (v, l) => {
          const at = v.indexOf(l, from);
          return at >= 0 && at + l.length <= v.length - back;
        };
      } else if (lead) test = (v, l) => v.endsWith(l);
      else test = (v, l) => v.startsWith(l);
      return make((v) => lits.some((l) => v.length >= minLen(l) && test(v, l)));
    }
  }

  const prefix = literalRun(source, 0);
  if (prefix.text !== '' && source[prefix.end] !== '|' && !source.slice(prefix.end).includes('|')) {
    const p = prefix.text;
    return make((v) => v.startsWith(p) && re.testExact(v));
  }
  return undefined;
}

/** Go's regexp.Expand: $1, ${1}, $name, ${name}; $$ is a dollar; names are as long as possible. */
export function expandRegexTemplate(template: string, group: RegexGroups): string {
  let out = '';
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c !== '$') {
      out += c;
      continue;
    }
    const rest = template.slice(i + 1);
    if (rest[0] === '$') {
      out += '$';
      i++;
      continue;
    }
    const braced = /^\{([A-Za-z0-9_]+)\}/.exec(rest);
    const bare = /^[A-Za-z0-9_]+/.exec(rest);
    const name = braced ? braced[1] : bare ? bare[0] : undefined;
    if (name === undefined) {
      out += '$'; // Malformed reference: the $ is literal text.
      continue;
    }
    i += braced ? braced[0].length : name.length;
    out += group(/^[0-9]+$/.test(name) ? Number(name) : name) ?? '';
  }
  return out;
}
