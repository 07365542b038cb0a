// The ruler in the single process with multi-tenancy on, against real
// components: rule groups uploaded through Mimir's config API; recording-rule
// output equal to what a real Prometheus 2.42 evaluates over the same samples
// (remote-written to both, the same rules file in its rule_files); an
// alerting rule with `for: 30s` goes pending → firing, reaches a real
// Alertmanager 0.25 (Debian's) with its labels and annotations, and resolves;
// /api/v1/rules and /api/v1/alerts in Prometheus' shape; two tenants' rules
// never see each other's data.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { compressBody, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';
import { api, push, waitFor, type MatrixSeries, type VectorSample } from './support/client.ts';
import { scrape } from './support/metrics.ts';

const PROMETHEUS = '/usr/bin/prometheus';
const ALERTMANAGER = '/usr/bin/prometheus-alertmanager';

const REC_GROUP = `name: rec
interval: 5s
rules:
  - record: job:e2e_requests:rate2m
    expr: sum by (job) (rate(e2e_requests_total[2m]))
  - record: job:e2e_gauge:sum2
    expr: sum by (job) (e2e_gauge) * 2
  - record: job:e2e_gauge:sum2_plus_one
    expr: job:e2e_gauge:sum2 + 1
`;

const ALERT_GROUP = `name: alerts
interval: 5s
rules:
  - alert: E2EHigh
    expr: e2e_alert_gauge > 5
    for: 30s
    labels:
      severity: page
    annotations:
      summary: "{{ $labels.instance }} is at {{ $value }}"
      description: "{{ $value | humanize }} over 5"
`;

interface AmAlert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  status: { state: string };
}

describe('ruler on a single process, with Prometheus 2.42 and Alertmanager', { timeout: 600_000 }, () => {
  let strata: AppProcess;
  let dir: string;
  let am: ChildProcess;
  let prom: ChildProcess;
  let amUrl: string;
  let promUrl: string;
  const stderr = { am: '', prom: '' };
  const A = { 'x-scope-orgid': 'team-a' };
  const B = { 'x-scope-orgid': 'team-b' };
  const now = Date.now();

  const spawnLogged = (bin: string, args: string[], key: 'am' | 'prom') => {
    const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr!.on('data', (d: Buffer) => (stderr[key] = (stderr[key] + d.toString()).slice(-4000)));
    return child;
  };

  before(async () => {
    assert.ok(existsSync(ALERTMANAGER), 'alertmanager not found: install Debian package "prometheus-alertmanager" (.ci/run does)');
    assert.ok(existsSync(PROMETHEUS), 'prometheus not found: install Debian package "prometheus" (.ci/run does)');
    dir = mkdtempSync(join(tmpdir(), 'strata-ruler-'));
    const [port, amPort, promPort] = await freePorts(3);
    amUrl = `http://127.0.0.1:${amPort}`;
    promUrl = `http://127.0.0.1:${promPort}`;

    mkdirSync(join(dir, 'am'));
    writeFileSync(join(dir, 'am', 'alertmanager.yml'), "route:\n  receiver: 'null'\n  group_wait: 1s\nreceivers:\n  - name: 'null'\n");
    am = spawnLogged(
      ALERTMANAGER,
      [
        `--config.file=${join(dir, 'am', 'alertmanager.yml')}`,
        `--storage.path=${join(dir, 'am', 'data')}`,
        `--web.listen-address=127.0.0.1:${amPort}`,
        '--cluster.listen-address=',
      ],
      'am',
    );

    // Prometheus evaluates the same rules file over the same samples, remote-written to it.
    const asListItem = (g: string) =>
      `${g
        .trimEnd()
        .replace(/^/gm, '    ')
        .replace(/^ {4}name/, '  - name')}\n`;
    writeFileSync(join(dir, 'rules.yml'), `groups:\n${asListItem(REC_GROUP)}${asListItem(ALERT_GROUP)}`);
    writeFileSync(join(dir, 'prometheus.yml'), `global:\n  evaluation_interval: 5s\nrule_files:\n  - ${join(dir, 'rules.yml')}\n`);
    prom = spawnLogged(
      PROMETHEUS,
      [
        `--config.file=${join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${join(dir, 'prometheus')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        '--web.enable-remote-write-receiver',
      ],
      'prom',
    );

    strata = new AppProcess({
      name: 'strata',
      target: 'all',
      httpPort: port,
      logFile: join(dir, 'strata.log'),
      args: [`-data-dir=${dir}/data`, `-server.http-listen-port=${port}`, `-ruler.alertmanager-url=${amUrl}`, '-ruler.external.url=http://strata.example'],
    });
    strata.start();
    await strata.waitReady(180_000);
    await waitFor('Alertmanager ready', async () => ((await fetch(`${amUrl}/-/ready`)).ok ? true : undefined), 60_000).catch((err: Error) =>
      assert.fail(`${err.message}\n${stderr.am}`),
    );
    await waitFor('Prometheus ready', async () => ((await fetch(`${promUrl}/-/ready`)).ok ? true : undefined), 60_000).catch((err: Error) =>
      assert.fail(`${err.message}\n${stderr.prom}`),
    );
  });

  after(async () => {
    await strata?.kill('SIGTERM');
    for (const c of [am, prom]) if (c && c.exitCode === null && c.pid) process.kill(c.pid, 'SIGKILL');
    if (process.env.STRATA_KEEP_TEST_DATA === undefined && dir) rmSync(dir, { recursive: true, force: true });
  });

  const upload = async (headers: Record<string, string>, namespace: string, yaml: string) => {
    const res = await fetch(`${strata.url}/prometheus/config/v1/rules/${encodeURIComponent(namespace)}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/yaml' },
      body: yaml,
    });
    assert.equal(res.status, 202, await res.text());
  };

  test('a rules file uploaded through the config API; bad rules are refused with the reason', async () => {
    await upload(A, 'e2e', REC_GROUP);
    await upload(A, 'e2e', ALERT_GROUP);
    const bad = await fetch(`${strata.url}/prometheus/config/v1/rules/e2e`, {
      method: 'POST',
      headers: { ...A, 'content-type': 'application/yaml' },
      body: 'name: bad\nrules:\n  - record: x\n    expr: rate(up[5m]\n',
    });
    assert.equal(bad.status, 400);
    assert.match(await bad.text(), /could not parse expression/);
    const listed = await fetch(`${strata.url}/prometheus/config/v1/rules`, { headers: A });
    assert.equal(listed.status, 200);
    const text = await listed.text();
    assert.match(text, /^e2e:\n/);
    assert.match(text, /- name: alerts\n/);
    assert.match(text, /- name: rec\n/);
    // Tenant B has none.
    assert.equal((await fetch(`${strata.url}/prometheus/config/v1/rules`, { headers: B })).status, 404);
  });

  test('recording rules: Strata writes what Prometheus 2.42 evaluates over the same samples', async () => {
    // 3 counters and 3 gauges, 15s apart over the last 4 minutes, to Strata (team-a) and to Prometheus.
    const start = now - 16 * 15_000;
    const series: SeriesInput[] = [];
    for (let s = 0; s < 3; s++) {
      const labels = (name: string) => [
        { name: '__name__', value: name },
        { name: 'instance', value: `host-${s}` },
        { name: 'job', value: 'e2e' },
      ];
      series.push({
        labels: labels('e2e_requests_total'),
        samples: Array.from({ length: 17 }, (_, i) => ({ value: i * (s + 1) * 7.5 + (i > 10 ? 3 : 0), timestamp: start + i * 15_000 })),
      });
      series.push({
        labels: labels('e2e_gauge'),
        samples: Array.from({ length: 17 }, (_, i) => ({ value: 10 * (s + 1) + 0.25, timestamp: start + i * 15_000 })),
      });
    }
    assert.equal((await push(strata.url, series, A)).status, 200);
    const promWrite = await fetch(`${promUrl}/api/v1/write`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' },
      body: compressBody(encodeWriteRequest({ timeseries: series })),
    });
    assert.equal(promWrite.status, 204, await promWrite.text());

    // Both wrote the chained rule (its input is the first rule's output, read with strong consistency).
    const recorded = async (url: string, prefix: string, query: string, headers: Record<string, string>) =>
      waitFor(
        `${query} recorded at ${url}`,
        async () => {
          const r = await api<{ result: VectorSample[] }>(url, `${prefix}/query`, { query }, { headers });
          return r.data.result.length > 0 ? r.data.result : undefined;
        },
        60_000,
      );
    const strataSum = await recorded(strata.url, '/prometheus/api/v1', 'job:e2e_gauge:sum2_plus_one', A);
    const promSum = await recorded(promUrl, '/api/v1', 'job:e2e_gauge:sum2_plus_one', {});
    assert.deepEqual(
      strataSum.map((s) => [s.metric, s.value[1]]),
      promSum.map((s) => [s.metric, s.value[1]]),
    );
    assert.deepEqual(strataSum[0].metric, { __name__: 'job:e2e_gauge:sum2_plus_one', job: 'e2e' });
    assert.equal(strataSum[0].value[1], String((10.25 + 20.25 + 30.25) * 2 + 1));

    // The rate rule: each side's recorded samples equal the other side evaluating the expression at their timestamps.
    const expr = 'sum by (job) (rate(e2e_requests_total[2m]))';
    const samplesOf = async (url: string, prefix: string, headers: Record<string, string>) =>
      waitFor(
        `recorded rate samples at ${url}`,
        async () => {
          const r = await api<{ result: MatrixSeries[] }>(url, `${prefix}/query`, { query: 'job:e2e_requests:rate2m[1m]' }, { headers });
          return (r.data.result[0]?.values.length ?? 0) >= 2 ? r.data.result[0].values : undefined;
        },
        60_000,
      );
    const ours = await samplesOf(strata.url, '/prometheus/api/v1', A);
    const theirs = await samplesOf(promUrl, '/api/v1', {});
    // Equal to the last bits but one: Strata sums with Kahan compensation as Prometheus 3 does, the
    // Debian Prometheus 2.42 adds plainly, so a sum of rates may differ in its last binary digit.
    const same = (a: string | undefined, b: string) => a !== undefined && Math.abs(Number(a) - Number(b)) <= 1e-12 * Math.max(1, Math.abs(Number(b)));
    for (const [t, v] of ours.slice(-2)) {
      const p = await api<{ result: VectorSample[] }>(promUrl, '/api/v1/query', { query: expr, time: String(t) });
      assert.ok(same(p.data.result[0]?.value[1], v), `Prometheus evaluates ${expr} at ${t} as ${p.data.result[0]?.value[1]}, Strata recorded ${v}`);
    }
    for (const [t, v] of theirs.slice(-2)) {
      const s = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', { query: expr, time: String(t) }, { headers: A });
      assert.ok(same(s.data.result[0]?.value[1], v), `Strata evaluates ${expr} at ${t} as ${s.data.result[0]?.value[1]}, Prometheus recorded ${v}`);
    }
    // Recorded at the group's aligned timestamps, 5 s apart.
    assert.equal(Math.round((ours[ours.length - 1][0] - ours[ours.length - 2][0]) * 1000), 5000);
  });

  test('/api/v1/rules answers in the JSON shape Prometheus 2.42 answers', async () => {
    const ours = await waitFor('rules evaluated', async () => {
      const r = await api<{ groups: Record<string, unknown>[] }>(strata.url, '/prometheus/api/v1/rules', {}, { headers: A });
      const rec = r.data.groups.find((g) => g.name === 'rec');
      return rec && (rec.rules as { health: string }[]).every((x) => x.health === 'ok') ? r.data : undefined;
    });
    const theirs = (await api<{ groups: Record<string, unknown>[] }>(promUrl, '/api/v1/rules', {})).data;
    // The same groups, rules and fields as Prometheus' (the alerting rule is inactive on both sides yet); times and file paths differ.
    const strip = (g: Record<string, unknown>) => ({
      ...g,
      file: '',
      evaluationTime: 0,
      lastEvaluation: '',
      rules: (g.rules as Record<string, unknown>[]).map((r) => ({ ...r, evaluationTime: 0, lastEvaluation: '' })),
    });
    assert.deepEqual(ours.groups.map(strip), theirs.groups.map(strip));
    const oursRec = ours.groups.find((g) => g.name === 'rec')!;
    assert.equal(oursRec.file, 'e2e');
    assert.equal(oursRec.interval, 5);
    assert.match(oursRec.lastEvaluation as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const onlyAlerts = await api<{ groups: { name: string; rules: { type: string }[] }[] }>(
      strata.url,
      '/prometheus/api/v1/rules',
      { type: 'alert' },
      { headers: A },
    );
    assert.deepEqual(
      onlyAlerts.data.groups.map((g) => [g.name, g.rules.map((r) => r.type)]),
      [['alerts', ['alerting']]],
    );
    const byName = await api<{ groups: { name: string; rules: { name: string }[] }[] }>(
      strata.url,
      '/prometheus/api/v1/rules',
      { 'rule_name[]': 'job:e2e_gauge:sum2', 'file[]': 'e2e' },
      { headers: A },
    );
    assert.deepEqual(
      byName.data.groups.map((g) => g.rules.map((r) => r.name)),
      [['job:e2e_gauge:sum2']],
    );
  });

  test('an alert with for: 30s goes pending → firing, reaches Alertmanager, and resolves when the condition clears', async () => {
    const t0 = Date.now();
    const gauge = (value: number) =>
      push(
        strata.url,
        [
          {
            labels: [
              { name: '__name__', value: 'e2e_alert_gauge' },
              { name: 'instance', value: 'h1' },
              { name: 'job', value: 'e2e' },
            ],
            samples: [{ value, timestamp: Date.now() }],
          },
        ],
        A,
      );
    assert.equal((await gauge(10)).status, 200);
    const pending = await waitFor(
      'pending alert',
      async () => {
        const r = await api<{
          alerts: { state: string; labels: Record<string, string>; annotations: Record<string, string>; activeAt: string; value: string }[];
        }>(strata.url, '/prometheus/api/v1/alerts', {}, { headers: A });
        return r.data.alerts.find((a) => a.labels.alertname === 'E2EHigh');
      },
      30_000,
    );
    assert.equal(pending.state, 'pending');
    assert.deepEqual(Object.keys(pending), ['labels', 'annotations', 'state', 'activeAt', 'value']);
    assert.deepEqual(pending.labels, { alertname: 'E2EHigh', instance: 'h1', job: 'e2e', severity: 'page' });
    assert.equal(pending.value, '1e+01');
    // Not in Alertmanager while pending.
    const amAlerts = async () => (await (await fetch(`${amUrl}/api/v2/alerts?filter=alertname%3D%22E2EHigh%22`)).json()) as AmAlert[];
    assert.deepEqual(await amAlerts(), []);

    const inAm = await waitFor(
      'the alert in Alertmanager',
      async () => {
        const list = await amAlerts();
        return list.length > 0 ? list : undefined;
      },
      90_000,
    ).catch((err: Error) => assert.fail(`${err.message}\n${stderr.am}`));
    const firedAfter = Date.now() - t0;
    assert.ok(firedAfter >= 30_000, `fired after ${firedAfter} ms, before for: 30s`);
    assert.equal(inAm.length, 1);
    assert.deepEqual(inAm[0].labels, { alertname: 'E2EHigh', instance: 'h1', job: 'e2e', severity: 'page' });
    assert.deepEqual(inAm[0].annotations, { summary: 'h1 is at 10', description: '10 over 5' });
    assert.equal(inAm[0].status.state, 'active');
    const rules = await api<{ groups: { name: string; rules: { state: string; alerts: { state: string }[] }[] }[] }>(
      strata.url,
      '/prometheus/api/v1/rules',
      { type: 'alert' },
      { headers: A },
    );
    assert.equal(rules.data.groups[0].rules[0].state, 'firing');
    // ALERTS is written back and queryable like any series.
    await waitFor('ALERTS{alertstate="firing"}', async () => {
      const r = await api<{ result: VectorSample[] }>(
        strata.url,
        '/prometheus/api/v1/query',
        { query: 'ALERTS{alertname="E2EHigh",alertstate="firing"}' },
        { headers: A },
      );
      return r.data.result.length === 1 ? true : undefined;
    });

    // The condition clears: resolved, sent with endsAt, gone from Alertmanager's active alerts.
    assert.equal((await gauge(1)).status, 200);
    await waitFor('the alert resolved in Alertmanager', async () => ((await amAlerts()).length === 0 ? true : undefined), 60_000);
    const after = await api<{ alerts: unknown[] }>(strata.url, '/prometheus/api/v1/alerts', {}, { headers: A });
    assert.deepEqual(after.data.alerts, []);
    const page = await scrape(strata.url);
    assert.ok((page.sum('strata_ruler_notifications_sent_total', {}) ?? 0) >= 2, 'firing and resolved were sent');
  });

  test("two tenants' rules never see each other's data", async () => {
    const start = now - 4 * 15_000;
    const series: SeriesInput[] = [
      {
        labels: [
          { name: '__name__', value: 'e2e_gauge' },
          { name: 'instance', value: 'b-0' },
          { name: 'job', value: 'e2e' },
        ],
        samples: Array.from({ length: 5 }, (_, i) => ({ value: 1, timestamp: start + i * 15_000 })),
      },
    ];
    assert.equal((await push(strata.url, series, B)).status, 200);
    await upload(
      B,
      'b',
      'name: b\ninterval: 5s\nrules:\n  - record: tenant:e2e_gauge:count\n    expr: count(e2e_gauge)\n  - record: tenant:a_output:count\n    expr: count(job:e2e_gauge:sum2) or vector(0)\n',
    );
    await upload(A, 'a-count', 'name: a-count\ninterval: 5s\nrules:\n  - record: tenant:e2e_gauge:count\n    expr: count(e2e_gauge)\n');
    const value = async (headers: Record<string, string>, query: string) =>
      waitFor(
        `${query} for ${headers['x-scope-orgid']}`,
        async () => {
          const r = await api<{ result: VectorSample[] }>(strata.url, '/prometheus/api/v1/query', { query }, { headers });
          return r.data.result[0]?.value[1];
        },
        60_000,
      );
    assert.equal(await value(B, 'tenant:e2e_gauge:count'), '1');
    assert.equal(await value(A, 'tenant:e2e_gauge:count'), '3');
    assert.equal(await value(B, 'tenant:a_output:count'), '0', "tenant b's rule cannot read tenant a's recorded series");
    const bRules = await api<{ groups: { name: string }[] }>(strata.url, '/prometheus/api/v1/rules', {}, { headers: B });
    assert.deepEqual(
      bRules.data.groups.map((g) => g.name),
      ['b'],
    );
    const bAlerts = await api<{ alerts: unknown[] }>(strata.url, '/prometheus/api/v1/alerts', {}, { headers: B });
    assert.deepEqual(bAlerts.data.alerts, []);
    const noTenant = await fetch(`${strata.url}/prometheus/api/v1/rules`);
    assert.equal(noTenant.status, 401);
  });
});
