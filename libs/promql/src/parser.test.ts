import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { BinaryExpr, Expr } from './ast.ts';
import { formatExpr } from './ast.ts';
import { PromQLParseError } from './errors.ts';
import { parseExpr, parseSelector } from './parser.ts';

/** Prints an expression fully parenthesised, to make precedence visible. */
function shape(e: Expr): string {
  switch (e.kind) {
    case 'binary':
      return `(${shape(e.lhs)} ${e.op}${e.returnBool ? ' bool' : ''} ${shape(e.rhs)})`;
    case 'unary':
      return `(${e.op}${shape(e.expr)})`;
    case 'paren':
      return `[${shape(e.expr)}]`;
    case 'number':
      return String(e.value);
    case 'vectorSelector':
      return e.name ?? formatExpr(e);
    default:
      return formatExpr(e);
  }
}

function parseError(q: string): PromQLParseError {
  try {
    parseExpr(q);
  } catch (err) {
    assert.ok(err instanceof PromQLParseError, `expected PromQLParseError for ${q}, got ${err}`);
    return err;
  }
  assert.fail(`expected ${JSON.stringify(q)} not to parse`);
}

describe('parser: literals', () => {
  const cases: [string, number][] = [
    ['1', 1],
    ['12.34e6', 12340000],
    ['12.34e+6', 12340000],
    ['-0.2e-6', -0.0000002],
    ['.2', 0.2],
    ['2.', 2],
    ['0x1F', 31],
    ['0X1f', 31],
    ['010', 8], // Go's ParseInt with base 0: octal.
    ['1_000', 1000],
    ['Inf', Infinity],
    ['+inF', Infinity],
    ['-Inf', -Infinity],
    ['5m', 300], // A duration is a number of seconds.
    ['1h30m', 5400],
    ['500ms', 0.5],
  ];
  for (const [q, v] of cases) {
    it(`${q} is ${v}`, () => {
      const e = parseExpr(q);
      assert.equal(e.kind, 'number');
      assert.equal(e.kind === 'number' && e.value, v);
    });
  }

  it('NaN', () => {
    const e = parseExpr('nan');
    assert.ok(e.kind === 'number' && Number.isNaN(e.value));
  });

  it('strings with escapes in all three quotings', () => {
    const cases: [string, string][] = [
      [`"a\\nb\\t\\"c\\""`, 'a\nb\t"c"'],
      [`'it\\'s'`, "it's"],
      ['`raw\\n`', 'raw\\n'],
      [`"\\u00e9\\x41\\101"`, 'éAA'],
      [`"\\xc3\\xa9"`, 'é'], // \x escapes are bytes, as in Go.
    ];
    for (const [q, v] of cases) {
      const e = parseExpr(q);
      assert.equal(e.kind, 'string');
      assert.equal(e.kind === 'string' && e.value, v, q);
    }
  });
});

describe('parser: selectors', () => {
  it('matchers of all four types, name matcher last', () => {
    const e = parseExpr('metric{a="b",c!="d",e=~"f.*",g!~"h"}');
    assert.equal(e.kind, 'vectorSelector');
    if (e.kind !== 'vectorSelector') return;
    assert.equal(e.name, 'metric');
    assert.deepEqual(e.matchers, [
      { type: '=', name: 'a', value: 'b' },
      { type: '!=', name: 'c', value: 'd' },
      { type: '=~', name: 'e', value: 'f.*' },
      { type: '!~', name: 'g', value: 'h' },
      { type: '=', name: '__name__', value: 'metric' },
    ]);
  });

  it('selectors without a name, with quoted names, and trailing commas', () => {
    assert.deepEqual(parseSelector('{__name__=~"x.*"}'), [{ type: '=~', name: '__name__', value: 'x.*' }]);
    assert.deepEqual(parseSelector('{"my.metric", "a.b"="c",}'), [
      { type: '=', name: '__name__', value: 'my.metric' },
      { type: '=', name: 'a.b', value: 'c' },
    ]);
    // Keywords are metric names where a selector is expected.
    assert.equal(formatExpr(parseExpr('sum + by')), 'sum + by');
    assert.equal(formatExpr(parseExpr('x:y:z')), 'x:y:z');
  });

  it('range selectors, offsets (negative too) and @', () => {
    assert.equal(formatExpr(parseExpr('foo[5m]')), 'foo[5m]');
    assert.equal(formatExpr(parseExpr('foo[90]')), 'foo[1m30s]');
    assert.equal(formatExpr(parseExpr('foo offset 1h')), 'foo offset 1h');
    assert.equal(formatExpr(parseExpr('foo offset -5m')), 'foo offset -5m');
    assert.equal(formatExpr(parseExpr('foo[5m] offset 1w')), 'foo[5m] offset 1w');
    assert.equal(formatExpr(parseExpr('foo @ 100 offset 1m')), 'foo @ 100 offset 1m');
    assert.equal(formatExpr(parseExpr('rate(foo[5m])[1h:1m]')), 'rate(foo[5m])[1h:1m]');
    const e = parseExpr('foo[1y] offset -2d');
    assert.ok(e.kind === 'matrixSelector' && e.vectorSelector.kind === 'vectorSelector');
    if (e.kind === 'matrixSelector' && e.vectorSelector.kind === 'vectorSelector') {
      assert.equal(e.rangeMs, 365 * 86_400_000);
      assert.equal(e.vectorSelector.offsetMs, -2 * 86_400_000);
    }
  });
});

describe('parser: operators', () => {
  const cases: [string, string][] = [
    ['a + b * c', '(a + (b * c))'],
    ['a * b + c', '((a * b) + c)'],
    ['a - b - c', '((a - b) - c)'],
    ['a ^ b ^ c', '(a ^ (b ^ c))'], // ^ is right-associative.
    ['a / b % c atan2 d', '(((a / b) % c) atan2 d)'],
    ['a or b and c unless d', '(a or ((b and c) unless d))'],
    ['a == b + c', '(a == (b + c))'],
    ['a > b or c < d', '((a > b) or (c < d))'],
    ['a and b == c', '(a and (b == c))'],
    ['-a ^ b', '(-(a ^ b))'], // Unary minus binds like *, looser than ^.
    ['-a * b', '((-a) * b)'],
    ['-2 ^ 2', '(-(2 ^ 2))'],
    ['- - - 1', '-1'],
    ['1 - -1', '(1 - -1)'],
    ['(a + b) * c', '([(a + b)] * c)'],
    ['a > bool b', '(a > bool b)'],
  ];
  for (const [q, want] of cases) {
    it(`${q} parses as ${want}`, () => assert.equal(shape(parseExpr(q)), want));
  }

  it('vector matching modifiers', () => {
    const e = parseExpr('a * on(x, y) group_left(z) b') as BinaryExpr;
    assert.deepEqual(e.matching, { card: 'many-to-one', matchingLabels: ['x', 'y'], on: true, include: ['z'] });
    const f = parseExpr('a / ignoring(x) group_right b') as BinaryExpr;
    assert.deepEqual(f.matching, { card: 'one-to-many', matchingLabels: ['x'], on: false, include: [] });
    const g = parseExpr('a and on() b') as BinaryExpr;
    assert.equal(g.matching?.card, 'many-to-many');
    const h = parseExpr('a == bool on(x) b') as BinaryExpr;
    assert.equal(h.returnBool, true);
    assert.equal(h.matching?.on, true);
    // Between a scalar and a vector there is no matching.
    assert.equal((parseExpr('a + 1') as BinaryExpr).matching, undefined);
  });
});

describe('parser: functions and aggregations', () => {
  it('aggregations with the modifier before or after, and parameters', () => {
    assert.equal(formatExpr(parseExpr('sum by (a, b) (rate(x[5m]))')), 'sum by (a, b) (rate(x[5m]))');
    assert.equal(formatExpr(parseExpr('sum(x) by (a)')), 'sum by (a) (x)');
    assert.equal(formatExpr(parseExpr('avg without (a) (x)')), 'avg without (a) (x)');
    assert.equal(formatExpr(parseExpr('SUM(x) WITHOUT (job)')), 'sum without (job) (x)');
    assert.equal(formatExpr(parseExpr('topk(3, x)')), 'topk(3, x)');
    assert.equal(formatExpr(parseExpr('quantile(0.9, x)')), 'quantile(0.9, x)');
    assert.equal(formatExpr(parseExpr('count_values("v", x)')), 'count_values("v", x)');
    assert.equal(formatExpr(parseExpr('sum by (by, sum, "x.y",) (x)')), 'sum by (by, sum, "x.y") (x)');
  });

  it('function calls', () => {
    const e = parseExpr('label_replace(up, "dst", "$1", "src", "(.*)")');
    assert.equal(e.kind, 'call');
    assert.equal(e.kind === 'call' && e.args.length, 5);
    assert.equal(formatExpr(parseExpr('round(x, 0.5)')), 'round(x, 0.5)');
    assert.equal(formatExpr(parseExpr('time()')), 'time()');
  });
});

describe('parser: errors', () => {
  const cases: [string, string][] = [
    ['metric{label=}', '1:14: parse error: unexpected "}" in label matching, expected string'],
    ['metric{label}', '1:13: parse error: unexpected "}" in label matching, expected label matching operator'],
    ['metric{a="b" c="d"}', '1:14: parse error: unexpected identifier "c" in label matching, expected "," or "}"'],
    ['metric{,}', '1:8: parse error: unexpected "," in label matching, expected identifier or "}"'],
    ['foo{a="b"', '1:10: parse error: unexpected end of input inside braces'],
    ['{}', '1:1: parse error: vector selector must contain at least one non-empty matcher'],
    ['{a=""}', '1:1: parse error: vector selector must contain at least one non-empty matcher'],
    ['{a=~".*"}', '1:1: parse error: vector selector must contain at least one non-empty matcher'],
    ['foo{__name__="bar"}', '1:1: parse error: metric name must not be set twice: "foo" or "bar"'],
    ['sum(', '1:5: parse error: unclosed left parenthesis'],
    // Go's lexer reports this one after the parenthesis.
    ['foo)', "1:5: parse error: unexpected right parenthesis ')'"],
    ['foo +', '1:6: parse error: unexpected end of input'],
    ['foo bar', '1:5: parse error: unexpected identifier "bar"'],
    ['sum(foo bar)', '1:9: parse error: unexpected identifier "bar" in aggregation'],
    ['sum by foo (x)', '1:8: parse error: unexpected identifier "foo" in grouping opts, expected "("'],
    ['sum by (a b) (x)', '1:11: parse error: unexpected identifier "b" in grouping opts, expected "," or ")"'],
    ['sum()', '1:1: parse error: no arguments for aggregate expression provided'],
    ['topk(x)', '1:1: parse error: wrong number of arguments for aggregate expression provided, expected 2, got 1'],
    ['rate(foo)', '1:6: parse error: expected type range vector in call to function "rate", got instant vector'],
    ['rate(foo[5m], )', '1:13: parse error: trailing commas not allowed in function call args'],
    ['nofunc(foo)', '1:1: parse error: unknown function with name "nofunc"'],
    ['abs()', '1:1: parse error: expected 1 argument(s) in call to "abs", got 0'],
    ['1 > 2', '1:3: parse error: comparisons between scalars must use BOOL modifier'],
    ['foo + bool bar', '1:5: parse error: bool modifier can only be used on comparison operators'],
    ['1 and foo', '1:1: parse error: set operator "and" not allowed in binary scalar expression'],
    ['foo[5m] + 1', '1:1: parse error: binary expression must contain only scalar and instant vector types'],
    ['foo offset', '1:11: parse error: unexpected end of input in offset, expected number, duration, step(), or range()'],
    ['foo[]', '1:5: parse error: unexpected "]" in subquery or range selector, expected number, duration, step(), or range()'],
    ['foo[5m x]', "1:8: parse error: unexpected character: 'x', expected ':'"],
    ['foo[0s]', '1:5: parse error: duration must be greater than 0'],
    ['foo offset 5m [5m]', '1:15: parse error: no offset modifiers allowed before range'],
    ['sum(foo) offset 5m', '1:1: parse error: offset modifier must be preceded by an instant vector selector or range vector selector or a subquery'],
    ['foo[5hs]', '1:5: parse error: unknown unit "hs" in duration "5hs"'],
    ['1ms5m', '1:1: parse error: not a valid duration string: "1ms5m"'],
    ['"unterminated', '1:1: parse error: unterminated quoted string'],
    ['foo{a="\\z"}', "1:7: parse error: unknown escape sequence U+007A 'z'"],
    ['-"foo"', '1:1: parse error: unary expression only allowed on expressions of type scalar or instant vector, got "string"'],
    ['', 'unknown position: parse error: no expression found in input'],
    ['  # only a comment', '1:1: parse error: no expression found in input'],
    ['foo{a=~"(unclosed"}', '1:5: parse error: error parsing regexp: missing closing ): `(unclosed`'],
  ];
  for (const [q, want] of cases) {
    it(JSON.stringify(q), () => assert.equal(parseError(q).message, want));
  }

  it('reports line and byte column on later lines', () => {
    const err = parseError('sum(\n  rate(foo[5m]) +\n)');
    assert.equal(err.message, '3:1: parse error: unexpected ")" in aggregation');
    assert.equal(err.line, 3);
    assert.equal(err.column, 1);
    // Columns count bytes, as Go does: "é" is two.
    assert.equal(parseError('{a="é"} +').message, '1:11: parse error: unexpected end of input');
  });

  it('is a bad-input error (the API edge answers bad_data 400)', () => {
    const err = parseError('foo{');
    assert.equal(err.kind, 'bad-input');
    assert.equal(err.code, 'err-strata-promql-parse');
  });

  it('accepts RE2 syntax that JS lacks, such as inline flags', () => {
    assert.doesNotThrow(() => parseExpr('foo{a=~"(?i:abc)", b=~"(?i)x.*", c=~"[[:alpha:]]+"}'));
  });

  it('gates experimental functions', () => {
    assert.equal(parseError('first_over_time(x[5m])').message, '1:1: parse error: function "first_over_time" is not enabled');
    assert.doesNotThrow(() => parseExpr('first_over_time(x[5m])', { enableExperimentalFunctions: true }));
  });
});

describe('parser: duration expressions', () => {
  const on = { enableDurationExpressions: true };
  const parse = (q: string) => parseExpr(q, on);

  it('keeps arithmetic, step(), range() and min_of/max_of in ranges for the engine, and prints them', () => {
    const ms = parse('rate(x[2m*(10+5)])');
    assert.equal(formatExpr(ms), 'rate(x[2m * (10 + 5)])');
    const sq = parse('sum_over_time(x[29s+1s:step()*2] offset (1m+1m))');
    assert.equal(formatExpr(sq), 'sum_over_time(x[29s + 1s:step() * 2] offset (1m + 1m))');
    assert.equal(formatExpr(parse('x[max_of(min_of(step()+1,1h),1ms)]')), 'x[max_of(min_of(step() + 1, 1h), 1ms)]');
    assert.equal(formatExpr(parse('x[-5m+35m]')), 'x[-5m + 35m]');
    assert.equal(formatExpr(parse('x offset -step()')), 'x offset -step()');
  });

  it('folds plain literals, which must be positive in brackets', () => {
    const e = parse('x[(30m)]');
    assert.ok(e.kind === 'matrixSelector' && e.rangeMs === 30 * 60_000 && e.rangeExpr === undefined);
    assert.equal(formatExpr(parse('x offset -(5m)')), 'x offset -5m');
    assert.match(parseErrorWith('x[-5m]', on).message, /duration must be greater than 0/);
  });

  it('an offset takes one operand; operators after it apply to the selector', () => {
    const split = (q: string) => {
      const b = parse(q) as BinaryExpr;
      return [formatExpr(b.lhs), b.op, formatExpr(b.rhs)];
    };
    assert.deepEqual(split('x offset 100 + 2'), ['x offset 1m40s', '+', '2']);
    assert.deepEqual(split('x offset -2 ^ 2'), ['x offset -2s', '^', '2']);
    assert.deepEqual(split('x offset step() * 0'), ['x offset step()', '*', '0']);
    assert.equal(formatExpr(parse('x offset (-2 ^ 2)')), 'x offset (-2 ^ 2)');
    assert.equal(formatExpr(parse('x offset min_of(step(), 1s) + 8000')), 'x offset min_of(step(), 1s) + 8000');
  });

  it('reports literal division by zero, bad tokens and the feature gate', () => {
    assert.match(parseErrorWith('x[1h/0]', on).message, /division by zero/);
    assert.match(parseErrorWith('x[1h%0]', on).message, /modulo by zero/);
    assert.match(parseErrorWith('x[1h+]', on).message, /unexpected "]"/);
    assert.equal(parseError('x[1m+1m]').message, '1:3: parse error: experimental duration expression is not enabled');
    assert.equal(parseError('x offset step()').message, '1:10: parse error: experimental duration expression is not enabled');
    assert.doesNotThrow(() => parseExpr('x[5m] offset 1m'));
  });
});

function parseErrorWith(q: string, opts: Parameters<typeof parseExpr>[1]): PromQLParseError {
  try {
    parseExpr(q, opts);
  } catch (err) {
    assert.ok(err instanceof PromQLParseError, `expected PromQLParseError for ${q}, got ${err}`);
    return err;
  }
  assert.fail(`expected ${JSON.stringify(q)} not to parse`);
}
