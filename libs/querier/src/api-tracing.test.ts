// The query API traced: each request is a span continuing the caller's traceparent, the query
// latency histogram carries its trace id as an exemplar on /metrics (OpenMetrics), and a failed
// query's log line names the tenant and the trace.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { labelsFromRecord, type SelectParams, type Series } from '@strata/model';
import { Engine } from '@strata/promql';
import { createHttpServer, createLogger, createMetricsRegistry } from '@strata/service';
import { InMemorySpanExporter, Tracing } from '@strata/tracing';
import { registerPrometheusApi } from './index.ts';
import { MemoryQuerier } from '@strata/model/testing';

class Lines extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    for (const l of chunk.toString().split('\n')) if (l.trim() !== '') this.lines.push(JSON.parse(l) as Record<string, unknown>);
    done();
  }
}

/** Tenant "broken" fails every read the way an unreachable store would. */
class QuerierWithBrokenTenant extends MemoryQuerier {
  override async select(p: SelectParams): Promise<Series[]> {
    if (p.tenant === 'broken') throw new Error('store unreachable');
    return super.select(p);
  }
}

test("a query is a span under the caller's trace; its latency exemplar and error log line carry the trace id", async (t) => {
  const spans = new InMemorySpanExporter();
  const tracing = new Tracing({ serviceName: 'querier', exporter: spans });
  t.after(() => tracing.stop());
  const querier = new QuerierWithBrokenTenant();
  querier.append('t1', labelsFromRecord({ __name__: 'up', job: 'api' }), [0, 15_000], [1, 1]);
  const lines = new Lines();
  const logger = createLogger('querier', 'info', lines);
  const registry = createMetricsRegistry();
  const app = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });
  registerPrometheusApi(app, {
    querier,
    engine: new Engine({ querier }),
    multitenancyEnabled: true,
    logger,
    registry,
    prefixes: ['/api/v1'],
    tracer: tracing.tracer,
  });

  const trace = '5b8aa5a2d2c872e8321cf37308d69df2';
  const ok = await app.inject({ url: '/api/v1/query?query=up&time=10', headers: { 'x-scope-orgid': 't1', traceparent: `00-${trace}-051581bf3cb55c13-01` } });
  assert.equal(ok.statusCode, 200, ok.body);
  const span = spans.getFinishedSpans().find((s) => s.name === 'querier.query');
  assert.ok(span, 'a querier.query span');
  assert.equal(span.spanContext().traceId, trace);
  assert.equal(span.parentSpanContext?.spanId, '051581bf3cb55c13');
  assert.equal(span.attributes.tenant, 't1');

  const om = await app.inject({ url: '/metrics', headers: { accept: 'application/openmetrics-text; version=1.0.0' } });
  assert.match(
    om.body,
    new RegExp(
      `^strata_querier_request_duration_seconds_bucket\\{[^}]*endpoint="query"[^}]*status="200"[^}]*\\} 1 # \\{trace_id="${trace}"\\} [0-9.e-]+ [0-9.]+$`,
      'm',
    ),
  );
  const text = await app.inject({ url: '/metrics' });
  assert.match(text.body, /^strata_querier_request_duration_seconds_count\{endpoint="query",status="200"\} 1$/m);
  assert.doesNotMatch(text.body, /trace_id/, 'no exemplars in the Prometheus text format');

  const failedTrace = 'c0ffee00c0ffee00c0ffee00c0ffee00';
  const failed = await app.inject({
    url: '/api/v1/query?query=up&time=10',
    headers: { 'x-scope-orgid': 'broken', traceparent: `00-${failedTrace}-00000000000000aa-01` },
  });
  assert.equal(failed.statusCode, 500, failed.body);
  const line = lines.lines.find((l) => l.msg === 'query failed');
  assert.ok(line, `a "query failed" log line among ${JSON.stringify(lines.lines)}`);
  assert.equal(line.tenant, 'broken');
  assert.equal(line.trace_id, failedTrace);
  assert.equal(line.query, 'up');
  const failedSpan = spans.getFinishedSpans().find((s) => s.spanContext().traceId === failedTrace);
  assert.equal(failedSpan?.status.code, 2, "the failed query's span is an error");
});
