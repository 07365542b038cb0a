// The dashboard and alerting rules for Strata itself (operations/): promtool
// accepts the rules, and every metric they and the dashboard name is exported
// by a running single process after a push, a query and a flush.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { AppProcess, LocalRedis, freePorts } from '@strata/local-cluster';
import { parseExpr, walk } from '@strata/promql';
import { api, generateSeries, push } from './support/client.ts';

const ROOT = join(import.meta.dirname, '..');
const RULES = join(ROOT, 'operations', 'strata-alerts.yaml');
const DASHBOARD = join(ROOT, 'operations', 'strata-dashboard.json');

interface Dashboard {
  panels: { type: string; title: string; targets?: { expr: string }[] }[];
}

function dashboardExprs(): string[] {
  const d = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
  return d.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr));
}

function ruleExprs(): string[] {
  const doc = parse(readFileSync(RULES, 'utf8')) as { groups: { rules: { expr: string }[] }[] };
  return doc.groups.flatMap((g) => g.rules.map((r) => r.expr));
}

/** Metric names an expression selects (Grafana's $__rate_interval read as 5m). */
function metricNames(expr: string): string[] {
  const names: string[] = [];
  walk(parseExpr(expr.replaceAll('$__rate_interval', '5m')), (n) => {
    if (n.kind === 'vectorSelector' && n.name !== undefined) names.push(n.name);
  });
  return names;
}

test('promtool check rules accepts the alerting rules', () => {
  const r = spawnSync('/usr/bin/promtool', ['check', 'rules', RULES], { encoding: 'utf8' });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.match(r.stdout, /SUCCESS: \d+ rules found/);
});

test('the dashboard has a panel for every area to watch, each with a query', () => {
  const d = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
  const rows = d.panels.filter((p) => p.type === 'row').map((p) => p.title);
  assert.deepEqual(rows, ['Writes', 'Ingesters and Kafka', 'Partition ring', 'Blocks and compaction', 'Queries', 'Processes']);
  for (const p of d.panels.filter((p) => p.type !== 'row')) assert.ok((p.targets ?? []).length > 0, p.title);
  const used = new Set(dashboardExprs().flatMap(metricNames));
  for (const m of [
    'strata_ingester_kafka_partition_lag_records',
    'strata_partition_ring_owners',
    'strata_compactor_last_successful_run_timestamp_seconds',
    'strata_querier_request_duration_seconds_bucket',
  ]) {
    assert.ok(used.has(m), m);
  }
});

describe('every metric the dashboard and the rules use exists on a running Strata', { timeout: 600_000 }, () => {
  let strata: AppProcess;
  let redis: LocalRedis;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-monitoring-'));
    redis = await LocalRedis.start(join(dir, 'redis'));
    writeFileSync(join(dir, 'runtime.yaml'), 'overrides: {}\n');
    const [port] = await freePorts(1);
    strata = new AppProcess({
      name: 'strata',
      target: 'all',
      httpPort: port,
      logFile: join(dir, 'strata.log'),
      // The results cache and a runtime config file on, so their metrics are there too.
      args: [
        '-auth.multitenancy-enabled=false',
        `-data-dir=${dir}/data`,
        `-server.http-listen-port=${port}`,
        `-query-frontend.results-cache.redis.endpoint=${redis.endpoint}`,
        `-runtime-config.file=${join(dir, 'runtime.yaml')}`,
      ],
    });
    strata.start();
    await strata.waitReady(180_000);
  });

  after(async () => {
    await strata?.kill('SIGTERM');
    await redis?.kill('SIGTERM');
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  test('after a push, a query and a flush', async () => {
    const start = Date.now() - 10 * 60_000;
    const res = await push(strata.url, generateSeries('monitoring_metric', 10, 10, start, 10_000));
    assert.equal(res.status, 200, res.body);
    const q = await api(strata.url, '/prometheus/api/v1/query_range', {
      query: 'sum(monitoring_metric)',
      start: String(start / 1000),
      end: String((start + 90_000) / 1000),
      step: '10s',
    });
    assert.equal(q.httpStatus, 200, q.error);
    const flush = await fetch(`${strata.url}/ingester/flush?wait=true`, { method: 'POST' });
    assert.equal(flush.status, 204);

    const text = await (await fetch(`${strata.url}/metrics`)).text();
    const exported = new Set<string>();
    for (const line of text.split('\n')) {
      const typed = /^# TYPE (\S+) (histogram|summary|counter|gauge)/.exec(line);
      if (typed) {
        exported.add(typed[1]);
        if (typed[2] === 'histogram') for (const s of ['_bucket', '_count', '_sum']) exported.add(typed[1] + s);
        if (typed[2] === 'summary') for (const s of ['_count', '_sum']) exported.add(typed[1] + s);
      } else if (/^[a-zA-Z_:]/.test(line)) exported.add(line.split(/[{ ]/)[0]);
    }
    const used = new Map<string, string>();
    for (const expr of dashboardExprs()) for (const m of metricNames(expr)) used.set(m, 'dashboard');
    for (const expr of ruleExprs()) for (const m of metricNames(expr)) used.set(m, used.has(m) ? 'dashboard and rules' : 'rules');
    assert.ok(used.size > 25, `${used.size} metrics used`);
    const missing = [...used].filter(([m]) => !exported.has(m)).map(([m, where]) => `${m} (${where})`);
    assert.deepEqual(missing, [], 'metrics used by the dashboard or the rules that no single process exports');
  });
});
