// Where spans go: nowhere unless an endpoint is configured (flag first, then the standard
// OTEL_EXPORTER_OTLP_* variables); when configured, stop() delivers them over OTLP/HTTP
// (protobuf) to a receiver, named by service.name. W3C trace context survives a round trip.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { context, trace } from '@opentelemetry/api';
import { Tracing, extractTraceContext, otlpTracesUrl, traceContextHeaders, tracingConfigShape, exemplarLabels, inSpan } from './index.ts';
import { z } from 'zod';

test('the OTLP endpoint: flag, then OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as-is, then OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces', () => {
  const none = { 'tracing.otlp-endpoint': '' };
  assert.equal(otlpTracesUrl(none, {}), undefined);
  assert.equal(
    otlpTracesUrl({ 'tracing.otlp-endpoint': 'http://collector:4318' }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://other:4318' }),
    'http://collector:4318/v1/traces',
  );
  assert.equal(otlpTracesUrl({ 'tracing.otlp-endpoint': 'http://collector:4318/v1/traces/' }, {}), 'http://collector:4318/v1/traces');
  assert.equal(
    otlpTracesUrl(none, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:4318/custom', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://o:4318' }),
    'http://t:4318/custom',
  );
  assert.equal(otlpTracesUrl(none, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://o:4318/' }), 'http://o:4318/v1/traces');
  const schema = z.object(tracingConfigShape);
  assert.equal(schema.safeParse({ 'tracing.otlp-endpoint': 'collector:4318' }).success, false, 'a URL without scheme is refused');
  assert.equal(schema.safeParse({ 'tracing.sample-ratio': '1.5' }).success, false);
  assert.deepEqual(schema.parse({}), { 'tracing.otlp-endpoint': '', 'tracing.sample-ratio': 1 });
});

test('without an endpoint spans are not recorded, but ids and propagation still work', async () => {
  const tracing = new Tracing({ serviceName: 'distributor', env: {} });
  assert.equal(tracing.exporting, false);
  await inSpan(tracing.tracer, 'push', {}, extractTraceContext({ traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }), async (span) => {
    assert.equal(span.isRecording(), false);
    assert.equal(span.spanContext().traceId, '0af7651916cd43dd8448eb211c80319c', "the caller's trace id is kept");
    assert.match(traceContextHeaders().traceparent, /^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-00$/);
    assert.deepEqual(exemplarLabels(), {}, 'no exemplar for a trace that is not kept');
  });
  assert.deepEqual(traceContextHeaders(), {}, 'nothing to inject outside a span');
  assert.equal(trace.getSpan(extractTraceContext({ traceparent: 'garbage' })), undefined);
  assert.equal(trace.getSpan(extractTraceContext(undefined)), undefined);
  await tracing.stop();
});

test('with -tracing.otlp-endpoint spans are exported over OTLP/HTTP protobuf with service.name', async (t) => {
  const received: { url: string; contentType: string; body: Buffer }[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ url: req.url ?? '', contentType: String(req.headers['content-type']), body: Buffer.concat(chunks) });
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;

  const tracing = new Tracing({ serviceName: 'ingester-under-test', config: { 'tracing.otlp-endpoint': `http://127.0.0.1:${port}` }, env: {} });
  assert.equal(tracing.otlpUrl, `http://127.0.0.1:${port}/v1/traces`);
  let traceId = '';
  await inSpan(tracing.tracer, 'ingester.append', {}, context.active(), async (span) => {
    traceId = span.spanContext().traceId;
    assert.equal(span.isRecording(), true);
    assert.deepEqual(exemplarLabels(), { trace_id: traceId });
  });
  await tracing.stop();
  assert.equal(received.length, 1, 'one export request on shutdown');
  assert.equal(received[0].url, '/v1/traces');
  assert.equal(received[0].contentType, 'application/x-protobuf');
  assert.ok(received[0].body.includes(Buffer.from('ingester-under-test')), 'service.name is in the resource');
  assert.ok(received[0].body.includes(Buffer.from('ingester.append')), 'the span name is in the payload');
  assert.ok(received[0].body.includes(Buffer.from(traceId, 'hex')), 'the trace id (bytes) is in the payload');
});

test('a failing export is logged through the logger it was given, not swallowed', async () => {
  const lines: { level: string; msg: string }[] = [];
  const logger = {
    warn: (_o: object, msg: string) => lines.push({ level: 'warn', msg }),
    error: (_o: object, msg: string) => lines.push({ level: 'error', msg }),
  };
  // Port 1 on loopback: nothing listens, the connection is refused.
  const tracing = new Tracing({ serviceName: 'distributor', config: { 'tracing.otlp-endpoint': 'http://127.0.0.1:1' }, env: {}, logger });
  await inSpan(tracing.tracer, 'distributor.push', {}, undefined, async () => undefined);
  // The batch processor exports on its own schedule (every 5s); its failure goes to the logger.
  const deadline = Date.now() + 15_000;
  while (!lines.some((l) => l.level === 'error' && /ECONNREFUSED/.test(l.msg)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  assert.ok(
    lines.some((l) => l.level === 'error' && /^tracing: .*ECONNREFUSED/.test(l.msg)),
    JSON.stringify(lines),
  );
  await tracing.stop().catch(() => undefined);
});
