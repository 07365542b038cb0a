// The per-tenant OTLP settings (Prometheus' otlp block, Mimir's otel_* limits):
// native delta ingestion, resource-attribute and scope promotion, NHCB, each
// through both decoders, against what Prometheus' translator produces.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProtoReader, readHistogram, validateHistogram } from '@strata/remote-write';
import {
  decodeExportRequest,
  decodeExportRequestJson,
  encodeExportRequest,
  encodeExportRequestJson,
  translateMetrics,
  type ExportRequestInput,
} from './index.ts';
import type { TranslateOptions, Translation } from './translate.ts';

const T = 1732950000000n * 1_000_000n;
const T_MS = 1732950000000;

function both(req: ExportRequestInput, opts: TranslateOptions): Translation[] {
  return [decodeExportRequest(encodeExportRequest(req)), decodeExportRequestJson(encodeExportRequestJson(req))].map((d) => translateMetrics(d, opts));
}

function labelSets(t: Translation): Record<string, string>[] {
  return t.timeseries.map((s) => Object.fromEntries(s.labels.map((l) => [l.name, l.value])));
}

function seriesNamed(t: Translation, name: string) {
  return t.timeseries.filter((s) => s.labels.some((l) => l.name === '__name__' && l.value === name));
}

function deltaRequest(): ExportRequestInput {
  return {
    resourceMetrics: [
      {
        resource: { 'service.name': 'api' },
        scopeMetrics: [
          {
            metrics: [
              {
                name: 'jobs.done',
                sum: {
                  aggregationTemporality: 1,
                  isMonotonic: true,
                  dataPoints: [5, 3].map((v, i) => ({ timeUnixNano: T + BigInt(i) * 10_000_000_000n, value: v })),
                },
              },
              {
                name: 'latency',
                unit: 's',
                histogram: {
                  aggregationTemporality: 1,
                  dataPoints: [{ timeUnixNano: T, count: 3, sum: 2, bucketCounts: [1, 2, 0], explicitBounds: [0.5, 1] }],
                },
              },
              {
                name: 'sizes',
                exponentialHistogram: {
                  aggregationTemporality: 1,
                  dataPoints: [{ timeUnixNano: T, count: 1, sum: 3, scale: 0, positive: { offset: 1, bucketCounts: [1] } }],
                },
              },
              { name: 'unspecified', sum: { aggregationTemporality: 0, isMonotonic: true, dataPoints: [{ timeUnixNano: T, value: 1 }] } },
            ],
          },
        ],
      },
    ],
  };
}

test('native delta ingestion: delta sums and histograms stored as sent with metadata type unknown; unspecified still refused', () => {
  for (const t of both(deltaRequest(), { allowDelta: true })) {
    const [done] = seriesNamed(t, 'jobs_done_total');
    assert.deepEqual(
      done.samples,
      [
        { value: 5, timestamp: T_MS },
        { value: 3, timestamp: T_MS + 10_000 },
      ],
      'each delta as its own sample, not accumulated',
    );
    assert.deepEqual(
      seriesNamed(t, 'latency_seconds_bucket').map((s) => s.samples[0].value),
      [1, 3, 3],
      'classic buckets of a delta histogram: cumulative over le, not over time',
    );
    const [sizes] = seriesNamed(t, 'sizes');
    const h = readHistogram(new ProtoReader(sizes.histograms![0]), sizes.histograms![0].length);
    assert.equal(h.histogram.counterResetHint, 'gauge', "a delta exponential histogram is a gauge histogram, Prometheus' hint for deltas");
    const types = Object.fromEntries(t.metadata.map((m) => [m.metricFamilyName, m.type]));
    assert.deepEqual(types, { jobs_done_total: 'unknown', latency_seconds: 'unknown', sizes: 'unknown' });
    assert.equal(t.droppedPoints, 1);
    assert.deepEqual(t.errors, ['OTLP metric "unspecified" is a sum with unspecified aggregation temporality: send cumulative (or delta) temporality']);
  }
  for (const t of both(deltaRequest(), {})) {
    assert.equal(t.droppedPoints, 5, 'off: every delta point and the unspecified one are dropped');
    assert.equal(t.errors.length, 4);
    assert.deepEqual(seriesNamed(t, 'jobs_done_total'), []);
  }
});

function resourceRequest(): ExportRequestInput {
  return {
    resourceMetrics: [
      {
        resource: {
          'service.name': 'api',
          'service.instance.id': 'pod-1',
          'k8s.namespace.name': 'prod',
          'cloud.region': 'eu',
          'host.name': 'node-1',
          env: 'from-resource',
        },
        scopeMetrics: [
          {
            scope: { name: 'io.strata.lib', version: '1.2', attributes: { 'lib.flavour': 'x' } },
            schemaUrl: 'https://opentelemetry.io/schemas/1.26.0',
            metrics: [{ name: 'up.gauge', gauge: { dataPoints: [{ timeUnixNano: T, value: 1, attributes: { env: 'from-point' } }] } }],
          },
          { scope: { name: '' }, metrics: [{ name: 'unscoped', gauge: { dataPoints: [{ timeUnixNano: T, value: 2 }] } }] },
          { scope: { name: 'noversion' }, metrics: [{ name: 'noversion', gauge: { dataPoints: [{ timeUnixNano: T, value: 3 }] } }] },
        ],
      },
    ],
  };
}

test("promoted resource attributes become labels of every series, a point's own attribute wins; target_info is unchanged", () => {
  for (const t of both(resourceRequest(), { promoteResourceAttributes: ['k8s.namespace.name', 'env', 'missing'] })) {
    const sets = labelSets(t);
    assert.deepEqual(
      sets.find((s) => s.__name__ === 'up_gauge'),
      {
        __name__: 'up_gauge',
        env: 'from-point',
        instance: 'pod-1',
        job: 'api',
        k8s_namespace_name: 'prod',
      },
    );
    assert.deepEqual(
      sets.find((s) => s.__name__ === 'unscoped'),
      { __name__: 'unscoped', env: 'from-resource', instance: 'pod-1', job: 'api', k8s_namespace_name: 'prod' },
    );
    assert.deepEqual(
      sets.find((s) => s.__name__ === 'target_info'),
      {
        __name__: 'target_info',
        cloud_region: 'eu',
        env: 'from-resource',
        host_name: 'node-1',
        instance: 'pod-1',
        job: 'api',
        k8s_namespace_name: 'prod',
      },
    );
  }
});

test('promote all resource attributes but the ignored ones, identifying ones included; NoTranslation keeps the dots', () => {
  const [t] = both(resourceRequest(), { promoteAllResourceAttributes: true, ignoreResourceAttributes: ['host.name', 'env'] });
  assert.deepEqual(
    labelSets(t).find((s) => s.__name__ === 'unscoped'),
    {
      __name__: 'unscoped',
      cloud_region: 'eu',
      instance: 'pod-1',
      job: 'api',
      k8s_namespace_name: 'prod',
      service_instance_id: 'pod-1',
      service_name: 'api',
    },
  );
  const [utf8] = both(resourceRequest(), { strategy: 'NoTranslation', promoteResourceAttributes: ['k8s.namespace.name'] });
  assert.equal(labelSets(utf8).find((s) => s.__name__ === 'unscoped')?.['k8s.namespace.name'], 'prod');
});

test('scope promotion: otel_scope_name, _version, _schema_url and otel_scope_<attribute>; none for a scope without a name or on target_info', () => {
  for (const t of both(resourceRequest(), { promoteScopeMetadata: true })) {
    const sets = labelSets(t);
    assert.deepEqual(
      sets.find((s) => s.__name__ === 'up_gauge'),
      {
        __name__: 'up_gauge',
        env: 'from-point',
        instance: 'pod-1',
        job: 'api',
        otel_scope_lib_flavour: 'x',
        otel_scope_name: 'io.strata.lib',
        otel_scope_schema_url: 'https://opentelemetry.io/schemas/1.26.0',
        otel_scope_version: '1.2',
      },
    );
    assert.deepEqual(
      sets.find((s) => s.__name__ === 'unscoped'),
      { __name__: 'unscoped', instance: 'pod-1', job: 'api' },
    );
    assert.deepEqual(
      sets.find((s) => s.__name__ === 'noversion'),
      { __name__: 'noversion', instance: 'pod-1', job: 'api', otel_scope_name: 'noversion' },
      'empty values make no label',
    );
    assert.ok(!Object.keys(sets.find((s) => s.__name__ === 'target_info')!).some((k) => k.startsWith('otel_scope')));
  }
  const [off] = both(resourceRequest(), {});
  assert.ok(!labelSets(off).some((s) => 'otel_scope_name' in s), 'off by default');
});

test('keep identifying resource attributes: target_info keeps service.name and service.instance.id', () => {
  const [t] = both(resourceRequest(), { keepIdentifyingResourceAttributes: true });
  const info = labelSets(t).find((s) => s.__name__ === 'target_info')!;
  assert.equal(info.service_name, 'api');
  assert.equal(info.service_instance_id, 'pod-1');
});

test('explicit-bucket histograms as NHCB: one native histogram series with the bounds as custom values, valid for remote write', () => {
  const req: ExportRequestInput = {
    resourceMetrics: [
      {
        resource: { 'service.name': 'api' },
        scopeMetrics: [
          {
            metrics: [
              {
                name: 'http.server.duration',
                unit: 'ms',
                histogram: {
                  aggregationTemporality: 2,
                  dataPoints: [
                    {
                      timeUnixNano: T,
                      count: 10,
                      sum: 3940,
                      bucketCounts: [0, 0, 1, 0, 0, 0, 3, 4, 1, 1, 0, 0, 0, 0, 0, 0],
                      explicitBounds: [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000],
                      exemplars: [{ value: 120, timeUnixNano: T, traceId: '5b8efff798038103d269b633813fc60c' }],
                    },
                  ],
                },
              },
            ],
          },
        ],
      },
    ],
  };
  for (const t of both(req, { convertHistogramsToNhcb: true })) {
    assert.deepEqual(
      labelSets(t).map((s) => s.__name__),
      ['http_server_duration_milliseconds'],
      'no _bucket, _sum or _count series',
    );
    const [s] = t.timeseries;
    assert.equal(s.samples.length, 0);
    const d = readHistogram(new ProtoReader(s.histograms![0]), s.histograms![0].length);
    assert.equal(validateHistogram(d), null);
    assert.equal(d.timestamp, T_MS);
    assert.deepEqual(d.histogram.customValues, [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000]);
    assert.equal(d.histogram.schema, -53);
    assert.equal(d.histogram.count, 10);
    assert.equal(d.histogram.sum, 3940);
    assert.deepEqual(d.histogram.positiveBuckets, [1, 3, 4, 1, 1, 0]);
    assert.deepEqual(s.exemplars?.[0].labels, [{ name: 'trace_id', value: '5b8efff798038103d269b633813fc60c' }]);
    assert.deepEqual(t.metadata[0], { type: 'histogram', metricFamilyName: 'http_server_duration_milliseconds', help: '', unit: 'milliseconds' });
  }
});
