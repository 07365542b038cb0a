// The few places where a JS number or string must behave like Go's so that our
// output matches Prometheus byte for byte: quoting (%q), float formatting
// (strconv.FormatFloat 'f' -1), number parsing (strconv.ParseInt/ParseFloat)
// and math.Pow. Nothing here knows about PromQL.

const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

function isGoPrintable(ch: string): boolean {
  return PRINTABLE.test(ch);
}

function hex(n: number, width: number): string {
  return n.toString(16).padStart(width, '0');
}

function escapeRune(ch: string, quote: string): string {
  const cp = ch.codePointAt(0)!;
  if (ch === quote || ch === '\\') return '\\' + ch;
  // Lone surrogates stand for bytes that were not valid UTF-8 (see decodeUtf8Lossless).
  if (cp >= 0xdc80 && cp <= 0xdcff) return '\\x' + hex(cp - 0xdc00, 2);
  if (cp >= 0xd800 && cp <= 0xdfff) return '\\ufffd';
  if (isGoPrintable(ch)) return ch;
  switch (ch) {
    case '\x07':
      return '\\a';
    case '\b':
      return '\\b';
    case '\f':
      return '\\f';
    case '\n':
      return '\\n';
    case '\r':
      return '\\r';
    case '\t':
      return '\\t';
    case '\v':
      return '\\v';
  }
  if (cp < 0x20 || cp === 0x7f) return '\\x' + hex(cp, 2);
  if (cp < 0x10000) return '\\u' + hex(cp, 4);
  return '\\U' + hex(cp, 8);
}

/** Go's strconv.Quote / fmt %q for strings. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) out += escapeRune(ch, '"');
  return out + '"';
}

/** Go's fmt %q for a rune. */
export function goQuoteRune(ch: string): string {
  return "'" + escapeRune(ch, "'") + "'";
}

/** Go's fmt %.Nq: the first n runes, quoted. */
export function goQuotePrefix(s: string, n: number): string {
  return goQuote(Array.from(s).slice(0, n).join(''));
}

/** Go's fmt %#U: `U+0078 'x'`. */
export function goUnicodeDesc(ch: string): string {
  const cp = ch.codePointAt(0)!;
  const code = 'U+' + hex(cp, 4).toUpperCase();
  return isGoPrintable(ch) ? `${code} '${ch}'` : code;
}

/** strconv.FormatFloat(v, 'f', -1, 64), plus Prometheus' spelling of the special values. */
export function formatGoFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const s = String(v);
  const e = s.indexOf('e');
  if (e < 0) return s;
  // Expand the shortest round-trip digits JS chose into plain notation.
  const negative = s[0] === '-';
  const mantissa = s.slice(negative ? 1 : 0, e);
  const exponent = Number(s.slice(e + 1));
  const dot = mantissa.indexOf('.');
  const digits = mantissa.replace('.', '');
  const intLen = (dot < 0 ? mantissa.length : dot) + exponent;
  let out: string;
  if (intLen <= 0) out = '0.' + '0'.repeat(-intLen) + digits;
  else if (intLen >= digits.length) out = digits + '0'.repeat(intLen - digits.length);
  else out = digits.slice(0, intLen) + '.' + digits.slice(intLen);
  return (negative ? '-' : '') + out;
}

function underscoreOK(s: string): boolean {
  let saw = '^';
  let i = 0;
  if (s[0] === '-' || s[0] === '+') s = s.slice(1);
  let isHex = false;
  if (s.length >= 2 && s[0] === '0' && 'bBoOxX'.includes(s[1])) {
    i = 2;
    saw = '0';
    isHex = s[1] === 'x' || s[1] === 'X';
  }
  for (; i < s.length; i++) {
    const c = s[i];
    if ((c >= '0' && c <= '9') || (isHex && /[a-fA-F]/.test(c))) {
      saw = '0';
      continue;
    }
    if (c === '_') {
      if (saw !== '0') return false;
      saw = '_';
      continue;
    }
    if (saw === '_') return false;
    saw = '!';
  }
  return saw !== '_';
}

/**
 * strconv.ParseInt(s, 0, 64): base prefixes 0x, 0o, 0b and a leading 0 for
 * octal, underscores between digits. Returns undefined on a syntax or range error.
 */
export function parseGoInt(s: string): number | undefined {
  let body = s;
  let negative = false;
  if (body[0] === '+' || body[0] === '-') {
    negative = body[0] === '-';
    body = body.slice(1);
  }
  if (body === '') return undefined;
  let base = 10;
  if (body.length > 1 && body[0] === '0') {
    const p = body[1].toLowerCase();
    if (p === 'x') {
      base = 16;
      body = body.slice(2);
    } else if (p === 'o') {
      base = 8;
      body = body.slice(2);
    } else if (p === 'b') {
      base = 2;
      body = body.slice(2);
    } else {
      base = 8;
      body = body.slice(1);
    }
  }
  if (s.includes('_')) {
    if (!underscoreOK(s)) return undefined;
    body = body.replaceAll('_', '');
  }
  if (body === '') return undefined;
  const digitRe = base === 16 ? /^[0-9a-fA-F]+$/ : base === 8 ? /^[0-7]+$/ : base === 2 ? /^[01]+$/ : /^[0-9]+$/;
  if (!digitRe.test(body)) return undefined;
  const prefix = base === 16 ? '0x' : base === 8 ? '0o' : base === 2 ? '0b' : '';
  let n = BigInt(prefix + body);
  if (negative) n = -n;
  if (n > 9223372036854775807n || n < -9223372036854775808n) return undefined;
  return Number(n);
}

const DECIMAL_FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
const HEX_FLOAT = /^([+-]?)0[xX]((?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+))[pP]([+-]?\d+)$/;

/** strconv.ParseFloat(s, 64). Returns undefined on a syntax error; overflow gives ±Inf as Go's value does. */
export function parseGoFloat(s: string): number | undefined {
  const special = /^([+-]?)(inf|infinity)$/i.exec(s);
  if (special) return special[1] === '-' ? -Infinity : Infinity;
  if (/^nan$/i.test(s)) return NaN;
  let body = s;
  if (body.includes('_')) {
    if (!underscoreOK(body)) return undefined;
    body = body.replaceAll('_', '');
  }
  if (DECIMAL_FLOAT.test(body)) return Number(body);
  const h = HEX_FLOAT.exec(body);
  if (h) {
    const [intPart, fracPart = ''] = h[2].split('.');
    let mant = 0;
    for (const c of intPart + fracPart) mant = mant * 16 + parseInt(c, 16);
    const v = mant * Math.pow(2, Number(h[3]) - 4 * fracPart.length);
    return h[1] === '-' ? -v : v;
  }
  return undefined;
}

/** Go's math.Pow, whose special cases differ from Math.pow for 1**NaN and (-1)**±Inf. */
export function goPow(x: number, y: number): number {
  if (y === 0 || x === 1) return 1;
  if (x === -1 && (y === Infinity || y === -Infinity)) return 1;
  return Math.pow(x, y);
}

/**
 * Unquotes a PromQL string literal the way Prometheus' strutil.Unquote does:
 * '...' and "..." take Go escapes (\x and octal escapes are bytes), `...` is raw.
 * Throws an Error with Go's message when the literal is malformed.
 */
export function unquoteGoString(lit: string): string {
  const quote = lit[0];
  if (lit.length < 2 || lit[lit.length - 1] !== quote) throw new Error('invalid syntax');
  const body = lit.slice(1, -1);
  if (quote === '`') {
    if (body.includes('`')) throw new Error('invalid syntax');
    return body.replaceAll('\r', '');
  }
  if (quote !== '"' && quote !== "'") throw new Error('invalid syntax');
  if (!body.includes('\\') && !body.includes(quote)) return body;
  const bytes: number[] = [];
  const chars = Array.from(body);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i];
    if (c === quote) throw new Error('invalid syntax');
    if (c === '\n') throw new Error('invalid syntax');
    if (c === '\\') i = unescapeInto(bytes, chars, i + 1, quote);
    else pushUtf8(bytes, c);
  }
  return decodeUtf8Lossless(bytes);
}

/** Go's one-letter escapes and the bytes they stand for. */
const SIMPLE_ESCAPES = new Map<string, number>([
  ['a', 7],
  ['b', 8],
  ['f', 12],
  ['n', 10],
  ['r', 13],
  ['t', 9],
  ['v', 11],
  ['\\', 92],
]);

function pushUtf8(bytes: number[], str: string): void {
  for (const b of Buffer.from(str, 'utf8')) bytes.push(b);
}

/** The escape after a backslash, at chars[i], appended to `bytes`; returns the index of its last character. */
function unescapeInto(bytes: number[], chars: string[], i: number, quote: string): number {
  const e = chars[i];
  const simple = SIMPLE_ESCAPES.get(e);
  if (simple !== undefined) {
    bytes.push(simple);
    return i;
  }
  if (e === "'" || e === '"') {
    if (e !== quote) throw new Error('invalid syntax');
    bytes.push(e.charCodeAt(0));
    return i;
  }
  if (e === 'x' || e === 'u' || e === 'U') return unescapeHex(bytes, chars, i);
  if (e !== undefined && e >= '0' && e <= '7') return unescapeOctal(bytes, chars, i);
  throw new Error('invalid syntax');
}

/** \xHH (a byte), \uHHHH or \UHHHHHHHH (a code point, as UTF-8). */
function unescapeHex(bytes: number[], chars: string[], i: number): number {
  const e = chars[i];
  const n = e === 'x' ? 2 : e === 'u' ? 4 : 8;
  const digits = chars.slice(i + 1, i + 1 + n).join('');
  if (digits.length !== n || !/^[0-9a-fA-F]+$/.test(digits)) throw new Error('invalid syntax');
  const v = parseInt(digits, 16);
  if (e === 'x') {
    bytes.push(v);
  } else {
    if (v > 0x10ffff || (v >= 0xd800 && v < 0xe000)) throw new Error('invalid syntax');
    pushUtf8(bytes, String.fromCodePoint(v));
  }
  return i + n;
}

/** \OOO: three octal digits, a byte. */
function unescapeOctal(bytes: number[], chars: string[], i: number): number {
  const digits = chars.slice(i, i + 3).join('');
  if (!/^[0-7]{3}$/.test(digits)) throw new Error('invalid syntax');
  const v = parseInt(digits, 8);
  if (v > 255) throw new Error('invalid syntax');
  bytes.push(v);
  return i + 2;
}

/**
 * Decodes UTF-8, keeping each byte of an invalid sequence as the lone
 * surrogate U+DC80..U+DCFF (Python's surrogateescape), so that strings Go would
 * hold as invalid UTF-8 stay recognisable: see isValidUtf8.
 */
function decodeUtf8Lossless(bytes: number[]): string {
  let out = '';
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    let n = 0;
    let cp = 0;
    if (b < 0x80) {
      out += String.fromCharCode(b);
      i++;
      continue;
    } else if (b >= 0xc2 && b <= 0xdf) {
      n = 1;
      cp = b & 0x1f;
    } else if (b >= 0xe0 && b <= 0xef) {
      n = 2;
      cp = b & 0x0f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 3;
      cp = b & 0x07;
    }
    let ok = n > 0 && i + n < bytes.length;
    for (let k = 1; ok && k <= n; k++) {
      const c = bytes[i + k];
      if (c === undefined || (c & 0xc0) !== 0x80) ok = false;
      else cp = (cp << 6) | (c & 0x3f);
    }
    const min = n === 1 ? 0x80 : n === 2 ? 0x800 : 0x10000;
    if (ok && cp >= min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff)) {
      out += String.fromCodePoint(cp);
      i += n + 1;
    } else {
      out += String.fromCharCode(0xdc00 + b);
      i++;
    }
  }
  return out;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Whether a string came from valid UTF-8 (no byte kept by decodeUtf8Lossless). */
function isValidUtf8(s: string): boolean {
  return !LONE_SURROGATE.test(s);
}

/** Prometheus 3's label name rule (UTF-8 validation): non-empty, valid UTF-8. */
export function isValidLabelName(name: string): boolean {
  return name.length > 0 && isValidUtf8(name);
}

/** Go's %g for a float64 (shortest digits; exponent form below 1e-4 and from 1e21 up, as strconv 'g' with precision -1). */
export function formatGoG(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  if (v === 0) return Object.is(v, -0) ? '-0' : '0';
  const exp = Math.floor(Math.log10(Math.abs(Number(v.toExponential()))));
  // %g with the shortest representation switches to exponent form when exp < -4 || exp >= 21.
  if (exp < -4 || exp >= 21) {
    const [mant, e] = v.toExponential().split('e');
    const n = Number(e);
    return `${mant}e${n < 0 ? '-' : '+'}${String(Math.abs(n)).padStart(2, '0')}`;
  }
  return formatGoFloat(v);
}
