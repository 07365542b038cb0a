// Prometheus' prettier (Expr.Pretty), used by /api/v1/format_query: an
// expression that fits in 100 characters prints on one line as formatExpr
// does; a longer one is split at its top-level operators and arguments, two
// spaces per nesting level.

import type { Expr } from './ast.ts';
import { formatExpr } from './ast.ts';

const MAX_LINE = 100;

const indent = (level: number): string => '  '.repeat(level);

function needsSplit(e: Expr): boolean {
  return formatExpr(e).length > MAX_LINE;
}

function groupingSuffix(labels: string[]): string {
  return '(' + labels.map((l) => (/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(l) ? l : JSON.stringify(l))).join(', ') + ')';
}

/** Prints an expression the way Prometheus' Pretty(0) does. */
export function prettyExpr(e: Expr, level = 0): string {
  switch (e.kind) {
    case 'aggregate': {
      if (!needsSplit(e)) return indent(level) + formatExpr(e);
      let op: string = e.op;
      if (e.without) op += ` without ${groupingSuffix(e.grouping)} `;
      else if (e.grouping.length > 0) op += ` by ${groupingSuffix(e.grouping)} `;
      let s = indent(level) + op + '(\n';
      if (e.param) s += prettyExpr(e.param, level + 1) + ',\n';
      return s + prettyExpr(e.expr, level + 1) + '\n' + indent(level) + ')';
    }
    case 'binary': {
      if (!needsSplit(e)) return indent(level) + formatExpr(e);
      // The operator line is what formatExpr prints between the operands.
      const lhsText = formatExpr(e.lhs);
      const rhsText = formatExpr(e.rhs);
      const full = formatExpr(e);
      const opText = full.slice(lhsText.length + 1, full.length - rhsText.length - 1);
      return `${prettyExpr(e.lhs, level + 1)}\n${indent(level)}${opText}\n${prettyExpr(e.rhs, level + 1)}`;
    }
    case 'call': {
      if (!needsSplit(e)) return indent(level) + formatExpr(e);
      const args = e.args.map((a) => prettyExpr(a, level + 1)).join(',\n');
      return `${indent(level)}${e.func.name}(\n${args}\n${indent(level)})`;
    }
    case 'paren':
      if (!needsSplit(e)) return indent(level) + formatExpr(e);
      return `${indent(level)}(\n${prettyExpr(e.expr, level + 1)}\n${indent(level)})`;
    case 'subquery': {
      if (!needsSplit(e)) return formatExpr(e);
      const inner = formatExpr(e.expr);
      return prettyExpr(e.expr, level) + formatExpr(e).slice(inner.length);
    }
    case 'unary':
      return `${indent(level)}${e.op}${prettyExpr(e.expr, level).trim()}`;
    default:
      return indent(level) + formatExpr(e);
  }
}
