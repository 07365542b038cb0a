// The typed PromQL syntax tree the parser produces and the engine walks. Nodes
// are plain data (discriminated on `kind`) so passes can be added without
// touching the node definitions; printing follows Prometheus' String().

import type { Matcher } from '@strata/model';
import type { PositionRange } from './errors.ts';
import { formatDuration } from './durations.ts';
import { formatGoFloat, goQuote } from './go-compat.ts';

/** Value types of expressions; `matrix` is Prometheus' "range vector". */
export type ValueType = 'none' | 'scalar' | 'vector' | 'matrix' | 'string';

/** How Prometheus names a value type in messages (parser.DocumentedType). */
export function documentedType(t: ValueType): string {
  switch (t) {
    case 'vector':
      return 'instant vector';
    case 'matrix':
      return 'range vector';
    default:
      return t;
  }
}

export type AggregateOp =
  'sum' | 'avg' | 'count' | 'min' | 'max' | 'group' | 'stddev' | 'stdvar' | 'topk' | 'bottomk' | 'count_values' | 'quantile' | 'limitk' | 'limit_ratio';

export type ArithmeticOp = '+' | '-' | '*' | '/' | '%' | '^' | 'atan2';
export type ComparisonOp = '==' | '!=' | '>' | '<' | '>=' | '<=';
export type SetOp = 'and' | 'or' | 'unless';
/** The histogram trim operators: keep the observations below (`</`) or above (`>/`) a value. */
export type TrimOp = '</' | '>/';
export type BinaryOp = ArithmeticOp | ComparisonOp | SetOp | TrimOp;

export function isTrimOp(op: BinaryOp): op is TrimOp {
  return op === '</' || op === '>/';
}

export function isComparisonOp(op: BinaryOp): op is ComparisonOp {
  return op === '==' || op === '!=' || op === '>' || op === '<' || op === '>=' || op === '<=';
}
export function isSetOp(op: BinaryOp): op is SetOp {
  return op === 'and' || op === 'or' || op === 'unless';
}

export type Cardinality = 'one-to-one' | 'many-to-one' | 'one-to-many' | 'many-to-many';

export interface VectorMatching {
  card: Cardinality;
  /** Labels of on(...) or ignoring(...), as written. */
  matchingLabels: string[];
  /** True for on(...), false for ignoring(...) or no clause. */
  on: boolean;
  /** Labels of group_left(...)/group_right(...) copied from the "one" side. */
  include: string[];
  /**
   * fill_left(v)/fill_right(v)/fill(v): a sample with this value (and the
   * match group's labels) stands in for a missing one on that side. With
   * group_x, "left" is the "many" side and "right" the "one" side.
   */
  fillLeft?: number;
  fillRight?: number;
}

/** The signature of a function as the parser sees it; implementations live in functions.ts. */
export interface FunctionSignature {
  name: string;
  argTypes: ValueType[];
  /** 0: exactly argTypes; n > 0: up to n more of the last type; -1: any number more. */
  variadic: number;
  returnType: ValueType;
  experimental?: boolean;
}

export interface NumberLiteral {
  kind: 'number';
  value: number;
  pos: PositionRange;
}

export interface StringLiteral {
  kind: 'string';
  value: string;
  pos: PositionRange;
}

/**
 * An arithmetic duration (Prometheus' experimental promql-duration-expr) in a
 * range `[1h/2]`, a subquery `[step()*10:step()]` or an offset
 * `offset min_of(step(), 1m)`, in seconds. The engine resolves it per query
 * (step() and range() depend on it) into the node's rangeMs/stepMs/offsetMs.
 */
export type DurationExpr = (
  | { kind: 'literal'; seconds: number; /** Written as a duration (`5m`) rather than a number. */ duration: boolean }
  | { kind: 'step' }
  | { kind: 'range' }
  | { kind: 'neg'; expr: DurationExpr }
  | { kind: 'binary'; op: '+' | '-' | '*' | '/' | '%' | '^'; lhs: DurationExpr; rhs: DurationExpr }
  | { kind: 'min_of' | 'max_of'; lhs: DurationExpr; rhs: DurationExpr }
) & { /** Written in parentheses. */ wrapped?: boolean };

export interface VectorSelector {
  kind: 'vectorSelector';
  /** The metric name written before the braces, if any. */
  name?: string;
  /** All matchers; a name written before the braces is the last `__name__=` one. */
  matchers: Matcher[];
  /** The `offset` as written, in ms (negative offsets look ahead). */
  offsetMs: number;
  /** `@ <timestamp>` in ms. */
  atMs?: number;
  /** `@ start()` / `@ end()`. */
  atStartOrEnd?: 'start' | 'end';
  /** An offset written as a duration expression; offsetMs holds its value once the engine resolved it. */
  offsetExpr?: DurationExpr;
  /**
   * Extended range selectors (Prometheus' experimental anchored/smoothed
   * modifiers): a range that also takes the last sample before its start
   * (anchored), or values interpolated at both of its ends (smoothed; on an
   * instant selector, the value interpolated at the evaluation time).
   */
  anchored?: boolean;
  smoothed?: boolean;
  pos: PositionRange;
}

export interface MatrixSelector {
  kind: 'matrixSelector';
  /** Always a VectorSelector once parsing succeeded. */
  vectorSelector: Expr;
  rangeMs: number;
  /** A range written as a duration expression; rangeMs holds its value once the engine resolved it. */
  rangeExpr?: DurationExpr;
  pos: PositionRange;
}

export interface SubqueryExpr {
  kind: 'subquery';
  expr: Expr;
  rangeMs: number;
  /** 0 when omitted (`[1h:]`): the engine's default step applies. */
  stepMs: number;
  offsetMs: number;
  atMs?: number;
  atStartOrEnd?: 'start' | 'end';
  /** Duration expressions for the range, step and offset (see DurationExpr). */
  rangeExpr?: DurationExpr;
  stepExpr?: DurationExpr;
  offsetExpr?: DurationExpr;
  pos: PositionRange;
}

export interface AggregateExpr {
  kind: 'aggregate';
  op: AggregateOp;
  expr: Expr;
  /** k of topk/bottomk/limitk, q of quantile, the label of count_values, the ratio of limit_ratio. */
  param?: Expr;
  grouping: string[];
  without: boolean;
  pos: PositionRange;
}

export interface BinaryExpr {
  kind: 'binary';
  op: BinaryOp;
  lhs: Expr;
  rhs: Expr;
  returnBool: boolean;
  /** Only for operations between two instant vectors. */
  matching?: VectorMatching;
  /** Position of the operator token, for errors about it. */
  opPos: number;
  pos: PositionRange;
}

export interface UnaryExpr {
  kind: 'unary';
  op: '+' | '-';
  expr: Expr;
  pos: PositionRange;
}

export interface ParenExpr {
  kind: 'paren';
  expr: Expr;
  pos: PositionRange;
}

export interface Call {
  kind: 'call';
  func: FunctionSignature;
  args: Expr[];
  pos: PositionRange;
}

export type Expr = NumberLiteral | StringLiteral | VectorSelector | MatrixSelector | SubqueryExpr | AggregateExpr | BinaryExpr | UnaryExpr | ParenExpr | Call;

/** The value type an expression evaluates to (Prometheus' Expr.Type()). */
export function exprType(e: Expr): ValueType {
  switch (e.kind) {
    case 'number':
      return 'scalar';
    case 'string':
      return 'string';
    case 'vectorSelector':
    case 'aggregate':
      return 'vector';
    case 'matrixSelector':
    case 'subquery':
      return 'matrix';
    case 'binary':
      return exprType(e.lhs) === 'scalar' && exprType(e.rhs) === 'scalar' ? 'scalar' : 'vector';
    case 'unary':
    case 'paren':
      return exprType(e.expr);
    case 'call':
      return e.func.returnType;
  }
}

/** The direct children of a node, in evaluation order. */
export function children(e: Expr): Expr[] {
  switch (e.kind) {
    case 'number':
    case 'string':
    case 'vectorSelector':
      return [];
    case 'matrixSelector':
      return [e.vectorSelector];
    case 'subquery':
    case 'unary':
    case 'paren':
      return [e.expr];
    case 'aggregate':
      return e.param ? [e.param, e.expr] : [e.expr];
    case 'binary':
      return [e.lhs, e.rhs];
    case 'call':
      return e.args;
  }
}

/** Calls visit on every node, parents before children, with the path of ancestors. */
export function walk(e: Expr, visit: (node: Expr, path: readonly Expr[]) => void, path: Expr[] = []): void {
  visit(e, path);
  path.push(e);
  for (const c of children(e)) walk(c, visit, path);
  path.pop();
}

/** Removes any parentheses around an expression. */
export function unwrapParens(e: Expr): Expr {
  while (e.kind === 'paren') e = e.expr;
  return e;
}

function formatModifiers(
  offsetMs: number,
  atMs?: number,
  atStartOrEnd?: 'start' | 'end',
  offsetExpr?: DurationExpr,
  extended?: { anchored?: boolean; smoothed?: boolean },
): string {
  let s = '';
  if (atMs !== undefined) s += ` @ ${formatGoFloat(atMs / 1000)}`;
  else if (atStartOrEnd) s += ` @ ${atStartOrEnd}()`;
  if (offsetExpr) s += ` offset ${formatDurationExpr(offsetExpr)}`;
  else if (offsetMs > 0) s += ` offset ${formatDuration(offsetMs)}`;
  else if (offsetMs < 0) s += ` offset -${formatDuration(-offsetMs)}`;
  if (extended?.anchored) s += ' anchored';
  if (extended?.smoothed) s += ' smoothed';
  return s;
}

/** Prints a duration expression as Prometheus' DurationExpr.String() does. */
export function formatDurationExpr(d: DurationExpr): string {
  let s: string;
  switch (d.kind) {
    case 'literal':
      if (!d.duration) s = formatGoFloat(d.seconds);
      else s = (d.seconds < 0 ? '-' : '') + formatDuration(Math.round(Math.abs(d.seconds) * 1000));
      break;
    case 'step':
    case 'range':
      s = `${d.kind}()`;
      break;
    case 'neg':
      s = `-${formatDurationExpr(d.expr)}`;
      break;
    case 'binary':
      s = `${formatDurationExpr(d.lhs)} ${d.op} ${formatDurationExpr(d.rhs)}`;
      break;
    case 'min_of':
    case 'max_of':
      s = `${d.kind}(${formatDurationExpr(d.lhs)}, ${formatDurationExpr(d.rhs)})`;
      break;
  }
  return d.wrapped ? `(${s})` : s;
}

function formatRange(ms: number, expr: DurationExpr | undefined): string {
  return expr ? formatDurationExpr(expr) : formatDuration(ms);
}

function formatLabelName(name: string): string {
  return /^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name) ? name : goQuote(name);
}

function formatMatcher(m: Matcher): string {
  return `${formatLabelName(m.name)}${m.type}${goQuote(m.value)}`;
}

function formatGrouping(labels: string[]): string {
  return '(' + labels.map(formatLabelName).join(', ') + ')';
}

function formatFill(m: VectorMatching): string {
  const { fillLeft: l, fillRight: r } = m;
  if (l === undefined && r === undefined) return '';
  if (l !== undefined && r !== undefined && Object.is(l, r)) return ` fill(${formatGoFloat(l)})`;
  let s = '';
  if (l !== undefined) s += ` fill_left(${formatGoFloat(l)})`;
  if (r !== undefined) s += ` fill_right(${formatGoFloat(r)})`;
  return s;
}

/** Prints an expression as Prometheus' String() does (canonical spacing, no added parentheses). */
export function formatExpr(e: Expr): string {
  switch (e.kind) {
    case 'number':
      return formatGoFloat(e.value);
    case 'string':
      return goQuote(e.value);
    case 'vectorSelector': {
      const matchers = e.name !== undefined ? e.matchers.slice(0, -1) : e.matchers;
      let s = e.name ?? '';
      if (matchers.length > 0 || e.name === undefined) s += '{' + matchers.map(formatMatcher).join(', ') + '}';
      return s + formatModifiers(e.offsetMs, e.atMs, e.atStartOrEnd, e.offsetExpr, e);
    }
    case 'matrixSelector': {
      const vs = e.vectorSelector;
      const range = formatRange(e.rangeMs, e.rangeExpr);
      if (vs.kind !== 'vectorSelector') return `${formatExpr(vs)}[${range}]`;
      const bare = formatExpr({ ...vs, offsetMs: 0, atMs: undefined, atStartOrEnd: undefined, offsetExpr: undefined, anchored: false, smoothed: false });
      return `${bare}[${range}]${formatModifiers(vs.offsetMs, vs.atMs, vs.atStartOrEnd, vs.offsetExpr, vs)}`;
    }
    case 'subquery': {
      const step = e.stepExpr ? formatDurationExpr(e.stepExpr) : e.stepMs ? formatDuration(e.stepMs) : '';
      return `${formatExpr(e.expr)}[${formatRange(e.rangeMs, e.rangeExpr)}:${step}]` + formatModifiers(e.offsetMs, e.atMs, e.atStartOrEnd, e.offsetExpr);
    }
    case 'aggregate': {
      let s = e.op;
      if (e.without) s += ` without ${formatGrouping(e.grouping)} `;
      else if (e.grouping.length > 0) s += ` by ${formatGrouping(e.grouping)} `;
      s += '(' + (e.param ? formatExpr(e.param) + ', ' : '') + formatExpr(e.expr) + ')';
      return s;
    }
    case 'binary': {
      let mods = '';
      if (e.returnBool) mods += ' bool';
      const m = e.matching;
      if (m) {
        if (m.on || m.matchingLabels.length > 0) mods += ` ${m.on ? 'on' : 'ignoring'}${formatGrouping(m.matchingLabels)}`;
        if (m.card === 'many-to-one' || m.card === 'one-to-many') {
          mods += ` ${m.card === 'many-to-one' ? 'group_left' : 'group_right'}`;
          if (m.include.length > 0) mods += formatGrouping(m.include);
        }
        mods += formatFill(m);
      }
      return `${formatExpr(e.lhs)} ${e.op}${mods} ${formatExpr(e.rhs)}`;
    }
    case 'unary':
      return `${e.op}${formatExpr(e.expr)}`;
    case 'paren':
      return `(${formatExpr(e.expr)})`;
    case 'call':
      return `${e.func.name}(${e.args.map(formatExpr).join(', ')})`;
  }
}
