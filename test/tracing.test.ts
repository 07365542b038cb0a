// Tracing across Kafka, in one process against a real broker: the distributor's push span
// continues the sender's traceparent, every Kafka record carries the push span's context, and
// each ingester's append span is a child of that push span (same trace, parent = push). The
// push latency histogram carries the trace id as an exemplar on /metrics (OpenMetrics), and
// request-scoped log lines carry tenant and trace id.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';

import type { FastifyInstance } from 'fastify';
import { ensureTopic, startKafka, type LocalKafka } from '@strata/local-kafka';
import { IngestWriter, PartitionReader } from '@strata/kafka';
import { Distributor, registerPushRoutes } from '@strata/distributor';
import { Ingester } from '@strata/ingester';
import { compressBody, encodeWriteRequest } from '@strata/remote-write';
import { createHttpServer, createLogger, createMetricsRegistry } from '@strata/service';
import { InMemorySpanExporter, Tracing, type ReadableSpan } from '@strata/tracing';
import { generateSeries, waitFor } from './support/client.ts';

const TOPIC = 'ingest';
const PARTITIONS = 2;
const TENANT = 'team-trace';
const SERIES = 40;

/** pino lines written by the components, parsed. */
class LogLines extends Writable {
  readonly lines: Record<string, unknown>[] = [];
  override _write(chunk: Buffer, _enc: BufferEncoding, done: () => void): void {
    for (const l of chunk.toString().split('\n')) if (l.trim() !== '') this.lines.push(JSON.parse(l) as Record<string, unknown>);
    done();
  }
}

describe('tracing: distributor push → Kafka record traceparent → ingester append', { timeout: 300_000 }, () => {
  let dir: string;
  let kafka: LocalKafka;
  let writer: IngestWriter;
  let http: FastifyInstance;
  const ingesters: Ingester[] = [];
  const spans = new InMemorySpanExporter();
  const distributorTracing = new Tracing({ serviceName: 'distributor', exporter: spans });
  const ingesterTracing = new Tracing({ serviceName: 'ingester', exporter: spans });
  const distributorRegistry = createMetricsRegistry();
  const logs = new LogLines();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-tracing-'));
    kafka = await startKafka({ dataDir: join(dir, 'kafka') });
    await ensureTopic({ brokers: kafka.brokers, topic: TOPIC, partitions: PARTITIONS, replicationFactor: 1 });
    const distributorLogger = createLogger('distributor', 'debug', logs);
    writer = new IngestWriter({ brokers: kafka.brokers, topic: TOPIC, clientId: 'tracing-test', timeoutMs: 20_000 });
    await writer.start();
    const distributor = new Distributor({
      writer,
      maxRecvMsgSize: 10 << 20,
      logger: distributorLogger,
      registry: distributorRegistry,
      tracer: distributorTracing.tracer,
    });
    http = createHttpServer({ logger: distributorLogger, registry: distributorRegistry, readiness: { notReadyReason: () => undefined } });
    registerPushRoutes(http, {
      distributor,
      multitenancyEnabled: true,
      logger: distributorLogger,
      registry: distributorRegistry,
      maxBodyBytes: 10 << 20,
      tracer: distributorTracing.tracer,
    });
    await http.ready();
    for (let p = 0; p < PARTITIONS; p++) {
      const id = `ingester-zone-a-${p}`;
      const logger = createLogger(id, 'info', logs);
      const ingester = new Ingester({
        identity: { id, zone: 'a', partition: p },
        maxLagForReady: 0,
        logger,
        registry: new Registry(),
        tracer: ingesterTracing.tracer,
        createSource: (onRecords) =>
          new PartitionReader({ brokers: kafka.brokers, topic: TOPIC, partition: p, consumerGroup: id, startFrom: 'earliest', logger, onRecords }),
      });
      await ingester.start();
      ingesters.push(ingester);
    }
  });

  after(async () => {
    for (const i of ingesters) await i.stop();
    await http?.close();
    await writer?.stop();
    await distributorTracing.stop();
    await ingesterTracing.stop();
    await kafka?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  const seriesInHeads = () => ingesters.reduce((n, i) => n + (i.head(TENANT)?.numSeries ?? 0), 0);

  async function pushSeries(metric: string, headers: Record<string, string>): Promise<void> {
    const body = compressBody(encodeWriteRequest({ timeseries: generateSeries(metric, SERIES, 1, Date.now() - 60_000, 15_000) }));
    const res = await http.inject({
      method: 'POST',
      url: '/api/v1/push',
      payload: Buffer.from(body),
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-scope-orgid': TENANT, ...headers },
    });
    assert.equal(res.statusCode, 200, res.body);
  }

  function byName(name: string): ReadableSpan[] {
    return spans.getFinishedSpans().filter((s) => s.name === name);
  }

  test('the append span of every record is a child of the push span that produced it, across a real Kafka', async () => {
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const callerSpan = '00f067aa0ba902b7';
    await pushSeries('traced_metric', { traceparent: `00-${callerTrace}-${callerSpan}-01` });
    await waitFor('both partitions appended the series', async () => (seriesInHeads() === SERIES ? true : undefined), 60_000);
    const appends = await waitFor('an append span per partition', async () => {
      const got = byName('ingester.append').filter((s) => s.spanContext().traceId === callerTrace);
      return got.length >= PARTITIONS ? got : undefined;
    });

    const [push] = byName('distributor.push');
    assert.ok(push, 'a distributor.push span was recorded');
    assert.equal(push.spanContext().traceId, callerTrace, "the push continues the sender's trace");
    assert.equal(push.parentSpanContext?.spanId, callerSpan, "the push span's parent is the sender's span");
    assert.equal(push.resource.attributes['service.name'], 'distributor');
    assert.equal(push.attributes.tenant, TENANT);

    const [produce] = byName('distributor.produce');
    assert.ok(produce, 'a distributor.produce span was recorded');
    assert.equal(produce.spanContext().traceId, callerTrace);
    assert.equal(produce.parentSpanContext?.spanId, push.spanContext().spanId, 'produce is a child of push');

    // One record per partition touched; each append continues the push span, not the produce span.
    assert.deepEqual(new Set(appends.map((a) => a.attributes['kafka.partition'])), new Set([0, 1]), 'records went to both partitions');
    for (const append of appends) {
      assert.equal(append.spanContext().traceId, push.spanContext().traceId, 'same trace id');
      assert.equal(append.parentSpanContext?.spanId, push.spanContext().spanId, 'append.parentSpanId === push.spanId');
      assert.equal(append.parentSpanContext?.isRemote, true, 'the parent came over Kafka');
      assert.equal(append.resource.attributes['service.name'], 'ingester');
      assert.equal(append.attributes.tenant, TENANT);
    }
    const appended = appends.reduce((n, a) => n + Number(a.attributes['samples.appended']), 0);
    assert.equal(appended, SERIES, 'the traced appends hold every pushed sample');
  });

  test('a push without traceparent starts a new trace that the appends still join', async () => {
    spans.reset();
    await pushSeries('untraced_metric', {});
    await waitFor('the new series appended', async () => (seriesInHeads() === 2 * SERIES ? true : undefined), 60_000);
    const push = await waitFor('the push span', async () => byName('distributor.push')[0]);
    assert.equal(push.parentSpanContext, undefined, 'a root span');
    const appends = await waitFor('append spans of the new trace', async () => {
      const got = byName('ingester.append').filter((s) => s.spanContext().traceId === push.spanContext().traceId);
      return got.length >= PARTITIONS ? got : undefined;
    });
    for (const a of appends) assert.equal(a.parentSpanContext?.spanId, push.spanContext().spanId);
  });

  test('the push latency histogram carries the trace id as an exemplar; plain-text scrapes are unchanged', async () => {
    spans.reset();
    const traceId = 'a1b2c3d4e5f60718293a4b5c6d7e8f90';
    await pushSeries('exemplar_metric', { traceparent: `00-${traceId}-1111111111111111-01` });
    const om = await http.inject({
      method: 'GET',
      url: '/metrics',
      headers: { accept: 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' },
    });
    assert.match(String(om.headers['content-type']), /^application\/openmetrics-text; version=1\.0\.0/);
    assert.match(
      om.body,
      new RegExp(`^strata_distributor_push_duration_seconds_bucket\\{[^}]*status="200"[^}]*\\} \\d+ # \\{trace_id="${traceId}"\\} [0-9.e-]+ [0-9.]+$`, 'm'),
    );
    assert.match(om.body, new RegExp(`^strata_distributor_kafka_produce_duration_seconds_bucket\\{[^}]*\\} \\d+ # \\{trace_id="${traceId}"\\}`, 'm'));
    assert.match(om.body, /^# TYPE strata_distributor_received_samples counter$/m, 'OpenMetrics counter family without _total');
    assert.match(om.body, /^strata_distributor_received_samples_total\{tenant="team-trace"\} 120$/m);
    assert.ok(om.body.endsWith('# EOF\n'));
    // After an OpenMetrics scrape the Prometheus text format still names counters with _total and has no exemplars.
    const text = await http.inject({ method: 'GET', url: '/metrics' });
    assert.match(String(text.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.match(text.body, /^strata_distributor_received_samples_total\{tenant="team-trace"\} 120$/m);
    assert.doesNotMatch(text.body, / # \{/);
  });

  test('request-scoped log lines carry tenant and trace id: a failed push, an undecodable record, rejected samples', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const res = await http.inject({
      method: 'POST',
      url: '/api/v1/push',
      payload: Buffer.from('not snappy at all'),
      headers: {
        'content-type': 'application/x-protobuf',
        'content-encoding': 'snappy',
        'x-scope-orgid': TENANT,
        traceparent: `00-${traceId}-b7ad6b7169203331-01`,
      },
    });
    assert.equal(res.statusCode, 400);
    const pushLine = logs.lines.find((l) => l.trace_id === traceId && l.component === 'distributor');
    assert.ok(pushLine, `a distributor log line with trace_id ${traceId}`);
    assert.equal(pushLine.tenant, TENANT);
    assert.match(String(pushLine.msg), /snappy/);

    // A record no distributor would write, carrying a trace context: the ingester's error line names both.
    const recordTrace = 'ffeeddccbbaa99887766554433221100';
    await writer.write(TENANT, [{ partition: 1, value: Buffer.from([0x0a, 0xff]), headers: { traceparent: `00-${recordTrace}-0123456789abcdef-01` } }]);
    const appendLine = await waitFor('the ingester logs the undecodable record', async () =>
      logs.lines.find((l) => l.msg === 'skipping undecodable record' && l.trace_id === recordTrace),
    );
    assert.equal(appendLine.tenant, TENANT);
    assert.equal(appendLine.component, 'ingester-zone-a-1');
    const failed = await waitFor('its append span', async () => byName('ingester.append').find((s) => s.spanContext().traceId === recordTrace));
    assert.equal(failed.status.code, 2, 'the append span is marked as an error');

    // Samples older than their series' newest: the ingester says so once, naming tenant and trace.
    const oooTrace = '11112222333344445555666677778888';
    const body = compressBody(encodeWriteRequest({ timeseries: generateSeries('traced_metric', SERIES, 1, Date.now() - 120_000, 15_000) }));
    const ooo = await http.inject({
      method: 'POST',
      url: '/api/v1/push',
      payload: Buffer.from(body),
      headers: {
        'content-type': 'application/x-protobuf',
        'content-encoding': 'snappy',
        'x-scope-orgid': TENANT,
        traceparent: `00-${oooTrace}-2222222222222222-01`,
      },
    });
    assert.equal(ooo.statusCode, 200, 'the distributor accepts them; the ingesters reject them');
    const rejectLine = await waitFor('the ingester logs the rejected samples', async () =>
      logs.lines.find((l) => l.trace_id === oooTrace && String(l.component).startsWith('ingester-')),
    );
    assert.equal(rejectLine.tenant, TENANT);
    assert.ok((rejectLine.rejected as Record<string, number>)['out-of-order'] > 0, JSON.stringify(rejectLine));
  });
});
