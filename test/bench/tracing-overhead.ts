// What tracing costs on the hot paths, in one process without Kafka: the ingester appending
// records (one span per record, its parent from the record's traceparent) and PromQL range queries
// through the HTTP API (one span per request; AsyncLocalStorage follows every await).
// Each mode runs in its own process, since the context manager is process-wide:
//
//   node --import tsx test/bench/tracing-overhead.ts            (runs the three modes, prints a table)
//   node --import tsx test/bench/tracing-overhead.ts --mode off (one mode)
//
// Modes: off = no Tracing at all (as before tracing existed); ids = Tracing without an exporter
// (the default deployment: ids, propagation and log correlation, nothing recorded); export = every
// span recorded and handed to an exporter that drops it.

import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { Registry } from 'prom-client';
import { Ingester, type IngestRecord, type RecordSource } from '@strata/ingester';
import { labelsFromRecord } from '@strata/model';
import { Engine } from '@strata/promql';
import { registerPrometheusApi } from '@strata/querier';
import { encodeWriteRequest } from '@strata/remote-write';
import { createHttpServer, createLogger } from '@strata/service';
import { emptyAppendStats } from '@strata/tsdb';
import { TenantHeads } from '@strata/tsdb/testing';
import { Tracing, type SpanExporter, type Tracer } from '@strata/tracing';

type Mode = 'off' | 'ids' | 'export';
const RECORDS = 4000;
const SERIES_PER_RECORD = 100;
const QUERIES = 300;

const dropExporter: SpanExporter = {
  export: (_spans, done) => done({ code: 0 }),
  shutdown: async () => undefined,
};

async function ingest(tracer: Tracer | undefined): Promise<number> {
  const records: IngestRecord[] = [];
  const t0 = 1_700_000_000_000;
  for (let r = 0; r < RECORDS; r++) {
    const timeseries = Array.from({ length: SERIES_PER_RECORD }, (_, s) => ({
      labels: [
        { name: '__name__', value: 'bench' },
        { name: 'series', value: String(s) },
      ],
      samples: [{ value: r, timestamp: t0 + r * 1000 }],
    }));
    const traceparent = `00-${r.toString(16).padStart(32, '0')}-${(r + 1).toString(16).padStart(16, '0')}-01`;
    records.push({ tenant: 'bench', offset: BigInt(r), value: encodeWriteRequest({ timeseries }), headers: { v: '1', traceparent }, timestamp: Date.now() });
  }
  let deliver!: (batch: IngestRecord[]) => Promise<void> | void;
  const source: RecordSource = {
    start: async () => undefined,
    stop: async () => undefined,
    waitCaughtUp: async () => undefined,
    commit: async () => undefined,
    position: () => 0n,
  };
  const ingester = new Ingester({
    identity: { id: 'ingester-zone-a-0', zone: 'a', partition: 0 },
    maxLagForReady: 0,
    logger: createLogger('bench', 'silent'),
    registry: new Registry(),
    tracer,
    createSource: (on) => {
      deliver = on;
      return source;
    },
  });
  await ingester.start();
  const began = performance.now();
  for (let i = 0; i < records.length; i += 100) await deliver(records.slice(i, i + 100));
  const seconds = (performance.now() - began) / 1000;
  await ingester.stop();
  return (RECORDS * SERIES_PER_RECORD) / seconds;
}

async function query(tracer: Tracer | undefined): Promise<number> {
  const heads = new TenantHeads();
  const ts = Float64Array.from({ length: 240 }, (_, i) => i * 15_000);
  for (let s = 0; s < 500; s++) {
    heads.head('t').append(
      labelsFromRecord({ __name__: 'q', series: String(s) }),
      ts,
      Float64Array.from(ts, (t) => t / 1000 + s),
      emptyAppendStats(),
    );
  }
  const logger = createLogger('bench', 'silent');
  const registry = new Registry();
  const app = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });
  registerPrometheusApi(app, {
    querier: heads,
    engine: new Engine({ querier: heads }),
    multitenancyEnabled: true,
    logger,
    registry,
    prefixes: ['/api/v1'],
    tracer,
  });
  const url = '/api/v1/query_range?query=sum(rate(q[5m]))&start=300&end=3585&step=15';
  for (let i = 0; i < 20; i++) await app.inject({ url, headers: { 'x-scope-orgid': 't' } });
  const began = performance.now();
  for (let i = 0; i < QUERIES; i++) {
    const res = await app.inject({ url, headers: { 'x-scope-orgid': 't', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } });
    if (res.statusCode !== 200) throw new Error(res.body);
  }
  const perQueryMs = (performance.now() - began) / QUERIES;
  await app.close();
  return perQueryMs;
}

async function runMode(mode: Mode): Promise<{ samplesPerSecond: number; queryMs: number }> {
  const tracing = mode === 'off' ? undefined : new Tracing({ serviceName: 'bench', env: {}, exporter: mode === 'export' ? dropExporter : undefined });
  const samplesPerSecond = await ingest(tracing?.tracer);
  const queryMs = await query(tracing?.tracer);
  await tracing?.stop();
  return { samplesPerSecond, queryMs };
}

const i = process.argv.indexOf('--mode');
if (i >= 0) {
  console.log(JSON.stringify(await runMode(process.argv[i + 1] as Mode)));
} else {
  const rows: string[] = ['| mode | ingester append, samples/s | range query via API, ms |', '|---|---|---|'];
  for (const mode of ['off', 'ids', 'export'] as Mode[]) {
    const runs: { samplesPerSecond: number; queryMs: number }[] = [];
    for (let r = 0; r < 3; r++) {
      const out = spawnSync(process.execPath, ['--import', 'tsx', process.argv[1], '--mode', mode], { encoding: 'utf8' });
      if (out.status !== 0) throw new Error(`mode ${mode}: ${out.stderr}`);
      runs.push(JSON.parse(out.stdout.trim().split('\n').pop()!) as { samplesPerSecond: number; queryMs: number });
    }
    const median = (xs: number[]) => xs.sort((a, b) => a - b)[1];
    rows.push(
      `| ${mode} | ${Math.round(median(runs.map((x) => x.samplesPerSecond))).toLocaleString('en')} | ${median(runs.map((x) => x.queryMs)).toFixed(2)} |`,
    );
  }
  console.log(rows.join('\n'));
}
