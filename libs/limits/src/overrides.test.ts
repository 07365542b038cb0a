import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { DEFAULT_LIMITS, Overrides, ingesterLimits, localLimit, runtimeConfigSchema } from './index.ts';

function capturingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (s: string) => lines.push(JSON.parse(s) as Record<string, unknown>) });
  return { logger, lines };
}

async function gauge(registry: Registry, name: string): Promise<number | undefined> {
  const m = await registry.getSingleMetric(name)?.get();
  return m?.values[0]?.value;
}

test('defaults are Mimir flag defaults (exemplars aside) and tenants without overrides share them', () => {
  const o = new Overrides({ defaults: DEFAULT_LIMITS });
  const l = o.forTenant('team-a');
  assert.equal(l.ingestionRate, 10_000);
  assert.equal(l.ingestionBurstSize, 200_000);
  assert.equal(l.maxGlobalSeriesPerUser, 150_000);
  assert.equal(l.maxLabelNamesPerSeries, 30);
  assert.equal(l.maxLabelNameLength, 1024);
  assert.equal(l.maxLabelValueLength, 2048);
  assert.equal(l.maxMetadataLength, 1024);
  assert.equal(l.creationGracePeriodMs, 600_000);
  assert.equal(l.pastGracePeriodMs, 0);
  assert.equal(l.outOfOrderTimeWindowMs, 0);
  assert.equal(l.maxGlobalExemplarsPerUser, 100_000);
  assert.equal(l.acceptHaSamples, false);
  assert.equal(l.haClusterLabel, 'cluster');
  assert.equal(l.haReplicaLabel, '__replica__');
  assert.equal(l.haMaxClusters, 100);
  assert.equal(o.forTenant('team-b'), l);
});

test('runtime config file: a valid change applies without restart, an invalid one keeps the last good config and says why', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-overrides-'));
  try {
    const path = join(dir, 'runtime.yaml');
    writeFileSync(path, 'overrides:\n  team-a:\n    ingestion_rate: 5\n    creation_grace_period: 1h\n');
    const { logger, lines } = capturingLogger();
    const registry = new Registry();
    const o = new Overrides({ defaults: DEFAULT_LIMITS, file: { path, reloadPeriodMs: 0, logger, registry } });
    await o.start();
    assert.equal(o.forTenant('team-a').ingestionRate, 5);
    assert.equal(o.forTenant('team-a').creationGracePeriodMs, 3_600_000);
    assert.equal(o.forTenant('team-a').ingestionBurstSize, 200_000, 'unset keys keep the default');
    assert.equal(o.forTenant('team-b').ingestionRate, 10_000);
    assert.equal(await gauge(registry, 'strata_runtime_config_last_reload_successful'), 1);

    writeFileSync(path, 'overrides:\n  team-a:\n    ingestion_rate: 50000\n    max_global_series_per_user: 10\n  team-b:\n    past_grace_period: 30m\n');
    assert.equal(await o.reload(), undefined);
    assert.equal(o.forTenant('team-a').ingestionRate, 50_000);
    assert.equal(o.forTenant('team-a').maxGlobalSeriesPerUser, 10);
    assert.equal(o.forTenant('team-a').creationGracePeriodMs, 600_000, 'a key removed from the file goes back to the default');
    assert.equal(o.forTenant('team-b').pastGracePeriodMs, 1_800_000);

    // A misspelt key, a wrong type, broken YAML: each is refused and the last good config stays.
    for (const [bad, why] of [
      ['overrides:\n  team-a:\n    ingestion_rat: 1\n', /overrides\.team-a: .*ingestion_rat/],
      ['overrides:\n  team-a:\n    ingestion_rate: lots\n', /overrides\.team-a\.ingestion_rate/],
      ['overrides:\n  team-a: [\n', /not valid YAML/],
      ['overrides:\n  "bad/tenant":\n    ingestion_rate: 1\n', /tenant id "bad\/tenant" is invalid/],
      ['overrides:\n  team-a:\n    creation_grace_period: soon\n', /invalid duration/],
      [
        'overrides:\n  team-a:\n    metric_relabel_configs:\n      - { action: drop, source_labels: [__name__], regex: "go_.*" }\n      - { action: hashmod, source_labels: [instance], target_label: shard }\n',
        /relabel config 1: the hashmod action requires a non-zero modulus/,
      ],
    ] as const) {
      writeFileSync(path, bad);
      const problem = await o.reload();
      assert.match(problem ?? '', why);
      assert.equal(o.forTenant('team-a').ingestionRate, 50_000);
      assert.equal(await gauge(registry, 'strata_runtime_config_last_reload_successful'), 0);
      const logged = lines.at(-1)!;
      assert.equal(logged.level, 50);
      assert.match(String(logged.msg), /runtime config reload failed; keeping the last good runtime config/);
      assert.match(String(logged.reason), why);
    }

    // The same bad file again is not logged again.
    const before = lines.length;
    await o.reload();
    assert.equal(lines.length, before);

    writeFileSync(
      path,
      'overrides:\n  team-a:\n    ingestion_rate: 50000\n    metric_relabel_configs:\n      - { action: drop, source_labels: [__name__], regex: "go_.*" }\n    drop_labels: [pod]\n',
    );
    assert.equal(await o.reload(), undefined);
    assert.deepEqual(
      o.forTenant('team-a').metricRelabelConfigs.map((r) => [r.action, r.regex]),
      [['drop', 'go_.*']],
    );
    assert.deepEqual(o.forTenant('team-a').dropLabels, ['pod']);
    assert.deepEqual(o.forTenant('team-b').metricRelabelConfigs, []);

    writeFileSync(path, '');
    assert.equal(await o.reload(), undefined, 'an empty file is valid: no overrides');
    assert.equal(o.forTenant('team-a').ingestionRate, 10_000);
    assert.equal(await gauge(registry, 'strata_runtime_config_last_reload_successful'), 1);
    await o.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the file is re-read on the reload period', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-overrides-'));
  try {
    const path = join(dir, 'runtime.yaml');
    writeFileSync(path, 'overrides: {}\n');
    const { logger } = capturingLogger();
    const o = new Overrides({ defaults: DEFAULT_LIMITS, file: { path, reloadPeriodMs: 20, logger, registry: new Registry() } });
    await o.start();
    writeFileSync(path, 'overrides:\n  t:\n    ingestion_burst_size: 7\n');
    const deadline = Date.now() + 5000;
    while (o.forTenant('t').ingestionBurstSize !== 7 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    assert.equal(o.forTenant('t').ingestionBurstSize, 7);
    await o.stop();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('an invalid file at startup fails start, naming the file and the problem', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-overrides-'));
  try {
    const path = join(dir, 'runtime.yaml');
    writeFileSync(path, 'limits:\n  ingestion_rate: 1\n');
    const o = new Overrides({ defaults: DEFAULT_LIMITS, file: { path, reloadPeriodMs: 0, logger: capturingLogger().logger, registry: new Registry() } });
    await assert.rejects(o.start(), /runtime config file .*runtime\.yaml: invalid: .*limits/);
    const missing = new Overrides({
      defaults: DEFAULT_LIMITS,
      file: { path: join(dir, 'nope.yaml'), reloadPeriodMs: 0, logger: capturingLogger().logger, registry: new Registry() },
    });
    await assert.rejects(missing.start(), /cannot read the file/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('ingester limits are the partition share of the global limits, read per call', () => {
  // Parsed form: durations already in ms.
  let rc = { overrides: { t: { max_global_series_per_user: 1000, max_global_exemplars_per_user: 0, out_of_order_time_window: 300_000 } } };
  const o = new Overrides({ defaults: DEFAULT_LIMITS, runtimeConfig: () => rc });
  let partitions = 4;
  const l = ingesterLimits(o, () => partitions);
  assert.equal(l.maxSeries('t'), 250);
  assert.equal(l.maxExemplars('t'), 0);
  assert.equal(l.outOfOrderTimeWindowMs('t'), 300_000);
  assert.equal(l.maxSeries('other'), 37_500);
  partitions = 3;
  assert.equal(l.maxSeries('t'), 333);
  rc = { overrides: { t: { max_global_series_per_user: 0, max_global_exemplars_per_user: 0, out_of_order_time_window: 0 } } };
  assert.equal(l.maxSeries('t'), 0, '0 stays 0: no limit');
  assert.equal(localLimit(5, 10), 1, 'never rounds a set limit down to "no limit"');
});

test('ruler_alertmanager_url: a tenant names its own Alertmanager; others keep the flag (empty here)', () => {
  const o = new Overrides({
    defaults: DEFAULT_LIMITS,
    runtimeConfig: () => ({ overrides: { 'team-a': { ruler_alertmanager_url: 'http://am-a:9093,http://am-a2:9093' } } }),
  });
  assert.equal(o.forTenant('team-a').rulerAlertmanagerUrl, 'http://am-a:9093,http://am-a2:9093');
  assert.equal(o.forTenant('team-b').rulerAlertmanagerUrl, '');
  assert.ok(runtimeConfigSchema.safeParse({ overrides: { 'team-a': { ruler_alertmanager_url: 'http://am:9093' } } }).success);
  assert.ok(!runtimeConfigSchema.safeParse({ overrides: { 'team-a': { ruler_alertmanager_url: 9093 } } }).success);
});

test("OTLP overrides: Mimir's otel_* keys, the promotion list as a YAML list or Mimir's comma-separated string, Prometheus' conflicts refused", () => {
  const parse = (o: unknown) => runtimeConfigSchema.safeParse({ overrides: { 'team-a': o } });
  const ok = parse({
    otel_native_delta_ingestion: true,
    promote_otel_resource_attributes: 'k8s.namespace.name, service.version',
    otel_promote_scope_metadata: true,
    otel_convert_histograms_to_nhcb: true,
    otel_keep_identifying_resource_attributes: true,
  });
  assert.ok(ok.success);
  const o = new Overrides({ defaults: DEFAULT_LIMITS, runtimeConfig: () => ok.data });
  const l = o.forTenant('team-a');
  assert.deepEqual(l.promoteOtelResourceAttributes, ['k8s.namespace.name', 'service.version']);
  assert.equal(l.otelNativeDeltaIngestion, true);
  assert.equal(l.otelPromoteScopeMetadata, true);
  assert.equal(l.otelConvertHistogramsToNhcb, true);
  assert.equal(l.otelKeepIdentifyingResourceAttributes, true);
  const d = o.forTenant('team-b');
  assert.deepEqual([d.otelNativeDeltaIngestion, d.promoteOtelResourceAttributes, d.promoteAllResourceAttributes], [false, [], false], 'off by default');

  const all = parse({ promote_all_resource_attributes: true, ignore_resource_attributes: ['host.name'] });
  assert.ok(all.success);
  assert.deepEqual(new Overrides({ defaults: DEFAULT_LIMITS, runtimeConfig: () => all.data }).forTenant('team-a').ignoreResourceAttributes, ['host.name']);

  const both = parse({ promote_all_resource_attributes: true, promote_otel_resource_attributes: ['a'] });
  assert.ok(!both.success);
  assert.match(both.error.message, /cannot both be set/);
  const ignoreAlone = parse({ ignore_resource_attributes: ['a'] });
  assert.ok(!ignoreAlone.success);
  assert.match(ignoreAlone.error.message, /needs promote_all_resource_attributes: true/);
});

test("blocked_queries and max_total_query_length take Mimir's YAML; a bad regex or an empty pattern is refused", () => {
  const ok = runtimeConfigSchema.parse({
    overrides: {
      'team-a': {
        max_total_query_length: '12h',
        blocked_queries: [
          { pattern: 'up' },
          { pattern: '.*rate\\(.*', regex: true, reason: 'too costly', time_range_longer_than: '7d', step_size_shorter_than: '1m' },
        ],
      },
    },
  });
  const o = ok.overrides?.['team-a'];
  assert.equal(o?.max_total_query_length, 12 * 3_600_000);
  assert.deepEqual(o?.blocked_queries, [
    { pattern: 'up', regex: false, reason: '', timeRangeLongerThanMs: 0, stepSizeShorterThanMs: 0 },
    { pattern: '.*rate\\(.*', regex: true, reason: 'too costly', timeRangeLongerThanMs: 7 * 86_400_000, stepSizeShorterThanMs: 60_000 },
  ]);
  const badRegex = runtimeConfigSchema.safeParse({ overrides: { 'team-a': { blocked_queries: [{ pattern: 'rate(', regex: true }] } } });
  assert.ok(!badRegex.success);
  assert.match(badRegex.error.message, /missing closing \)/);
  assert.ok(!runtimeConfigSchema.safeParse({ overrides: { 'team-a': { blocked_queries: [{ pattern: ' ' }] } } }).success);
  assert.ok(!runtimeConfigSchema.safeParse({ overrides: { 'team-a': { blocked_queries: [{ pattern: 'up', unknown: 1 }] } } }).success);
});

test("the read limits take Mimir's keys; unset fetched-series and chunk-bytes limits leave the querier's flags in force", () => {
  const overrides = new Overrides({
    defaults: DEFAULT_LIMITS,
    runtimeConfig: () =>
      runtimeConfigSchema.parse({
        overrides: {
          'team-a': {
            max_query_lookback: '7d',
            max_query_parallelism: 2,
            max_fetched_chunks_per_query: 1000,
            max_fetched_series_per_query: 50,
            max_fetched_chunk_bytes_per_query: 1_000_000,
          },
        },
      }),
  });
  const a = overrides.forTenant('team-a');
  assert.deepEqual(
    [a.maxQueryLookbackMs, a.maxQueryParallelism, a.maxFetchedChunksPerQuery, a.maxFetchedSeriesPerQuery, a.maxFetchedChunkBytesPerQuery],
    [7 * 86_400_000, 2, 1000, 50, 1_000_000],
  );
  const b = overrides.forTenant('team-b');
  assert.deepEqual(
    [b.maxQueryLookbackMs, b.maxQueryParallelism, b.maxFetchedChunksPerQuery, b.maxFetchedSeriesPerQuery, b.maxFetchedChunkBytesPerQuery],
    [0, 14, 0, undefined, undefined],
  );
  assert.ok(!runtimeConfigSchema.safeParse({ overrides: { 'team-a': { max_query_parallelism: 0 } } }).success);
});
