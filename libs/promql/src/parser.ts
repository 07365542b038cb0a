// The PromQL parser: a precedence-climbing parser over lexer.ts tokens that
// builds the ast.ts tree and then type-checks it, reporting the first error with
// Prometheus' wording and position. It mirrors the error productions of
// Prometheus' yacc grammar (promql/parser/generated_parser.y); it evaluates nothing.

import type { Matcher, MatchType } from '@strata/model';
import { METRIC_NAME, compileRegex } from '@strata/model';
import type {
  AggregateExpr,
  AggregateOp,
  BinaryExpr,
  BinaryOp,
  Call,
  DurationExpr,
  Expr,
  MatrixSelector,
  SubqueryExpr,
  ValueType,
  VectorMatching,
  VectorSelector,
} from './ast.ts';
import { parseDuration, secondsToMs } from './durations.ts';
import type { PositionRange } from './errors.ts';
import { PromQLParseError } from './errors.ts';
import { FUNCTIONS } from './functions.ts';
import { goQuote, isValidLabelName, parseGoFloat, parseGoInt, unquoteGoString } from './go-compat.ts';
import type { Token, TokenType } from './lexer.ts';
import { Lexer, describeToken, isAggregator } from './lexer.ts';
import { typeCheck } from './typecheck.ts';

export interface ParseOptions {
  /** Accept functions and aggregations Prometheus gates behind --enable-feature=promql-experimental-functions. */
  enableExperimentalFunctions?: boolean;
  /** Accept arithmetic, step(), range() and min_of/max_of in ranges and offsets (--enable-feature=promql-duration-expr). */
  enableDurationExpressions?: boolean;
}

/** Parses and type-checks a PromQL expression. Throws PromQLParseError. */
export function parseExpr(input: string, options: ParseOptions = {}): Expr {
  return new Parser(input, options).parse();
}

/**
 * Parses a series selector such as a `match[]` parameter (Prometheus'
 * ParseMetricSelector): its matchers, a name written before the braces last.
 * Does not require a non-empty matcher; callers that need one check it.
 */
export function parseSelector(input: string): Matcher[] {
  return new Parser(input, {}).parseSelectorOnly();
}

interface BinaryOpInfo {
  op: BinaryOp;
  prec: number;
  rightAssoc: boolean;
}

const BINARY_OPS: Partial<Record<TokenType, BinaryOpInfo>> = {
  LOR: { op: 'or', prec: 1, rightAssoc: false },
  LAND: { op: 'and', prec: 2, rightAssoc: false },
  LUNLESS: { op: 'unless', prec: 2, rightAssoc: false },
  EQLC: { op: '==', prec: 3, rightAssoc: false },
  NEQ: { op: '!=', prec: 3, rightAssoc: false },
  LTE: { op: '<=', prec: 3, rightAssoc: false },
  LSS: { op: '<', prec: 3, rightAssoc: false },
  GTE: { op: '>=', prec: 3, rightAssoc: false },
  GTR: { op: '>', prec: 3, rightAssoc: false },
  TRIM_UPPER: { op: '</', prec: 3, rightAssoc: false },
  TRIM_LOWER: { op: '>/', prec: 3, rightAssoc: false },
  ADD: { op: '+', prec: 4, rightAssoc: false },
  SUB: { op: '-', prec: 4, rightAssoc: false },
  MUL: { op: '*', prec: 5, rightAssoc: false },
  DIV: { op: '/', prec: 5, rightAssoc: false },
  MOD: { op: '%', prec: 5, rightAssoc: false },
  ATAN2: { op: 'atan2', prec: 5, rightAssoc: false },
  POW: { op: '^', prec: 6, rightAssoc: true },
};

/** Unary +/- bind like * (so -a^b is -(a^b)), as in Prometheus' grammar. */
const UNARY_OPERAND_PREC = 6;

const DURATION_OPS: Partial<Record<TokenType, { op: '+' | '-' | '*' | '/' | '%' | '^'; prec: number }>> = {
  ADD: { op: '+', prec: 4 },
  SUB: { op: '-', prec: 4 },
  MUL: { op: '*', prec: 5 },
  DIV: { op: '/', prec: 5 },
  MOD: { op: '%', prec: 5 },
  POW: { op: '^', prec: 6 },
};

/** Tokens a duration expression may start with (besides min_of/max_of). */
const DURATION_START = new Set<TokenType>(['NUMBER', 'DURATION', 'STEP', 'RANGE', 'LEFT_PAREN', 'ADD', 'SUB']);

/** The largest duration literal in seconds (Go's time.Duration). */
const MAX_DURATION_SECONDS = 2 ** 63 / 1e9;

/** Keywords that are also valid metric names at the start of an expression. */
const METRIC_IDENTIFIER_TOKENS = new Set<TokenType>([
  'AVG',
  'BOTTOMK',
  'BY',
  'COUNT',
  'COUNT_VALUES',
  'GROUP',
  'IDENTIFIER',
  'LAND',
  'LOR',
  'LUNLESS',
  'MAX',
  'METRIC_IDENTIFIER',
  'MIN',
  'OFFSET',
  'QUANTILE',
  'STDDEV',
  'STDVAR',
  'SUM',
  'TOPK',
  'WITHOUT',
  'START',
  'END',
  'LIMITK',
  'LIMIT_RATIO',
  'STEP',
  'RANGE',
  'ANCHORED',
  'SMOOTHED',
]);

/** Tokens that may name a label in by(...), on(...) and friends. */
const MAYBE_LABEL_TOKENS = new Set<TokenType>([...METRIC_IDENTIFIER_TOKENS, 'BOOL', 'GROUP_LEFT', 'GROUP_RIGHT', 'IGNORING', 'ON', 'ATAN2']);

const MATCH_OPS: Partial<Record<TokenType, MatchType>> = { EQL: '=', NEQ: '!=', EQL_REGEX: '=~', NEQ_REGEX: '!~' };

const AGGREGATORS_WITH_PARAM = new Set<AggregateOp>(['topk', 'bottomk', 'count_values', 'quantile', 'limitk', 'limit_ratio']);
const EXPERIMENTAL_AGGREGATORS = new Set<AggregateOp>(['limitk', 'limit_ratio']);

/** Thrown to unwind after a syntax error has been recorded. */
class SyntaxAbort extends Error {}

interface ErrorContext {
  context: string;
  expected: string;
}

class Parser {
  private readonly lexer: Lexer;
  private tok: Token | null = null;
  private prevEnd = 0;
  private readonly errors: { pos: PositionRange; msg: string }[] = [];
  /** Enclosing grammar productions that report errors found anywhere inside them ("in aggregation"). */
  private readonly contexts: ErrorContext[] = [];

  private readonly input: string;
  private readonly options: ParseOptions;

  constructor(input: string, options: ParseOptions) {
    this.input = input;
    this.options = options;
    this.lexer = new Lexer(input);
  }

  parse(): Expr {
    let expr: Expr | undefined;
    try {
      if (this.peek().type === 'EOF') {
        this.addError({ start: 0, end: 0 }, 'no expression found in input');
      } else {
        expr = this.parseExpr(0);
        if (this.peek().type !== 'EOF') this.unexpected();
      }
    } catch (err) {
      if (!(err instanceof SyntaxAbort)) throw err;
    }
    if (this.errors.length === 0 && expr) this.errors.push(...typeCheck(expr));
    if (this.errors.length > 0 || !expr) {
      const first = this.errors[0];
      throw new PromQLParseError(this.input, first.pos, first.msg);
    }
    return expr;
  }

  parseSelectorOnly(): Matcher[] {
    let vs: VectorSelector | undefined;
    try {
      const t = this.peek();
      if (t.type === 'LEFT_BRACE') vs = this.parseVectorSelector(undefined);
      else if (METRIC_IDENTIFIER_TOKENS.has(t.type) || isAggregator(t.type)) vs = this.parseVectorSelector(this.advance());
      else this.unexpected();
      if (this.peek().type !== 'EOF') this.unexpected();
    } catch (err) {
      if (!(err instanceof SyntaxAbort)) throw err;
    }
    if (this.errors.length > 0 || !vs) {
      const first = this.errors[0];
      throw new PromQLParseError(this.input, first.pos, first.msg);
    }
    return vs.matchers;
  }

  // --- Tokens -------------------------------------------------------------

  private peek(): Token {
    if (this.tok === null) {
      let t = this.lexer.next();
      while (t.type === 'COMMENT') t = this.lexer.next();
      this.tok = t;
      if (t.type === 'ERROR') {
        this.addError({ start: t.pos, end: this.input.length }, t.val);
        throw new SyntaxAbort();
      }
    }
    return this.tok;
  }

  private advance(): Token {
    const t = this.peek();
    this.tok = null;
    this.prevEnd = t.pos + t.val.length;
    return t;
  }

  private addError(pos: PositionRange, msg: string): void {
    this.errors.push({ pos, msg });
  }

  /** Records Prometheus' "unexpected <token> in <context>, expected <what>" for the lookahead and unwinds. */
  private unexpected(context?: string, expected?: string): never {
    if (context === undefined && this.contexts.length > 0) {
      const c = this.contexts[this.contexts.length - 1];
      context = c.context;
      expected = c.expected;
    }
    const t = this.peek();
    let msg = 'unexpected ' + describeToken(t);
    if (context) msg += ' in ' + context;
    if (expected) msg += ', expected ' + expected;
    this.addError({ start: t.pos, end: t.pos + t.val.length }, msg);
    throw new SyntaxAbort();
  }

  // --- Expressions ----------------------------------------------------------

  private parseExpr(minPrec: number): Expr {
    let lhs = this.parseUnary();
    for (;;) {
      const opTok = this.peek();
      const info = BINARY_OPS[opTok.type];
      if (!info || info.prec < minPrec) return lhs;
      this.advance();
      if ((info.op === '</' || info.op === '>/') && !this.options.enableExperimentalFunctions) {
        this.addError(
          this.range(opTok),
          `the histogram trim operator ${info.op} is experimental and must be enabled with --enable-feature=promql-experimental-functions`,
        );
      }
      const { returnBool, matching } = this.parseBinModifiers();
      const rhs = this.parseExpr(info.rightAssoc ? info.prec : info.prec + 1);
      const bin: BinaryExpr = {
        kind: 'binary',
        op: info.op,
        lhs,
        rhs,
        returnBool,
        matching,
        opPos: opTok.pos,
        pos: { start: lhs.pos.start, end: rhs.pos.end },
      };
      lhs = bin;
    }
  }

  private parseUnary(): Expr {
    const t = this.peek();
    if (t.type !== 'ADD' && t.type !== 'SUB') return this.parsePostfix(this.parsePrimary());
    this.advance();
    const operand = this.parseExpr(UNARY_OPERAND_PREC);
    if (operand.kind === 'number') {
      // Prometheus folds the sign into number literals.
      return { ...operand, value: t.type === 'SUB' ? -operand.value : operand.value, pos: { start: t.pos, end: operand.pos.end } };
    }
    return { kind: 'unary', op: t.type === 'SUB' ? '-' : '+', expr: operand, pos: { start: t.pos, end: operand.pos.end } };
  }

  private parseBinModifiers(): { returnBool: boolean; matching: VectorMatching } {
    const matching: VectorMatching = { card: 'one-to-one', matchingLabels: [], on: false, include: [] };
    let returnBool = false;
    if (this.peek().type === 'BOOL') {
      this.advance();
      returnBool = true;
    }
    const t = this.peek();
    if (t.type === 'ON' || t.type === 'IGNORING') {
      this.advance();
      matching.on = t.type === 'ON';
      matching.matchingLabels = this.parseGroupingLabels();
      const g = this.peek();
      if (g.type === 'GROUP_LEFT' || g.type === 'GROUP_RIGHT') {
        this.advance();
        matching.card = g.type === 'GROUP_LEFT' ? 'many-to-one' : 'one-to-many';
        // A parenthesis right after group_x is always its label list, as in Prometheus.
        if (this.peek().type === 'LEFT_PAREN') matching.include = this.parseGroupingLabels();
      }
    }
    this.parseFillModifiers(matching);
    return { returnBool, matching };
  }

  /** fill(v), fill_left(v), fill_right(v) (the latter two in either order), after the matching clauses. */
  private parseFillModifiers(m: VectorMatching): void {
    const start = this.peek();
    for (;;) {
      const t = this.peek();
      if (t.type !== 'FILL' && t.type !== 'FILL_LEFT' && t.type !== 'FILL_RIGHT') break;
      this.advance();
      if (this.peek().type !== 'LEFT_PAREN') this.unexpected('fill modifier', '"("');
      this.advance();
      const first = this.peek();
      let sign = 1;
      if (first.type === 'ADD' || first.type === 'SUB') {
        this.advance();
        sign = first.type === 'SUB' ? -1 : 1;
      }
      const n = this.peek();
      if (n.type !== 'NUMBER') this.unexpected('fill modifier', 'number');
      this.advance();
      const v = sign * this.parseNumber(n);
      if (this.peek().type !== 'RIGHT_PAREN') this.unexpected('fill modifier', '")"');
      this.advance();
      const left = t.type !== 'FILL_RIGHT';
      const right = t.type !== 'FILL_LEFT';
      if ((left && m.fillLeft !== undefined) || (right && m.fillRight !== undefined)) {
        this.addError({ start: t.pos, end: this.prevEnd }, 'fill value may not be set multiple times');
      }
      if (left) m.fillLeft = v;
      if (right) m.fillRight = v;
    }
    if ((m.fillLeft !== undefined || m.fillRight !== undefined) && !this.options.enableExperimentalFunctions) {
      this.addError(
        { start: start.pos, end: this.prevEnd },
        'fill modifiers are experimental and must be enabled with --enable-feature=promql-experimental-functions',
      );
    }
  }

  private parsePrimary(): Expr {
    const t = this.peek();
    switch (t.type) {
      case 'NUMBER': {
        this.advance();
        return { kind: 'number', value: this.parseNumber(t), pos: this.range(t) };
      }
      case 'DURATION': {
        this.advance();
        return { kind: 'number', value: this.parseDurationSeconds(t), pos: this.range(t) };
      }
      case 'STRING': {
        this.advance();
        return { kind: 'string', value: this.unquote(t), pos: this.range(t) };
      }
      case 'LEFT_PAREN': {
        this.advance();
        const inner = this.parseExpr(0);
        const close = this.peek();
        if (close.type !== 'RIGHT_PAREN') this.unexpected();
        this.advance();
        return { kind: 'paren', expr: inner, pos: { start: t.pos, end: close.pos + 1 } };
      }
      case 'LEFT_BRACE':
        return this.parseVectorSelector(undefined);
      case 'IDENTIFIER': {
        this.advance();
        if (this.peek().type === 'LEFT_PAREN') return this.parseCall(t);
        return this.parseVectorSelector(t);
      }
    }
    if (t.type === 'START' || t.type === 'END' || t.type === 'STEP' || t.type === 'RANGE') {
      // start(), end(), step() and range() are functions; the bare words are metric names.
      this.advance();
      if (this.peek().type === 'LEFT_PAREN') return this.parseCall({ ...t, val: t.val.toLowerCase() });
      return this.parseVectorSelector(t);
    }
    if (isAggregator(t.type)) {
      this.advance();
      const next = this.peek().type;
      if (next === 'LEFT_PAREN' || next === 'BY' || next === 'WITHOUT') return this.parseAggregation(t);
      return this.parseVectorSelector(t);
    }
    if (METRIC_IDENTIFIER_TOKENS.has(t.type)) {
      this.advance();
      return this.parseVectorSelector(t);
    }
    return this.unexpected();
  }

  private range(t: Token): PositionRange {
    return { start: t.pos, end: t.pos + t.val.length };
  }

  private parseNumber(t: Token): number {
    const v = parseGoInt(t.val) ?? parseGoFloat(t.val);
    if (v === undefined) {
      this.addError(this.range(t), `error parsing number: strconv.ParseFloat: parsing ${goQuote(t.val)}: invalid syntax`);
      return 0;
    }
    return v;
  }

  private parseDurationSeconds(t: Token): number {
    try {
      return parseDuration(t.val) / 1000;
    } catch (err) {
      this.addError(this.range(t), (err as Error).message);
      return 0;
    }
  }

  private unquote(t: Token): string {
    try {
      return unquoteGoString(t.val);
    } catch (err) {
      this.addError(this.range(t), `error unquoting string ${goQuote(t.val)}: ${(err as Error).message}`);
      return '';
    }
  }

  // --- Selectors --------------------------------------------------------------

  private parseVectorSelector(nameTok: Token | undefined): VectorSelector {
    const start = nameTok ? nameTok.pos : this.peek().pos;
    let end = nameTok ? nameTok.pos + nameTok.val.length : start;
    const matchers: Matcher[] = [];
    if (this.peek().type === 'LEFT_BRACE') end = this.parseLabelMatchers(matchers);
    if (nameTok) matchers.push({ type: '=', name: METRIC_NAME, value: nameTok.val });
    return {
      kind: 'vectorSelector',
      name: nameTok?.val,
      matchers,
      offsetMs: 0,
      pos: { start, end },
    };
  }

  /** Parses `{...}` into matchers; returns the end offset of the closing brace. */
  private parseLabelMatchers(out: Matcher[]): number {
    this.advance(); // {
    if (this.peek().type === 'RIGHT_BRACE') return this.advance().pos + 1;
    for (;;) {
      const m = this.parseLabelMatcher();
      if (m) out.push(m);
      const t = this.peek();
      if (t.type === 'RIGHT_BRACE') return this.advance().pos + 1;
      if (t.type !== 'COMMA') this.unexpected('label matching', '"," or "}"');
      this.advance();
      if (this.peek().type === 'RIGHT_BRACE') return this.advance().pos + 1;
    }
  }

  private parseLabelMatcher(): Matcher | undefined {
    const t = this.peek();
    if (t.type === 'IDENTIFIER' || t.type === 'STRING') {
      this.advance();
      const opTok = this.peek();
      const op = MATCH_OPS[opTok.type];
      if (op === undefined) {
        if (t.type === 'STRING') {
          // {"name"} selects by metric name.
          return { type: '=', name: METRIC_NAME, value: this.unquote(t) };
        }
        this.unexpected('label matching', 'label matching operator');
      }
      this.advance();
      const v = this.peek();
      if (v.type !== 'STRING') this.unexpected('label matching', 'string');
      this.advance();
      const name = t.type === 'STRING' ? this.unquote(t) : t.val;
      const value = this.unquote(v);
      if (op === '=~' || op === '!~') {
        try {
          compileRegex(value);
        } catch (err) {
          this.addError({ start: t.pos, end: v.pos + v.val.length }, (err as Error).message);
        }
      }
      return { type: op, name, value };
    }
    return this.unexpected('label matching', 'identifier or "}"');
  }

  // --- Functions and aggregations ---------------------------------------------

  /** Parses `(arg, ...)`; the lookahead is the opening parenthesis. */
  private parseCallArgs(): { args: Expr[]; end: number } {
    this.advance(); // (
    const args: Expr[] = [];
    if (this.peek().type === 'RIGHT_PAREN') return { args, end: this.advance().pos + 1 };
    for (;;) {
      args.push(this.parseExpr(0));
      const t = this.peek();
      if (t.type === 'RIGHT_PAREN') return { args, end: this.advance().pos + 1 };
      if (t.type !== 'COMMA') this.unexpected();
      this.advance();
      if (this.peek().type === 'RIGHT_PAREN') {
        this.addError(this.range(t), 'trailing commas not allowed in function call args');
        return { args, end: this.advance().pos + 1 };
      }
    }
  }

  private parseCall(nameTok: Token): Call {
    const def = Object.hasOwn(FUNCTIONS, nameTok.val) ? FUNCTIONS[nameTok.val] : undefined;
    if (!def) this.addError(this.range(nameTok), `unknown function with name ${goQuote(nameTok.val)}`);
    else if (def.experimental && !this.options.enableExperimentalFunctions) {
      this.addError(this.range(nameTok), `function ${goQuote(nameTok.val)} is not enabled`);
    }
    const { args, end } = this.parseCallArgs();
    const func = def ?? { name: nameTok.val, argTypes: [], variadic: -1, returnType: 'vector' as ValueType };
    return { kind: 'call', func, args, pos: { start: nameTok.pos, end } };
  }

  private parseAggregation(opTok: Token): AggregateExpr {
    this.contexts.push({ context: 'aggregation', expected: '' });
    let grouping: string[] = [];
    let without = false;
    let hasModifier = false;
    const parseModifier = () => {
      without = this.advance().type === 'WITHOUT';
      grouping = this.parseGroupingLabels();
      hasModifier = true;
    };
    const first = this.peek().type;
    if (first === 'BY' || first === 'WITHOUT') parseModifier();
    if (this.peek().type !== 'LEFT_PAREN') this.unexpected();
    const { args, end } = this.parseCallArgs();
    let stop = end;
    if (!hasModifier) {
      const next = this.peek().type;
      if (next === 'BY' || next === 'WITHOUT') {
        parseModifier();
        stop = this.prevEnd;
      }
    }
    this.contexts.pop();

    const op = opTok.val.toLowerCase() as AggregateOp;
    const pos = { start: opTok.pos, end: stop };
    const agg: AggregateExpr = { kind: 'aggregate', op, expr: args[args.length - 1], grouping, without, pos };
    if (args.length === 0) {
      this.addError(pos, 'no arguments for aggregate expression provided');
      return agg;
    }
    let desired = 1;
    if (AGGREGATORS_WITH_PARAM.has(op)) {
      if (EXPERIMENTAL_AGGREGATORS.has(op) && !this.options.enableExperimentalFunctions) {
        this.addError(pos, `${op}() is experimental and must be enabled with --enable-feature=promql-experimental-functions`);
        return agg;
      }
      desired = 2;
      agg.param = args[0];
    }
    if (args.length !== desired) {
      this.addError(pos, `wrong number of arguments for aggregate expression provided, expected ${desired}, got ${args.length}`);
      return agg;
    }
    agg.expr = args[desired - 1];
    return agg;
  }

  private parseGroupingLabels(): string[] {
    if (this.peek().type !== 'LEFT_PAREN') this.unexpected('grouping opts', '"("');
    this.advance();
    const labels: string[] = [];
    if (this.peek().type === 'RIGHT_PAREN') {
      this.advance();
      return labels;
    }
    for (;;) {
      const t = this.peek();
      if (MAYBE_LABEL_TOKENS.has(t.type)) {
        this.advance();
        labels.push(t.val);
      } else if (t.type === 'STRING') {
        this.advance();
        const name = this.unquote(t);
        if (!isValidLabelName(name)) this.addError({ start: t.pos + 1, end: t.pos + t.val.length }, `invalid label name for grouping: ${goQuote(name)}`);
        labels.push(name);
      } else {
        this.unexpected('grouping opts', 'label');
      }
      const sep = this.peek();
      if (sep.type === 'RIGHT_PAREN') {
        this.advance();
        return labels;
      }
      if (sep.type !== 'COMMA') this.unexpected('grouping opts', '"," or ")"');
      this.advance();
      if (this.peek().type === 'RIGHT_PAREN') {
        this.advance();
        return labels;
      }
    }
  }

  // --- Postfix modifiers: [range], [range:step], offset, @ --------------------

  private parsePostfix(e: Expr): Expr {
    for (;;) {
      const t = this.peek();
      if (t.type === 'LEFT_BRACKET') e = this.parseRangeOrSubquery(e);
      else if (t.type === 'OFFSET') e = this.parseOffset(e);
      else if (t.type === 'AT') e = this.parseAt(e);
      else if (t.type === 'ANCHORED' || t.type === 'SMOOTHED') e = this.parseExtended(e);
      else return e;
    }
  }

  // --- Duration expressions ([26m+4m], [step()*2:step()], offset min_of(step(), 1m)) ---

  /**
   * A duration inside brackets: an arithmetic duration expression, folded to
   * its value when it is a plain (signed) number or duration literal, which
   * must then be positive. Anything else is kept for the engine to resolve.
   */
  private parseBracketDuration(context: string, expected: string): { ms: number; expr?: DurationExpr } {
    const first = this.peek();
    if (!DURATION_START.has(first.type) && !this.isMinMaxOf(first)) this.unexpected(context, expected);
    this.contexts.push({ context, expected });
    const d = this.parseDurationExpr(0);
    this.contexts.pop();
    const pos = { start: first.pos, end: this.prevEnd };
    if (d.kind === 'literal') {
      if (!(d.seconds > 0)) {
        this.addError(pos, 'duration must be greater than 0');
        return { ms: 0 };
      }
      return { ms: secondsToMs(d.seconds) };
    }
    this.checkDurationExprEnabled(pos);
    return { ms: 0, expr: d };
  }

  /**
   * The duration after `offset`: a signed literal, step(), range(), min_of/max_of
   * or a parenthesised duration expression, and nothing more, so that
   * `foo offset 1m + 1m` adds 1m to `foo offset 1m` (Prometheus' offset_duration_expr).
   */
  private parseOffsetDuration(): { ms: number; expr?: DurationExpr } | undefined {
    const first = this.peek();
    let sign = 1;
    if (first.type === 'ADD' || first.type === 'SUB') {
      this.advance();
      sign = first.type === 'SUB' ? -1 : 1;
    }
    const t = this.peek();
    if (!DURATION_START.has(t.type) && !this.isMinMaxOf(t)) {
      if (sign === -1 || first.type === 'ADD') this.unexpected('offset', 'number, duration, step(), or range()');
      return undefined;
    }
    if (t.type === 'ADD' || t.type === 'SUB') this.unexpected('offset', 'number, duration, step(), or range()');
    this.contexts.push({ context: 'offset', expected: 'number, duration, step(), or range()' });
    let d = this.parseDurationPrimary();
    this.contexts.pop();
    const pos = { start: first.pos, end: this.prevEnd };
    if (d.kind === 'literal') {
      const seconds = sign * d.seconds;
      if (Math.abs(seconds) > MAX_DURATION_SECONDS) {
        this.addError(pos, 'duration out of range');
        return { ms: 0 };
      }
      return { ms: secondsToMs(seconds) };
    }
    if (sign === -1) d = { kind: 'neg', expr: d };
    this.checkDurationExprEnabled(pos);
    return { ms: 0, expr: d };
  }

  private checkDurationExprEnabled(pos: PositionRange): void {
    if (!this.options.enableDurationExpressions) this.addError(pos, 'experimental duration expression is not enabled');
  }

  private isMinMaxOf(t: Token): boolean {
    return t.type === 'MIN_OF' || t.type === 'MAX_OF' || (t.type === 'IDENTIFIER' && (t.val === 'min_of' || t.val === 'max_of'));
  }

  private parseDurationExpr(minPrec: number): DurationExpr {
    let lhs = this.parseDurationUnary();
    for (;;) {
      const opTok = this.peek();
      const info = DURATION_OPS[opTok.type];
      if (!info || info.prec < minPrec) return lhs;
      this.advance();
      const rhs = this.parseDurationExpr(info.op === '^' ? info.prec : info.prec + 1);
      if ((info.op === '/' || info.op === '%') && rhs.kind === 'literal' && rhs.seconds === 0) {
        this.addError(this.range(opTok), info.op === '/' ? 'division by zero' : 'modulo by zero');
      }
      lhs = { kind: 'binary', op: info.op, lhs, rhs };
    }
  }

  private parseDurationUnary(): DurationExpr {
    const t = this.peek();
    if (t.type !== 'ADD' && t.type !== 'SUB') return this.parseDurationPrimary();
    this.advance();
    const operand = this.parseDurationExpr(UNARY_OPERAND_PREC);
    if (t.type === 'ADD') return operand;
    if (operand.kind === 'literal') {
      if (Math.abs(operand.seconds) > MAX_DURATION_SECONDS) this.addError(this.range(t), 'duration out of range');
      return { ...operand, seconds: -operand.seconds };
    }
    return { kind: 'neg', expr: operand };
  }

  private parseDurationPrimary(): DurationExpr {
    const t = this.peek();
    switch (t.type) {
      case 'NUMBER':
      case 'DURATION': {
        this.advance();
        const seconds = t.type === 'NUMBER' ? this.parseNumber(t) : this.parseDurationSeconds(t);
        if (Math.abs(seconds) > MAX_DURATION_SECONDS) {
          this.addError(this.range(t), 'duration out of range');
          return { kind: 'literal', seconds: 0, duration: false };
        }
        return { kind: 'literal', seconds, duration: t.type === 'DURATION' };
      }
      case 'STEP':
      case 'RANGE': {
        this.advance();
        this.expect('LEFT_PAREN');
        this.expect('RIGHT_PAREN');
        return { kind: t.type === 'STEP' ? 'step' : 'range' };
      }
      case 'LEFT_PAREN': {
        this.advance();
        const inner = this.parseDurationExpr(0);
        this.expect('RIGHT_PAREN');
        // A parenthesised literal stays a literal, as in Prometheus' paren_duration_expr.
        return inner.kind === 'literal' ? inner : { ...inner, wrapped: true };
      }
    }
    if (this.isMinMaxOf(t)) {
      this.advance();
      this.expect('LEFT_PAREN');
      const lhs = this.parseDurationExpr(0);
      this.expect('COMMA');
      const rhs = this.parseDurationExpr(0);
      this.expect('RIGHT_PAREN');
      return { kind: t.val.toLowerCase() === 'min_of' ? 'min_of' : 'max_of', lhs, rhs };
    }
    return this.unexpected();
  }

  private expect(type: TokenType): Token {
    if (this.peek().type !== type) this.unexpected();
    return this.advance();
  }

  private parseRangeOrSubquery(e: Expr): Expr {
    const lb = this.advance(); // [
    const range = this.parseBracketDuration('subquery or range selector', 'number, duration, step(), or range()');
    const t = this.peek();
    if (t.type === 'RIGHT_BRACKET') {
      const rb = this.advance();
      let errMsg = '';
      if (e.kind !== 'vectorSelector') errMsg = 'ranges only allowed for vector selectors';
      else if (e.offsetMs !== 0 || e.offsetExpr) errMsg = 'no offset modifiers allowed before range';
      else if (e.atMs !== undefined) errMsg = 'no @ modifiers allowed before range';
      if (errMsg) this.addError({ start: lb.pos, end: rb.pos + 1 }, errMsg);
      const ms: MatrixSelector = { kind: 'matrixSelector', vectorSelector: e, rangeMs: range.ms, pos: { start: e.pos.start, end: rb.pos + 1 } };
      if (range.expr) ms.rangeExpr = range.expr;
      return ms;
    }
    if (t.type !== 'COLON') this.unexpected('subquery or range', '":" or "]"');
    this.advance();
    let step: { ms: number; expr?: DurationExpr } = { ms: 0 };
    if (this.peek().type !== 'RIGHT_BRACKET') {
      step = this.parseBracketDuration('subquery selector', 'number, duration, step(), range(), or "]"');
      if (this.peek().type !== 'RIGHT_BRACKET') this.unexpected('subquery selector', '"]"');
    }
    const rb = this.advance();
    const sq: SubqueryExpr = { kind: 'subquery', expr: e, rangeMs: range.ms, stepMs: step.ms, offsetMs: 0, pos: { start: e.pos.start, end: rb.pos + 1 } };
    if (range.expr) sq.rangeExpr = range.expr;
    if (step.expr) sq.stepExpr = step.expr;
    return sq;
  }

  /** A signed number or duration after @; undefined when the lookahead is neither. */
  private parseSignedNumber(): number | undefined {
    const first = this.peek();
    let sign = 1;
    if (first.type === 'ADD' || first.type === 'SUB') {
      sign = first.type === 'SUB' ? -1 : 1;
      this.advance();
    }
    const t = this.peek();
    if (t.type === 'NUMBER') {
      this.advance();
      return sign * this.parseNumber(t);
    }
    if (t.type === 'DURATION') {
      this.advance();
      return sign * this.parseDurationSeconds(t);
    }
    return undefined;
  }

  private parseOffset(e: Expr): Expr {
    this.advance(); // offset
    const offset = this.parseOffsetDuration();
    if (offset === undefined) this.unexpected('offset', 'number, duration, step(), or range()');
    const target = this.modifierTarget(e, 'offset modifier must be preceded by an instant vector selector or range vector selector or a subquery');
    if (target) {
      if (target.offsetMs !== 0 || target.offsetExpr) this.addError(e.pos, 'offset may not be set multiple times');
      else {
        target.offsetMs = offset.ms;
        if (offset.expr) target.offsetExpr = offset.expr;
      }
    }
    e.pos = { start: e.pos.start, end: this.prevEnd };
    return e;
  }

  private parseAt(e: Expr): Expr {
    this.advance(); // @
    const t = this.peek();
    let at: { ms?: number; startOrEnd?: 'start' | 'end' };
    if (t.type === 'START' || t.type === 'END') {
      this.advance();
      if (this.peek().type !== 'LEFT_PAREN') this.unexpected('@', 'timestamp');
      this.advance();
      if (this.peek().type !== 'RIGHT_PAREN') this.unexpected('@', 'timestamp');
      this.advance();
      at = { startOrEnd: t.type === 'START' ? 'start' : 'end' };
    } else {
      const seconds = this.parseSignedNumber();
      if (seconds === undefined) this.unexpected('@', 'timestamp');
      if (!Number.isFinite(seconds) || Math.abs(seconds) >= 9.223372036854776e18) {
        this.addError(e.pos, `timestamp out of bounds for @ modifier: ${formatGoFixed(seconds)}`);
      }
      at = { ms: Math.round(seconds * 1000) };
    }
    const target = this.modifierTarget(e, '@ modifier must be preceded by an instant vector selector or range vector selector or a subquery');
    if (target) {
      if (target.atMs !== undefined || target.atStartOrEnd !== undefined) {
        this.addError(e.pos, '@ <timestamp> may not be set multiple times');
      } else {
        target.atMs = at.ms;
        target.atStartOrEnd = at.startOrEnd;
      }
    }
    e.pos = { start: e.pos.start, end: this.prevEnd };
    return e;
  }

  /** `anchored` / `smoothed` after a range or instant selector. */
  private parseExtended(e: Expr): Expr {
    const t = this.advance();
    const kind = t.type === 'ANCHORED' ? 'anchored' : 'smoothed';
    if (!this.options.enableExperimentalFunctions) this.addError(this.range(t), `${kind} modifier is experimental and not enabled`);
    const vs = e.kind === 'matrixSelector' ? e.vectorSelector : e;
    if (vs.kind !== 'vectorSelector') {
      this.addError(e.pos, `${kind} modifier must be preceded by an instant vector selector or range vector selector`);
    } else if (vs.anchored || vs.smoothed) {
      this.addError(e.pos, 'anchored or smoothed may only be set once');
    } else if (kind === 'anchored' && e.kind !== 'matrixSelector') {
      this.addError(e.pos, 'anchored modifier can only be used with a range vector selector');
    } else {
      vs[kind] = true;
    }
    e.pos = { start: e.pos.start, end: this.prevEnd };
    return e;
  }

  /** The node an offset or @ modifier applies to, or undefined after recording `message`. */
  private modifierTarget(e: Expr, message: string): VectorSelector | SubqueryExpr | undefined {
    if (e.kind === 'vectorSelector' || e.kind === 'subquery') return e;
    if (e.kind === 'matrixSelector') {
      if (e.vectorSelector.kind === 'vectorSelector') return e.vectorSelector;
      this.addError(e.pos, 'ranges only allowed for vector selectors');
      return undefined;
    }
    this.addError(e.pos, message);
    return undefined;
  }
}

/** Go's %f: six decimals, with Go's spelling of the special values. */
function formatGoFixed(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return v.toFixed(6);
}
