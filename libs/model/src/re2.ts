// Go RE2 regular expressions (the syntax PromQL matchers and label_replace use)
// translated to JS RegExp: inline flags such as (?i) and (?i:...), (?P<name>...),
// \z, \Q...\E and POSIX classes. Syntax RE2 rejects (lookaround, backreferences)
// is rejected here too, so a query valid in Prometheus is valid here and back.

const POSIX_CLASSES: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7f',
  blank: '\\t ',
  cntrl: '\\x00-\\x1f\\x7f',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

interface Flags {
  i: boolean;
  s: boolean;
  m: boolean;
}

class RegexSyntaxError extends Error {}

function escapeCodePoint(cp: number): string {
  return '\\u{' + cp.toString(16) + '}';
}

function escapeLiteral(ch: string): string {
  const cp = ch.codePointAt(0)!;
  if (/[A-Za-z0-9_]/.test(ch) || (cp > 0x7f && !/\s/u.test(ch))) return ch;
  return escapeCodePoint(cp);
}

/** A literal character, case-folded into a class when (?i) is in effect. */
function literal(ch: string, flags: Flags, inClass: boolean): string {
  if (flags.i) {
    const lower = ch.toLowerCase();
    const upper = ch.toUpperCase();
    const variants = new Set([ch, lower, upper].filter((v) => Array.from(v).length === 1));
    if (variants.size > 1) {
      const body = Array.from(variants).map((v) => escapeLiteral(v)).join('');
      return inClass ? body : `[${body}]`;
    }
  }
  return escapeLiteral(ch);
}

function caseRange(from: string, to: string, flags: Flags): string {
  let out = `${escapeLiteral(from)}-${escapeLiteral(to)}`;
  if (flags.i) {
    const a = from.codePointAt(0)!;
    const b = to.codePointAt(0)!;
    const lo = Math.max(a, 0x41);
    const hi = Math.min(b, 0x5a);
    if (lo <= hi) out += `${String.fromCodePoint(lo + 32)}-${String.fromCodePoint(hi + 32)}`;
    const lo2 = Math.max(a, 0x61);
    const hi2 = Math.min(b, 0x7a);
    if (lo2 <= hi2) out += `${String.fromCodePoint(lo2 - 32)}-${String.fromCodePoint(hi2 - 32)}`;
  }
  return out;
}

/** Translates an escape at src[i] (the backslash); returns the JS text and the index after it. */
function translateEscape(src: string[], i: number, flags: Flags, inClass: boolean): [string, number] {
  const c = src[i + 1];
  if (c === undefined) throw new RegexSyntaxError('trailing backslash at end of expression: ``');
  switch (c) {
    case 'd':
    case 'D':
    case 'w':
    case 'W':
      return ['\\' + c, i + 2];
    case 's':
      return [inClass ? '\\t\\n\\f\\r ' : '[\\t\\n\\f\\r ]', i + 2];
    case 'S':
      return [inClass ? '\\x00-\\x08\\x0b\\x0e-\\x1f\\x21-\\u{10ffff}' : '[^\\t\\n\\f\\r ]', i + 2];
    case 'b':
    case 'B':
      if (inClass) throw new RegexSyntaxError(`invalid escape sequence: \`\\${c}\``);
      return ['\\' + c, i + 2];
    case 'A':
      return ['(?<![\\s\\S])', i + 2];
    case 'z':
      return ['(?![\\s\\S])', i + 2];
    case 'a':
      return ['\\x07', i + 2];
    case 'f':
    case 'n':
    case 'r':
    case 't':
    case 'v':
      return ['\\' + c, i + 2];
    case 'p':
    case 'P': {
      if (src[i + 2] === '{') {
        const close = src.indexOf('}', i + 3);
        if (close < 0) throw new RegexSyntaxError(`invalid character class range: \`${src.slice(i).join('')}\``);
        return [`\\${c}{${src.slice(i + 3, close).join('')}}`, close + 1];
      }
      return [`\\${c}{${src[i + 2]}}`, i + 3];
    }
    case 'x': {
      if (src[i + 2] === '{') {
        const close = src.indexOf('}', i + 3);
        const digits = src.slice(i + 3, close).join('');
        if (close < 0 || !/^[0-9a-fA-F]+$/.test(digits)) throw new RegexSyntaxError('invalid escape sequence: `\\x`');
        return [literal(String.fromCodePoint(parseInt(digits, 16)), flags, inClass), close + 1];
      }
      const digits = src.slice(i + 2, i + 4).join('');
      if (!/^[0-9a-fA-F]{2}$/.test(digits)) throw new RegexSyntaxError('invalid escape sequence: `\\x`');
      return [literal(String.fromCodePoint(parseInt(digits, 16)), flags, inClass), i + 4];
    }
    case 'Q': {
      const end = src.join('').indexOf('\\E', i + 2);
      const stop = end < 0 ? src.length : end;
      const text = src.slice(i + 2, stop).map((ch) => literal(ch, flags, inClass)).join('');
      return [text, end < 0 ? stop : stop + 2];
    }
  }
  if (c >= '0' && c <= '7') {
    let j = i + 1;
    let digits = '';
    while (j < src.length && digits.length < 3 && src[j] >= '0' && src[j] <= '7') digits += src[j++];
    if (digits !== '0' && digits.length === 1 && c !== '0') throw new RegexSyntaxError(`invalid escape sequence: \`\\${c}\``);
    return [literal(String.fromCodePoint(parseInt(digits, 8)), flags, inClass), j];
  }
  if (/[A-Za-z0-9]/.test(c)) throw new RegexSyntaxError(`invalid escape sequence: \`\\${c}\``);
  return [literal(c, flags, inClass), i + 2];
}

function translateClass(src: string[], i: number, flags: Flags): [string, number] {
  // src[i] === '['
  let j = i + 1;
  let out = '[';
  if (src[j] === '^') {
    out += '^';
    j++;
  }
  let first = true;
  for (;;) {
    if (j >= src.length) throw new RegexSyntaxError(`missing closing ]: \`${src.slice(i).join('')}\``);
    const c = src[j];
    if (c === ']' && !first) return [out + ']', j + 1];
    first = false;
    if (c === '[' && src[j + 1] === ':') {
      const close = src.join('').indexOf(':]', j + 2);
      if (close > 0) {
        const name = src.slice(j + 2, close).join('');
        const cls = POSIX_CLASSES[name];
        if (!cls) throw new RegexSyntaxError(`invalid character class range: \`[:${name}:]\``);
        out += cls;
        j = close + 2;
        continue;
      }
    }
    let lo: string;
    let loText: string;
    if (c === '\\') {
      const [text, next] = translateEscape(src, j, flags, true);
      loText = text;
      lo = text.length === 1 ? text : '';
      // A single escaped literal may start a range.
      const m = /^\\u\{([0-9a-f]+)\}$/.exec(text);
      if (m) lo = String.fromCodePoint(parseInt(m[1], 16));
      j = next;
    } else {
      lo = c;
      loText = '';
      j++;
    }
    if (src[j] === '-' && src[j + 1] !== ']' && j + 1 < src.length && lo !== '') {
      let hi = src[j + 1];
      let next = j + 2;
      if (hi === '\\') {
        const [text, n] = translateEscape(src, j + 1, flags, true);
        const m = /^\\u\{([0-9a-f]+)\}$/.exec(text);
        hi = m ? String.fromCodePoint(parseInt(m[1], 16)) : text;
        next = n;
      }
      if (hi.codePointAt(0)! < lo.codePointAt(0)!) throw new RegexSyntaxError(`invalid character class range: \`${lo}-${hi}\``);
      out += caseRange(lo, hi, flags);
      j = next;
      continue;
    }
    out += loText !== '' ? loText : literal(lo, flags, true);
  }
}

function parseFlags(spec: string, base: Flags): Flags {
  const flags = { ...base };
  let on = true;
  for (const ch of spec) {
    if (ch === '-') {
      on = false;
      continue;
    }
    if (ch === 'i') flags.i = on;
    else if (ch === 's') flags.s = on;
    else if (ch === 'm') flags.m = on;
    else if (ch === 'U') continue;
    else throw new RegexSyntaxError(`invalid or unsupported Perl syntax: \`(?${spec}\``);
  }
  return flags;
}

function translate(source: string, initial: Flags): string {
  const src = Array.from(source);
  let out = '';
  // Flags of each open group; (?flags) changes the innermost entry.
  const stack: Flags[] = [initial];
  let i = 0;
  while (i < src.length) {
    const flags = stack[stack.length - 1];
    const c = src[i];
    switch (c) {
      case '\\': {
        const [text, next] = translateEscape(src, i, flags, false);
        out += text;
        i = next;
        continue;
      }
      case '[': {
        const [text, next] = translateClass(src, i, flags);
        out += text;
        i = next;
        continue;
      }
      case '(': {
        if (src[i + 1] !== '?') {
          stack.push({ ...flags });
          out += '(';
          i++;
          continue;
        }
        const rest = src.slice(i + 2).join('');
        let m = /^P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(rest);
        if (m) {
          stack.push({ ...flags });
          out += `(?<${m[1]}>`;
          i += 2 + m[0].length;
          continue;
        }
        m = /^([a-zA-Z-]*)(:|\))/.exec(rest);
        if (!m) throw new RegexSyntaxError(`invalid or unsupported Perl syntax: \`(?${rest.slice(0, 1)}\``);
        const next = parseFlags(m[1], flags);
        if (m[2] === ':') {
          stack.push(next);
          out += '(?:';
        } else {
          stack[stack.length - 1] = next;
        }
        i += 2 + m[0].length;
        continue;
      }
      case ')':
        if (stack.length === 1) throw new RegexSyntaxError(`unexpected ): \`${source}\``);
        stack.pop();
        out += ')';
        i++;
        continue;
      case '.':
        out += flags.s ? '[^]' : '[^\\n]';
        i++;
        continue;
      case '^':
        out += flags.m ? '(?:(?<![\\s\\S])|(?<=\\n))' : '(?<![\\s\\S])';
        i++;
        continue;
      case '$':
        out += flags.m ? '(?:(?![\\s\\S])|(?=\\n))' : '(?![\\s\\S])';
        i++;
        continue;
      case '{': {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i).join(''));
        if (m) {
          if (Number(m[1]) > 1000 || (m[3] && Number(m[3]) > 1000)) throw new RegexSyntaxError(`invalid repeat count: \`${m[0]}\``);
          if (m[3] && Number(m[3]) < Number(m[1])) throw new RegexSyntaxError(`invalid repeat count: \`${m[0]}\``);
          out += m[0];
          i += m[0].length;
          continue;
        }
        out += '\\{';
        i++;
        continue;
      }
      case '}':
        out += '\\}';
        i++;
        continue;
      case '*':
      case '+':
      case '?':
      case '|':
        out += c;
        i++;
        continue;
      default:
        out += literal(c, flags, false);
        i++;
    }
  }
  if (stack.length !== 1) throw new RegexSyntaxError(`missing closing ): \`${source}\``);
  return out;
}

const cache = new Map<string, RegExp>();

/**
 * Compiles an RE2 pattern anchored at both ends with dot-matches-newline, as
 * Prometheus does (`^(?s:re)$`). Throws an Error whose message mimics Go's
 * (`error parsing regexp: ...`).
 */
export function compileAnchoredRe2(pattern: string): RegExp {
  let re = cache.get(pattern);
  if (re) return re;
  let body: string;
  try {
    body = translate(pattern, { i: false, s: true, m: false });
    re = new RegExp(`^(?:${body})$`, 'u');
  } catch (err) {
    const msg = err instanceof RegexSyntaxError ? err.message : `invalid regular expression: \`${pattern}\``;
    throw new Error(`error parsing regexp: ${msg}`);
  }
  if (cache.size > 10_000) cache.clear();
  cache.set(pattern, re);
  return re;
}
