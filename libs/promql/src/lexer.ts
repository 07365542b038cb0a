// The PromQL lexer: the same state machine as Prometheus' promql/parser/lex.go,
// so that tokens, their positions and lexer error messages match. It only
// tokenizes; it never decides what a token means in context.

import { goQuote, goQuotePrefix, goQuoteRune, goUnicodeDesc } from './go-compat.ts';

export type TokenType =
  | 'EOF'
  | 'ERROR'
  | 'COMMENT'
  | 'IDENTIFIER'
  | 'METRIC_IDENTIFIER'
  | 'NUMBER'
  | 'DURATION'
  | 'STRING'
  | 'LEFT_PAREN'
  | 'RIGHT_PAREN'
  | 'LEFT_BRACE'
  | 'RIGHT_BRACE'
  | 'LEFT_BRACKET'
  | 'RIGHT_BRACKET'
  | 'COMMA'
  | 'EQL'
  | 'COLON'
  | 'DOUBLE_COLON'
  // Operators.
  | 'ADD'
  | 'SUB'
  | 'MUL'
  | 'DIV'
  | 'MOD'
  | 'POW'
  | 'EQLC'
  | 'NEQ'
  | 'LTE'
  | 'LSS'
  | 'GTE'
  | 'GTR'
  | 'EQL_REGEX'
  | 'NEQ_REGEX'
  | 'AT'
  | 'LAND'
  | 'LOR'
  | 'LUNLESS'
  | 'ATAN2'
  | 'TRIM_UPPER'
  | 'TRIM_LOWER'
  // Aggregators.
  | 'SUM'
  | 'AVG'
  | 'COUNT'
  | 'MIN'
  | 'MAX'
  | 'GROUP'
  | 'STDDEV'
  | 'STDVAR'
  | 'TOPK'
  | 'BOTTOMK'
  | 'COUNT_VALUES'
  | 'QUANTILE'
  | 'LIMITK'
  | 'LIMIT_RATIO'
  // Keywords.
  | 'OFFSET'
  | 'SMOOTHED'
  | 'ANCHORED'
  | 'BY'
  | 'WITHOUT'
  | 'ON'
  | 'IGNORING'
  | 'GROUP_LEFT'
  | 'GROUP_RIGHT'
  | 'BOOL'
  | 'FILL'
  | 'FILL_LEFT'
  | 'FILL_RIGHT'
  // Preprocessors.
  | 'START'
  | 'END'
  | 'STEP'
  | 'RANGE'
  // min_of/max_of inside a duration expression.
  | 'MIN_OF'
  | 'MAX_OF';

export interface Token {
  type: TokenType;
  /** Offset of the token's first character in the input (UTF-16 code units). */
  pos: number;
  /** The token's text; for ERROR tokens, the error message. */
  val: string;
}

const OPERATORS = new Set<TokenType>([
  'ADD',
  'SUB',
  'MUL',
  'DIV',
  'MOD',
  'POW',
  'EQLC',
  'NEQ',
  'LTE',
  'LSS',
  'GTE',
  'GTR',
  'EQL_REGEX',
  'NEQ_REGEX',
  'AT',
  'LAND',
  'LOR',
  'LUNLESS',
  'ATAN2',
  'TRIM_UPPER',
  'TRIM_LOWER',
]);
const AGGREGATORS = new Set<TokenType>([
  'SUM',
  'AVG',
  'COUNT',
  'MIN',
  'MAX',
  'GROUP',
  'STDDEV',
  'STDVAR',
  'TOPK',
  'BOTTOMK',
  'COUNT_VALUES',
  'QUANTILE',
  'LIMITK',
  'LIMIT_RATIO',
]);
const KEYWORDS = new Set<TokenType>([
  'OFFSET',
  'SMOOTHED',
  'ANCHORED',
  'BY',
  'WITHOUT',
  'ON',
  'IGNORING',
  'GROUP_LEFT',
  'GROUP_RIGHT',
  'BOOL',
  'FILL',
  'FILL_LEFT',
  'FILL_RIGHT',
]);

function isOperator(t: TokenType): boolean {
  return OPERATORS.has(t);
}
export function isAggregator(t: TokenType): boolean {
  return AGGREGATORS.has(t);
}
function isKeyword(t: TokenType): boolean {
  return KEYWORDS.has(t);
}

/** Lower-cased word → token type for keywords, operators written as words, and aggregators. */
const KEYWORD_TOKENS: Record<string, TokenType> = {
  and: 'LAND',
  or: 'LOR',
  unless: 'LUNLESS',
  atan2: 'ATAN2',
  sum: 'SUM',
  avg: 'AVG',
  count: 'COUNT',
  min: 'MIN',
  max: 'MAX',
  group: 'GROUP',
  stddev: 'STDDEV',
  stdvar: 'STDVAR',
  topk: 'TOPK',
  bottomk: 'BOTTOMK',
  count_values: 'COUNT_VALUES',
  quantile: 'QUANTILE',
  limitk: 'LIMITK',
  limit_ratio: 'LIMIT_RATIO',
  offset: 'OFFSET',
  smoothed: 'SMOOTHED',
  anchored: 'ANCHORED',
  by: 'BY',
  without: 'WITHOUT',
  on: 'ON',
  ignoring: 'IGNORING',
  group_left: 'GROUP_LEFT',
  group_right: 'GROUP_RIGHT',
  bool: 'BOOL',
  fill: 'FILL',
  fill_left: 'FILL_LEFT',
  fill_right: 'FILL_RIGHT',
  start: 'START',
  end: 'END',
  step: 'STEP',
  range: 'RANGE',
};

/** The fixed text of token types that have one (Prometheus' ItemTypeStr). */
const TOKEN_TEXT: Partial<Record<TokenType, string>> = {
  LEFT_PAREN: '(',
  RIGHT_PAREN: ')',
  LEFT_BRACE: '{',
  RIGHT_BRACE: '}',
  LEFT_BRACKET: '[',
  RIGHT_BRACKET: ']',
  COMMA: ',',
  EQL: '=',
  COLON: ':',
  DOUBLE_COLON: '::',
  SUB: '-',
  ADD: '+',
  MUL: '*',
  MOD: '%',
  DIV: '/',
  EQLC: '==',
  NEQ: '!=',
  LTE: '<=',
  TRIM_UPPER: '</',
  TRIM_LOWER: '>/',
  LSS: '<',
  GTE: '>=',
  GTR: '>',
  EQL_REGEX: '=~',
  NEQ_REGEX: '!~',
  POW: '^',
  AT: '@',
};
for (const [word, type] of Object.entries(KEYWORD_TOKENS)) TOKEN_TEXT[type] = word;

/** How Prometheus names a token type in messages (`unexpected character ...`, `<op:+>`). */
function tokenTypeText(t: TokenType): string {
  return TOKEN_TEXT[t] ?? t;
}

function tokenString(tok: Token): string {
  if (tok.type === 'EOF') return 'EOF';
  if (tok.type === 'ERROR') return tok.val;
  if (tok.type === 'IDENTIFIER' || tok.type === 'METRIC_IDENTIFIER') return goQuote(tok.val);
  if (isKeyword(tok.type)) return `<${tok.val}>`;
  if (isOperator(tok.type)) return `<op:${tok.val}>`;
  if (isAggregator(tok.type)) return `<aggr:${tok.val}>`;
  if (Buffer.byteLength(tok.val) > 10) return goQuotePrefix(tok.val, 10) + '...';
  return goQuote(tok.val);
}

function typeDesc(t: TokenType): string {
  switch (t) {
    case 'ERROR':
      return 'error';
    case 'EOF':
      return 'end of input';
    case 'COMMENT':
      return 'comment';
    case 'IDENTIFIER':
      return 'identifier';
    case 'METRIC_IDENTIFIER':
      return 'metric identifier';
    case 'STRING':
      return 'string';
    case 'NUMBER':
      return 'number';
    case 'DURATION':
      return 'duration';
  }
  return goQuote(tokenTypeText(t));
}

/** A token as Prometheus' parse errors describe it: `"}"`, `<op:+>`, `identifier "foo"`, `end of input`. */
export function describeToken(tok: Token): string {
  if (TOKEN_TEXT[tok.type] !== undefined) return tokenString(tok);
  if (tok.type === 'EOF') return typeDesc('EOF');
  return `${typeDesc(tok.type)} ${tokenString(tok)}`;
}

const EOF_RUNE = '';

function isSpace(r: string): boolean {
  return r === ' ' || r === '\t' || r === '\n' || r === '\r';
}
function isDigit(r: string): boolean {
  return r.length === 1 && r >= '0' && r <= '9';
}
function isAlpha(r: string): boolean {
  return r === '_' || (r.length === 1 && ((r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')));
}
function isAlphaNumeric(r: string): boolean {
  return isAlpha(r) || isDigit(r);
}

type StateFn = (l: Lexer) => StateFn | null;

/** Tokenizes a PromQL expression. Call next() until it returns EOF or ERROR. */
export class Lexer {
  readonly input: string;
  private state: StateFn | null = lexStatements;
  pos = 0;
  start = 0;
  private width = 0;
  private item: Token | null = null;

  parenDepth = 0;
  braceOpen = false;
  bracketOpen = false;
  gotColon = false;
  gotDuration = false;
  stringOpen = '';

  constructor(input: string) {
    this.input = input;
  }

  /** The next token; after an ERROR or EOF, EOF forever. */
  next(): Token {
    this.item = null;
    if (this.state === null) {
      this.emit('EOF');
    } else {
      while (this.item === null && this.state !== null) this.state = this.state(this);
      if (this.item === null) this.emit('EOF');
    }
    return this.item!;
  }

  // --- Rune helpers (mirroring lex.go) ---

  nextRune(): string {
    if (this.pos >= this.input.length) {
      this.width = 0;
      return EOF_RUNE;
    }
    const cp = this.input.codePointAt(this.pos)!;
    const r = String.fromCodePoint(cp);
    this.width = r.length;
    this.pos += this.width;
    return r;
  }

  peek(): string {
    const r = this.nextRune();
    this.backup();
    return r;
  }

  backup(): void {
    this.pos -= this.width;
  }

  emit(type: TokenType): void {
    this.item = { type, pos: this.start, val: this.input.slice(this.start, this.pos) };
    this.start = this.pos;
  }

  ignore(): void {
    this.start = this.pos;
  }

  accept(valid: string): boolean {
    const r = this.nextRune();
    if (r !== EOF_RUNE && valid.includes(r)) return true;
    this.backup();
    return false;
  }

  is(valid: string): boolean {
    const r = this.peek();
    return r !== EOF_RUNE && valid.includes(r);
  }

  acceptRun(valid: string): void {
    for (;;) {
      const r = this.nextRune();
      if (r === EOF_RUNE || !valid.includes(r)) break;
    }
    this.backup();
  }

  errorf(message: string): null {
    this.item = { type: 'ERROR', pos: this.start, val: message };
    return null;
  }

  scanNumber(): boolean {
    const initialPos = this.pos;
    let digitPattern = '0123456789';
    if (this.accept('0') && this.accept('xX')) {
      this.accept('_');
      digitPattern = '0123456789abcdefABCDEF';
    }
    this.accept('.');
    this.accept(digitPattern);
    let dotConsumed = false;
    let exponentConsumed = false;
    while (this.is(digitPattern + '._eE')) {
      if (this.is('.') && dotConsumed) {
        this.accept('.');
        return false;
      }
      if (this.is('eE') && exponentConsumed) {
        this.accept('eE');
        return false;
      }
      if (this.accept('.')) {
        dotConsumed = true;
        if (this.accept('_.')) return false;
        if (digitPattern.length > 10) return false; // No fractional hex literals.
        continue;
      }
      if (this.accept('eE')) {
        exponentConsumed = true;
        this.accept('+-');
        if (this.accept('._eE') || this.peek() === EOF_RUNE) return false;
        continue;
      }
      if (this.accept('_')) {
        if (this.accept('._eE') || this.peek() === EOF_RUNE) return false;
        continue;
      }
      this.acceptRun(digitPattern);
    }
    if (this.pos === initialPos) return false;
    return !isAlphaNumeric(this.peek());
  }

  scanDurationKeyword(): boolean {
    for (;;) {
      const r = this.nextRune();
      if (isAlpha(r)) continue;
      this.backup();
      const kw = this.input.slice(this.start, this.pos).toLowerCase();
      const type: TokenType | undefined =
        kw === 'step' ? 'STEP' : kw === 'range' ? 'RANGE' : kw === 'min_of' ? 'MIN_OF' : kw === 'max_of' ? 'MAX_OF' : undefined;
      if (type === undefined) return false;
      this.emit(type);
      return true;
    }
  }
}

function acceptRemainingDuration(l: Lexer): boolean {
  if (!l.accept('smhdwy')) return false;
  l.accept('s'); // ms; bad units like hs are caught when the duration is parsed.
  while (l.accept('0123456789')) {
    while (l.accept('0123456789')) {
      // Consume.
    }
    if (!l.accept('smhdw')) return false; // y may only come first.
    l.accept('s');
  }
  return !isAlphaNumeric(l.nextRune());
}

function lexStatements(l: Lexer): StateFn | null {
  if (l.braceOpen) return lexInsideBraces;
  if (l.input.startsWith('#', l.pos)) return lexLineComment;

  const r = l.nextRune();
  if (r === EOF_RUNE) return lexEof(l);
  const single = singleRuneToken(r);
  if (single !== undefined) {
    l.emit(single);
    return lexStatements;
  }
  switch (r) {
    case '=':
    case '!':
    case '<':
    case '>':
      return lexComparison(l, r);
    case '"':
    case "'":
      l.stringOpen = r;
      return lexString;
    case '`':
      l.stringOpen = r;
      return lexRawString;
    case '(':
    case ')':
    case '{':
    case '[':
    case ']':
      return lexBracket(l, r);
  }
  if (isSpace(r)) return lexSpace;
  if (isDigit(r) || (r === '.' && isDigit(l.peek()))) {
    l.backup();
    return lexNumberOrDuration;
  }
  if (isAlpha(r) || r === ':') return lexIdentifierStart(l, r);
  return l.errorf(`unexpected character: ${goQuoteRune(r)}`);
}

function lexEof(l: Lexer): StateFn | null {
  if (l.parenDepth !== 0) return l.errorf('unclosed left parenthesis');
  if (l.bracketOpen) return l.errorf('unclosed left bracket');
  l.emit('EOF');
  return null;
}

/** The token of a rune that is one whatever follows it. */
function singleRuneToken(r: string): TokenType | undefined {
  switch (r) {
    case ',':
      return 'COMMA';
    case '*':
      return 'MUL';
    case '/':
      return 'DIV';
    case '%':
      return 'MOD';
    case '+':
      return 'ADD';
    case '-':
      return 'SUB';
    case '^':
      return 'POW';
    case '@':
      return 'AT';
  }
  return undefined;
}

/** `=`, `==`, `!=`, `<`, `<=`, `</`, `>`, `>=`, `>/` after its first rune `r`. */
function lexComparison(l: Lexer, r: string): StateFn | null {
  if (r === '=') {
    const t = l.peek();
    if (t === '=') {
      l.nextRune();
      l.emit('EQLC');
    } else if (t === '~') {
      return l.errorf(`unexpected character after '=': ${goQuoteRune(t)}`);
    } else {
      l.emit('EQL');
    }
  } else if (r === '!') {
    const t = l.nextRune();
    if (t !== '=') return l.errorf(`unexpected character after '!': ${goQuoteRune(t === EOF_RUNE ? '\ufffd' : t)}`);
    l.emit('NEQ');
  } else if (l.peek() === '=') {
    l.nextRune();
    l.emit(r === '<' ? 'LTE' : 'GTE');
  } else if (l.peek() === '/') {
    l.nextRune();
    l.emit(r === '<' ? 'TRIM_UPPER' : 'TRIM_LOWER');
  } else {
    l.emit(r === '<' ? 'LSS' : 'GTR');
  }
  return lexStatements;
}

/** `(`, `)`, `{`, `[`, `]`: the nesting they open or close. */
function lexBracket(l: Lexer, r: string): StateFn | null {
  switch (r) {
    case '(':
      l.emit('LEFT_PAREN');
      l.parenDepth++;
      return lexStatements;
    case ')':
      l.emit('RIGHT_PAREN');
      l.parenDepth--;
      if (l.parenDepth < 0) return l.errorf(`unexpected right parenthesis ${goQuoteRune(r)}`);
      return lexStatements;
    case '{':
      l.emit('LEFT_BRACE');
      l.braceOpen = true;
      return lexInsideBraces;
    case '[':
      if (l.bracketOpen) return l.errorf(`unexpected left bracket ${goQuoteRune(r)}`);
      l.gotColon = false;
      l.emit('LEFT_BRACKET');
      if (isSpace(l.peek())) skipSpaces(l);
      l.bracketOpen = true;
      return lexDurationExpr;
    default:
      if (!l.bracketOpen) return l.errorf(`unexpected right bracket ${goQuoteRune(r)}`);
      l.emit('RIGHT_BRACKET');
      l.bracketOpen = false;
      return lexStatements;
  }
}

/** A letter, `_` or `:` starts an identifier outside brackets; inside them, a subquery's colon or a duration keyword. */
function lexIdentifierStart(l: Lexer, r: string): StateFn | null {
  if (!l.bracketOpen) {
    l.backup();
    return lexKeywordOrIdentifier;
  }
  if (r === ':') {
    if (l.gotColon) return l.errorf(`unexpected colon ${goQuoteRune(r)}`);
    if (l.peek() === ':') {
      l.nextRune();
      l.emit('DOUBLE_COLON');
    } else l.emit('COLON');
    l.gotColon = true;
    return lexStatements;
  }
  if ('sSmMrR'.includes(r) && l.scanDurationKeyword()) return lexStatements;
  return l.errorf(`unexpected character: ${goQuoteRune(r)}, expected ${goQuoteRune(':')}`);
}

function lexInsideBraces(l: Lexer): StateFn | null {
  if (l.input.startsWith('#', l.pos)) return lexLineComment;
  const r = l.nextRune();
  if (r === EOF_RUNE) return l.errorf('unexpected end of input inside braces');
  if (isSpace(r)) return lexSpace;
  if (isAlpha(r)) {
    l.backup();
    return lexIdentifier;
  }
  switch (r) {
    case ',':
      l.emit('COMMA');
      return lexInsideBraces;
    case '"':
    case "'":
      l.stringOpen = r;
      return lexString;
    case '`':
      l.stringOpen = r;
      return lexRawString;
    case '=':
      if (l.nextRune() === '~') {
        l.emit('EQL_REGEX');
        return lexInsideBraces;
      }
      l.backup();
      l.emit('EQL');
      return lexInsideBraces;
    case '!': {
      const nr = l.nextRune();
      if (nr === '~') l.emit('NEQ_REGEX');
      else if (nr === '=') l.emit('NEQ');
      else return l.errorf(`unexpected character after '!' inside braces: ${goQuoteRune(nr === EOF_RUNE ? '\ufffd' : nr)}`);
      return lexInsideBraces;
    }
    case '{':
      return l.errorf(`unexpected left brace ${goQuoteRune(r)}`);
    case '}':
      l.emit('RIGHT_BRACE');
      l.braceOpen = false;
      return lexStatements;
  }
  return l.errorf(`unexpected character inside braces: ${goQuoteRune(r)}`);
}

function lexEscape(l: Lexer): StateFn | null {
  let ch = l.nextRune();
  let n: number;
  let base: number;
  let max: number;
  if ('abfnrtv\\'.includes(ch) && ch !== EOF_RUNE) return lexString;
  if (ch === l.stringOpen) return lexString;
  if (ch >= '0' && ch <= '7' && ch.length === 1) {
    n = 3;
    base = 8;
    max = 255;
  } else if (ch === 'x') {
    ch = l.nextRune();
    n = 2;
    base = 16;
    max = 255;
  } else if (ch === 'u') {
    ch = l.nextRune();
    n = 4;
    base = 16;
    max = 0x10ffff;
  } else if (ch === 'U') {
    ch = l.nextRune();
    n = 8;
    base = 16;
    max = 0x10ffff;
  } else if (ch === EOF_RUNE) {
    return l.errorf('escape sequence not terminated');
  } else {
    return l.errorf(`unknown escape sequence ${goUnicodeDesc(ch)}`);
  }
  let x = 0;
  while (n > 0) {
    const d = ch.length === 1 ? parseInt(ch, 16) : NaN;
    if (Number.isNaN(d) || d >= base) {
      if (ch === EOF_RUNE) return l.errorf('escape sequence not terminated');
      return l.errorf(`illegal character ${goUnicodeDesc(ch)} in escape sequence`);
    }
    x = x * base + d;
    n--;
    if (n > 0) ch = l.nextRune();
  }
  if (x > max || (x >= 0xd800 && x < 0xe000)) return l.errorf('escape sequence is an invalid Unicode code point');
  return lexString;
}

function lexString(l: Lexer): StateFn | null {
  for (;;) {
    const r = l.nextRune();
    if (r === '\\') return lexEscape;
    if (r === EOF_RUNE || r === '\n') return l.errorf('unterminated quoted string');
    if (r === l.stringOpen) break;
  }
  l.emit('STRING');
  return l.braceOpen ? lexInsideBraces : lexStatements;
}

function lexRawString(l: Lexer): StateFn | null {
  for (;;) {
    const r = l.nextRune();
    if (r === EOF_RUNE) return l.errorf('unterminated raw string');
    if (r === l.stringOpen) break;
  }
  l.emit('STRING');
  return l.braceOpen ? lexInsideBraces : lexStatements;
}

function skipSpaces(l: Lexer): void {
  while (isSpace(l.peek())) l.nextRune();
  l.ignore();
}

function lexSpace(l: Lexer): StateFn | null {
  skipSpaces(l);
  return lexStatements;
}

function lexLineComment(l: Lexer): StateFn | null {
  l.pos += 1;
  for (;;) {
    const r = l.nextRune();
    if (r === '\r' || r === '\n' || r === EOF_RUNE) break;
  }
  l.backup();
  l.emit('COMMENT');
  return lexStatements;
}

function lexNumberOrDuration(l: Lexer): StateFn | null {
  if (l.scanNumber()) {
    l.emit('NUMBER');
    return lexStatements;
  }
  if (acceptRemainingDuration(l)) {
    l.backup();
    l.emit('DURATION');
    return lexStatements;
  }
  return l.errorf(`bad number or duration syntax: ${goQuote(l.input.slice(l.start, l.pos))}`);
}

function lexIdentifier(l: Lexer): StateFn | null {
  while (isAlphaNumeric(l.nextRune())) {
    // Absorb.
  }
  l.backup();
  l.emit('IDENTIFIER');
  return lexInsideBraces;
}

function peekFollowedByLeftParen(l: Lexer): boolean {
  for (let p = l.pos; p < l.input.length; p++) {
    const r = l.input[p];
    if (!isSpace(r)) return r === '(';
  }
  return false;
}

function lexKeywordOrIdentifier(l: Lexer): StateFn | null {
  for (;;) {
    const r = l.nextRune();
    if (isAlphaNumeric(r) || r === ':') continue;
    l.backup();
    const word = l.input.slice(l.start, l.pos);
    const lower = word.toLowerCase();
    const kw = Object.hasOwn(KEYWORD_TOKENS, lower) ? KEYWORD_TOKENS[lower] : undefined;
    if (lower === 'inf' || lower === 'nan') l.emit('NUMBER');
    else if (kw !== undefined) {
      // fill/fill_left/fill_right are keywords only before '(' so they stay usable as metric names.
      if ((kw === 'FILL' || kw === 'FILL_LEFT' || kw === 'FILL_RIGHT') && !peekFollowedByLeftParen(l)) l.emit('IDENTIFIER');
      else l.emit(kw);
    } else if (!word.includes(':')) l.emit('IDENTIFIER');
    else l.emit('METRIC_IDENTIFIER');
    return lexStatements;
  }
}

function lexDurationExpr(l: Lexer): StateFn | null {
  const r = l.nextRune();
  if (r === EOF_RUNE) return l.errorf('unexpected end of input in duration expression');
  switch (r) {
    case ']':
      l.emit('RIGHT_BRACKET');
      l.bracketOpen = false;
      l.gotColon = false;
      return lexStatements;
    case ':':
      l.emit('COLON');
      if (!l.gotDuration) return l.errorf('unexpected colon before duration in duration expression');
      if (l.gotColon) return l.errorf('unexpected repeated colon in duration expression');
      l.gotColon = true;
      return lexDurationExpr;
    case '(':
      l.emit('LEFT_PAREN');
      l.parenDepth++;
      return lexDurationExpr;
    case ')':
      l.emit('RIGHT_PAREN');
      l.parenDepth--;
      if (l.parenDepth < 0) return l.errorf(`unexpected right parenthesis ${goQuoteRune(r)}`);
      return lexDurationExpr;
    case '+':
      l.emit('ADD');
      return lexDurationExpr;
    case '-':
      l.emit('SUB');
      return lexDurationExpr;
    case '*':
      l.emit('MUL');
      return lexDurationExpr;
    case '/':
      l.emit('DIV');
      return lexDurationExpr;
    case '%':
      l.emit('MOD');
      return lexDurationExpr;
    case '^':
      l.emit('POW');
      return lexDurationExpr;
    case ',':
      l.emit('COMMA');
      return lexDurationExpr;
  }
  if (isSpace(r)) {
    skipSpaces(l);
    return lexDurationExpr;
  }
  if ('sSmMrR'.includes(r)) {
    if (l.scanDurationKeyword()) return lexDurationExpr;
    return l.errorf(`unexpected character in duration expression: ${goQuoteRune(r)}`);
  }
  if (isDigit(r) || (r === '.' && isDigit(l.peek()))) {
    l.backup();
    l.gotDuration = true;
    return lexNumberOrDuration;
  }
  return l.errorf(`unexpected character in duration expression: ${goQuoteRune(r)}`);
}

/** All tokens of an input up to and including EOF or the first ERROR (comments included). */
export function lex(input: string): Token[] {
  const l = new Lexer(input);
  const out: Token[] = [];
  for (;;) {
    const t = l.next();
    out.push(t);
    if (t.type === 'EOF' || t.type === 'ERROR') return out;
  }
}
