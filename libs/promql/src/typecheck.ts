// Type checking of a parsed expression, as Prometheus' checkAST does it: the
// argument and operand types, the rules on bool, vector matching and set
// operators, and non-empty selectors. Reports every error, in Prometheus' order.

import type { Matcher } from '@strata/model';
import { METRIC_NAME, matchesEmpty } from '@strata/model';
import type { BinaryExpr, Call, Expr, ValueType, VectorSelector } from './ast.ts';
import { documentedType, exprType, isComparisonOp, isSetOp, isTrimOp } from './ast.ts';
import type { PositionRange } from './errors.ts';
import { goQuote } from './go-compat.ts';

export interface TypeCheckError {
  pos: PositionRange;
  msg: string;
}

/** The type errors of an expression, first one first; sets set operators' cardinality to many-to-many. */
export function typeCheck(e: Expr): TypeCheckError[] {
  const checker = new TypeChecker();
  checker.checkAST(e);
  return checker.errors;
}

class TypeChecker {
  readonly errors: TypeCheckError[] = [];
  /** The label selectors of info(), which may match everything. */
  private readonly labelSelectors = new Set<Expr>();

  private addError(pos: PositionRange, msg: string): void {
    this.errors.push({ pos, msg });
  }

  private expectType(e: Expr, want: ValueType, context: string): void {
    const got = this.checkAST(e);
    if (got !== want) {
      this.addError(e.pos, `expected type ${documentedType(want)} in ${context}, got ${documentedType(got)}`);
    }
  }

  checkAST(e: Expr): ValueType {
    const type = exprType(e);
    switch (e.kind) {
      case 'aggregate':
        this.expectType(e.expr, 'vector', 'aggregation expression');
        if (e.op === 'topk' || e.op === 'bottomk' || e.op === 'quantile' || e.op === 'limitk' || e.op === 'limit_ratio') {
          this.expectType(e.param!, 'scalar', 'aggregation parameter');
        }
        if (e.op === 'count_values') this.expectType(e.param!, 'string', 'aggregation parameter');
        break;
      case 'binary':
        this.checkBinary(e);
        break;
      case 'call':
        this.checkCall(e);
        break;
      case 'paren':
        this.checkAST(e.expr);
        break;
      case 'unary': {
        const t = this.checkAST(e.expr);
        if (t !== 'scalar' && t !== 'vector') {
          this.addError(e.pos, `unary expression only allowed on expressions of type scalar or instant vector, got ${goQuote(documentedType(t))}`);
        }
        break;
      }
      case 'subquery': {
        const t = this.checkAST(e.expr);
        if (t !== 'vector') this.addError(e.pos, `subquery is only allowed on instant vector, got ${t} instead`);
        break;
      }
      case 'matrixSelector':
        this.checkAST(e.vectorSelector);
        break;
      case 'vectorSelector':
        this.checkVectorSelector(e);
        break;
      case 'number':
      case 'string':
        break;
    }
    return type;
  }

  private checkVectorSelector(e: VectorSelector): void {
    if (this.labelSelectors.has(e)) return;
    if (e.name !== undefined) {
      for (const m of e.matchers.slice(0, -1)) {
        if (m.name === METRIC_NAME) {
          this.addError(e.pos, `metric name must not be set twice: ${goQuote(e.name)} or ${goQuote(m.value)}`);
        }
      }
      return; // The name is a non-empty matcher.
    }
    const notEmpty = e.matchers.some((m) => {
      try {
        return !matchesEmpty(m);
      } catch {
        return true;
      }
    });
    if (!notEmpty) this.addError(e.pos, 'vector selector must contain at least one non-empty matcher');
  }

  private checkBinary(e: BinaryExpr): void {
    const lt = this.checkAST(e.lhs);
    const rt = this.checkAST(e.rhs);
    const opRange = { start: e.opPos, end: e.opPos + 1 };
    const m = e.matching!;
    if (e.returnBool && !isComparisonOp(e.op)) this.addError(opRange, 'bool modifier can only be used on comparison operators');
    if (isComparisonOp(e.op) && !e.returnBool && lt === 'scalar' && rt === 'scalar') {
      this.addError(opRange, 'comparisons between scalars must use BOOL modifier');
    }
    if (isSetOp(e.op) && m.card === 'one-to-one') m.card = 'many-to-many';
    if (m.on) {
      for (const l of m.matchingLabels) {
        if (m.include.includes(l)) this.addError(opRange, `label ${goQuote(l)} must not occur in ON and GROUP clause at once`);
      }
    }
    if (lt !== 'scalar' && lt !== 'vector') this.addError(e.lhs.pos, 'binary expression must contain only scalar and instant vector types');
    if (rt !== 'scalar' && rt !== 'vector') this.addError(e.rhs.pos, 'binary expression must contain only scalar and instant vector types');
    if (isTrimOp(e.op) && (lt !== 'vector' || (rt !== 'scalar' && rt !== 'vector'))) {
      this.addError(opRange, `operator ${goQuote(e.op)} needs an instant vector of histograms on the left and a scalar or instant vector on the right`);
    }
    const fill = m.fillLeft !== undefined || m.fillRight !== undefined;
    if (fill && isSetOp(e.op)) this.addError(e.pos, `fill modifiers are not allowed for ${goQuote(e.op)} operation`);
    if (lt !== 'vector' || rt !== 'vector') {
      if (m.matchingLabels.length > 0) this.addError(e.pos, 'vector matching only allowed between instant vectors');
      if (fill) this.addError(e.pos, 'fill modifiers only allowed between instant vectors');
      e.matching = undefined;
    } else if (isSetOp(e.op)) {
      if (m.card === 'one-to-many' || m.card === 'many-to-one') this.addError(e.pos, `no grouping allowed for ${goQuote(e.op)} operation`);
      if (m.card !== 'many-to-many') this.addError(e.pos, 'set operations must always be many-to-many');
    }
    if ((lt === 'scalar' || rt === 'scalar') && isSetOp(e.op)) {
      this.addError(e.pos, `set operator ${goQuote(e.op)} not allowed in binary scalar expression`);
    }
  }

  private checkCall(e: Call): void {
    const f = e.func;
    if (f.name === 'info' && e.args.length > 1) {
      const sel = e.args[1];
      if (sel.kind === 'vectorSelector') this.labelSelectors.add(sel);
      else this.addError(sel.pos, `expected label selectors as the second argument to "info" function, got ${documentedType(exprType(sel))}`);
    }
    const nargs = f.argTypes.length;
    if (f.variadic === 0) {
      if (nargs !== e.args.length) {
        this.addError(e.pos, `expected ${nargs} argument(s) in call to ${goQuote(f.name)}, got ${e.args.length}`);
      }
    } else {
      const na = nargs - 1;
      if (na > e.args.length) {
        this.addError(e.pos, `expected at least ${na} argument(s) in call to ${goQuote(f.name)}, got ${e.args.length}`);
      } else if (f.variadic > 0 && na + f.variadic < e.args.length) {
        this.addError(e.pos, `expected at most ${na + f.variadic} argument(s) in call to ${goQuote(f.name)}, got ${e.args.length}`);
      }
    }
    for (let i = 0; i < e.args.length; i++) {
      let idx = i;
      if (i >= nargs) {
        if (f.variadic === 0) break;
        idx = nargs - 1;
      }
      const t = this.checkAST(e.args[i]);
      if (t !== f.argTypes[idx]) {
        this.addError(e.args[i].pos, `expected type ${documentedType(f.argTypes[idx])} in call to function ${goQuote(f.name)}, got ${documentedType(t)}`);
      }
    }
  }
}
