// GET/POST /api/v1/parse_query: the parsed expression as the JSON tree
// Prometheus' API returns for its UI (web/api/v1 translateAST): same node
// types, field names, durations in ms and matcher type strings.

import type { Matcher } from '@strata/model';
import type { Expr } from '@strata/promql';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export function translateAst(e: Expr): Json {
  switch (e.kind) {
    case 'aggregate':
      return {
        type: 'aggregation',
        op: e.op,
        expr: translateAst(e.expr),
        param: e.param ? translateAst(e.param) : null,
        grouping: [...e.grouping],
        without: e.without,
      };
    case 'binary':
      return { type: 'binaryExpr', op: e.op, lhs: translateAst(e.lhs), rhs: translateAst(e.rhs), matching: vectorMatching(e), bool: e.returnBool };
    case 'call':
      return {
        type: 'call',
        func: { name: e.func.name, argTypes: [...e.func.argTypes], variadic: e.func.variadic, returnType: e.func.returnType },
        args: e.args.map(translateAst),
      };
    case 'matrixSelector': {
      const vs = e.vectorSelector;
      if (vs.kind !== 'vectorSelector') throw new Error('matrix selector over a non-selector');
      return {
        type: 'matrixSelector',
        name: vs.name ?? '',
        range: e.rangeMs,
        offset: vs.offsetMs,
        matchers: matchers(vs.matchers),
        timestamp: vs.atMs ?? null,
        startOrEnd: vs.atStartOrEnd ?? null,
        anchored: vs.anchored ?? false,
        smoothed: vs.smoothed ?? false,
      };
    }
    case 'subquery':
      return {
        type: 'subquery',
        expr: translateAst(e.expr),
        range: e.rangeMs,
        offset: e.offsetMs,
        step: e.stepMs,
        timestamp: e.atMs ?? null,
        startOrEnd: e.atStartOrEnd ?? null,
        alignEvalTime: false,
      };
    case 'number':
      return { type: 'numberLiteral', val: formatFloat(e.value) };
    case 'paren':
      return { type: 'parenExpr', expr: translateAst(e.expr) };
    case 'string':
      return { type: 'stringLiteral', val: e.value };
    case 'unary':
      return { type: 'unaryExpr', op: e.op, expr: translateAst(e.expr) };
    case 'vectorSelector':
      return {
        type: 'vectorSelector',
        name: e.name ?? '',
        offset: e.offsetMs,
        matchers: matchers(e.matchers),
        timestamp: e.atMs ?? null,
        startOrEnd: e.atStartOrEnd ?? null,
        anchored: e.anchored ?? false,
        smoothed: e.smoothed ?? false,
      };
  }
}

function vectorMatching(e: Extract<Expr, { kind: 'binary' }>): Json {
  const m = e.matching;
  if (!m) return null;
  return {
    card: m.card,
    labels: [...m.matchingLabels],
    on: m.on,
    include: [...m.include],
    fillValues: { lhs: m.fillLeft ?? null, rhs: m.fillRight ?? null },
  };
}

function matchers(ms: Matcher[]): Json {
  return ms.map((m) => ({ name: m.name, value: m.value, type: m.type }));
}

/** Go's strconv.FormatFloat(v, 'f', -1, 64): shortest round-trip digits, never an exponent. */
function formatFloat(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  const s = String(v);
  if (!s.includes('e')) return s;
  const [mant, expStr] = s.split('e');
  const exp = Number(expStr);
  const neg = mant.startsWith('-');
  const digits = mant.replace('-', '').replace('.', '');
  const point = mant.replace('-', '').indexOf('.');
  const intLen = (point < 0 ? digits.length : point) + exp;
  let out: string;
  if (intLen <= 0) out = '0.' + '0'.repeat(-intLen) + digits;
  else if (intLen >= digits.length) out = digits + '0'.repeat(intLen - digits.length);
  else out = digits.slice(0, intLen) + '.' + digits.slice(intLen);
  return (neg ? '-' : '') + out;
}
