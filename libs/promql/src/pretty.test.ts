import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseExpr } from './parser.ts';
import { prettyExpr } from './pretty.ts';

const pretty = (q: string) => prettyExpr(parseExpr(q));

describe('prettyExpr (format_query)', () => {
  it('keeps short expressions on one line, canonically spaced', () => {
    assert.equal(pretty('sum(rate(x[5m]))by(job)'), 'sum by (job) (rate(x[5m]))');
    assert.equal(pretty('a+on(b)group_left(c)d'), 'a + on(b) group_left(c) d');
  });

  it('splits long expressions at operators, arguments and aggregations', () => {
    const long =
      'sum by (job) (rate(http_requests_total{job="api-server",handler="/api/v1/query_range"}[5m])) / ' +
      'sum by (job) (rate(http_requests_total{job="api-server"}[5m]))';
    assert.equal(
      pretty(long),
      [
        '  sum by (job) (rate(http_requests_total{job="api-server", handler="/api/v1/query_range"}[5m]))',
        '/',
        '  sum by (job) (rate(http_requests_total{job="api-server"}[5m]))',
      ].join('\n'),
    );
    const agg = `topk(5, ${'x'.repeat(50)} + ${'y'.repeat(50)})`;
    assert.equal(pretty(agg), `topk(\n  5,\n    ${'x'.repeat(50)}\n  +\n    ${'y'.repeat(50)}\n)`);
  });
});
