// /metrics in both formats from one registry: OpenMetrics (exemplars, counters as families
// without _total, # EOF) when asked, Prometheus text otherwise, and neither spoils the other.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Histogram } from 'prom-client';
import { createMetricsRegistry, exemplarsEnabled, negotiateFormat, renderMetrics } from './index.ts';

test('format negotiation follows the Accept header', () => {
  assert.equal(negotiateFormat(undefined), 'prometheus');
  assert.equal(negotiateFormat('*/*'), 'prometheus');
  assert.equal(negotiateFormat('text/plain;version=0.0.4'), 'prometheus');
  // Prometheus 2.42's scrape Accept header.
  assert.equal(
    negotiateFormat('application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1'),
    'openmetrics',
  );
  assert.equal(negotiateFormat('application/openmetrics-text;q=0,text/plain'), 'prometheus');
});

test('both renderings of one registry; exemplars only in OpenMetrics; escaping', async () => {
  const registry = createMetricsRegistry({ component: 'test' });
  assert.equal(exemplarsEnabled(registry), true);
  const c = new Counter({ name: 'x_requests_total', help: 'Requests "quoted"\nsecond line \\ slash.', labelNames: ['path'], registers: [registry] });
  c.inc({ path: 'a"b\\c\nd' }, 3);
  const h = new Histogram({
    name: 'x_latency_seconds',
    help: 'Latency.',
    labelNames: ['status'],
    buckets: [0.1, 1],
    enableExemplars: true,
    registers: [registry],
  });
  const exemplar: Record<string, string> = { trace_id: 'abc123' };
  h.observe({ labels: { status: '200' }, value: 0.5, exemplarLabels: exemplar });
  h.observe({ labels: { status: '200' }, value: 5 });

  const om = await renderMetrics(registry, 'openmetrics');
  assert.match(om, /^# HELP x_requests Requests \\"quoted\\"\\nsecond line \\\\ slash\.$/m);
  assert.match(om, /^# TYPE x_requests counter$/m);
  assert.match(om, /^x_requests_total\{path="a\\"b\\\\c\\nd",component="test"\} 3$/m);
  assert.match(om, /^# TYPE x_latency_seconds histogram$/m);
  assert.match(om, /^x_latency_seconds_bucket\{le="0\.1",status="200",component="test"\} 0$/m);
  assert.match(om, /^x_latency_seconds_bucket\{le="1",status="200",component="test"\} 1 # \{trace_id="abc123"\} 0\.5 \d+(\.\d+)?$/m);
  assert.match(om, /^x_latency_seconds_bucket\{le="\+Inf",status="200",component="test"\} 2$/m);
  assert.match(om, /^x_latency_seconds_count\{status="200",component="test"\} 2$/m);
  assert.ok(om.endsWith('\n# EOF\n'));

  const text = await renderMetrics(registry, 'prometheus');
  assert.match(text, /^# HELP x_requests_total Requests "quoted"\\nsecond line \\\\ slash\.$/m);
  assert.match(text, /^# TYPE x_requests_total counter$/m);
  assert.match(text, /^x_requests_total\{path="a\\"b\\\\c\\nd",component="test"\} 3$/m);
  assert.match(text, /^x_latency_seconds_bucket\{le="1",status="200",component="test"\} 1$/m);
  assert.doesNotMatch(text, /# EOF|trace_id/);
  // prom-client's default process metrics are there in both.
  for (const out of [om, text]) assert.match(out, /^process_cpu_user_seconds_total\{component="test"\} [0-9.e-]+$/m);
});
