// Per-tenant limits and credentials end to end in single-process mode (real
// Kafka): a tenant over its ingestion rate gets 429 with a reason; raising its
// limit in the runtime config file applies without a restart; a broken file
// keeps the last good config; a missing or wrong token is 401 on push and on
// query, and nothing is written or read.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { api, generateSeries, push, waitFor, type VectorSample } from './support/client.ts';

describe('per-tenant limits and auth in single-process mode', { timeout: 300_000 }, () => {
  let strata: AppProcess;
  let dir: string;
  let runtimeFile: string;
  const start = Math.floor(Date.now() / 1000) * 1000 - 5 * 60_000;
  const at = String((start + 60_000) / 1000);

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'strata-limits-'));
    runtimeFile = join(dir, 'runtime.yaml');
    writeFileSync(runtimeFile, 'overrides:\n  limited:\n    ingestion_rate: 1\n    ingestion_burst_size: 100\n');
    const tokensFile = join(dir, 'tokens.yaml');
    writeFileSync(tokensFile, 'tenants:\n  secure:\n    bearer_token: s3cret-token\n');
    const [port] = await freePorts(1);
    strata = new AppProcess({
      name: 'strata',
      target: 'all',
      httpPort: port,
      logFile: join(dir, 'strata.log'),
      args: [
        `-data-dir=${dir}/data`,
        `-server.http-listen-port=${port}`,
        '-auth.multitenancy-enabled=true',
        `-runtime-config.file=${runtimeFile}`,
        '-runtime-config.reload-period=200ms',
        `-auth.tokens-file=${tokensFile}`,
        '-auth.tokens-reload-period=200ms',
      ],
    });
    strata.start();
    await strata.waitReady(180_000);
  });

  after(async () => {
    await strata?.kill('SIGTERM');
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  const count = async (tenant: string, metric: string, headers: Record<string, string> = {}) => {
    const r = await api<{ result: VectorSample[] }>(
      strata.url,
      '/prometheus/api/v1/query',
      { query: `count(${metric})`, time: at },
      {
        headers: { 'x-scope-orgid': tenant, ...headers },
      },
    );
    assert.equal(r.httpStatus, 200, r.error);
    return r.data.result[0]?.value[1];
  };

  async function gauge(name: string): Promise<string | undefined> {
    const text = await (await fetch(`${strata.url}/metrics`)).text();
    return text.match(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm'))?.[1];
  }

  test('over its rate a tenant gets 429 naming the limit; raising it in the overrides file applies without a restart', async () => {
    const pid = strata.pid;
    const tenant = { 'x-scope-orgid': 'limited' };
    const first = await push(strata.url, generateSeries('e2e_rate_ok', 60, 1, start, 15_000), tenant);
    assert.equal(first.status, 200, first.body);

    const over = await push(strata.url, generateSeries('e2e_rate_rejected', 60, 1, start, 15_000), tenant);
    assert.equal(over.status, 429);
    assert.match(
      over.body,
      /tenant "limited" exceeded its ingestion rate limit of 1 samples\/s with a burst of 100 .*raise ingestion_rate \/ ingestion_burst_size/,
    );
    assert.equal(over.body.trim().split('\n').length, 1);
    assert.equal((await push(strata.url, generateSeries('e2e_rate_other', 60, 1, start, 15_000), { 'x-scope-orgid': 'unlimited' })).status, 200);

    writeFileSync(runtimeFile, 'overrides:\n  limited:\n    ingestion_rate: 100000\n    ingestion_burst_size: 1000000\n');
    const raised = await waitFor(
      'the raised limit to apply',
      async () => {
        const r = await push(strata.url, generateSeries('e2e_rate_raised', 500, 1, start, 15_000), tenant);
        return r.status === 200 ? r : undefined;
      },
      20_000,
    );
    assert.equal(raised.status, 200);
    assert.equal(strata.pid, pid, 'same process: no restart');

    await waitFor('e2e_rate_raised readable', async () => ((await count('limited', 'e2e_rate_raised')) === '500' ? true : undefined));
    assert.equal(await count('limited', 'e2e_rate_ok'), '60');
    assert.equal(await count('limited', 'e2e_rate_rejected'), undefined, 'the 429 push wrote nothing');
  });

  test('a broken overrides file keeps the last good config and says why', async () => {
    writeFileSync(runtimeFile, 'overrides:\n  limited:\n    ingestion_rat: 1\n');
    await waitFor('the reload to fail', async () => ((await gauge('strata_runtime_config_last_reload_successful')) === '0' ? true : undefined), 20_000);
    const log = readFileSync(strata.opts.logFile, 'utf8');
    assert.match(log, /runtime config reload failed; keeping the last good runtime config: invalid: overrides\.limited: .*ingestion_rat/);
    const r = await push(strata.url, generateSeries('e2e_rate_after_bad_file', 500, 1, start, 15_000), { 'x-scope-orgid': 'limited' });
    assert.equal(r.status, 200, 'the raised limit still applies');
  });

  test("a tenant's metric_relabel_configs drop and rewrite its series before they are written; another tenant is untouched; a bad rule keeps the old ones", async () => {
    const rules = [
      'overrides:',
      '  limited:',
      '    ingestion_rate: 100000',
      '    ingestion_burst_size: 1000000',
      '  relabelled:',
      '    metric_relabel_configs:',
      '      - { action: drop, source_labels: [__name__], regex: "e2e_relabel_noise" }',
      '      - { source_labels: [instance], regex: "host-(.*)", target_label: node, replacement: "n$1" }',
    ];
    writeFileSync(runtimeFile, [...rules, '    drop_labels: [instance]', ''].join('\n'));
    await waitFor('the rules to load', async () => ((await gauge('strata_runtime_config_last_reload_successful')) === '1' ? true : undefined), 20_000);
    for (const tenant of ['relabelled', 'plain']) {
      for (const metric of ['e2e_relabel_noise', 'e2e_relabel_kept']) {
        const r = await push(strata.url, generateSeries(metric, 20, 1, start, 15_000), { 'x-scope-orgid': tenant });
        assert.equal(r.status, 200, r.body);
      }
    }
    await waitFor('both tenants readable', async () =>
      (await count('plain', 'e2e_relabel_kept')) === '20' && (await count('relabelled', 'e2e_relabel_kept')) === '20' ? true : undefined,
    );
    assert.equal(await count('relabelled', 'e2e_relabel_noise'), undefined, 'dropped before it was written');
    assert.equal(await count('plain', 'e2e_relabel_noise'), '20', 'the other tenant keeps it');
    const series = await api<Record<string, string>[]>(
      strata.url,
      '/prometheus/api/v1/series',
      { 'match[]': 'e2e_relabel_kept{node="n3"}' },
      { headers: { 'x-scope-orgid': 'relabelled' } },
    );
    assert.deepEqual(series.data, [{ __name__: 'e2e_relabel_kept', job: 'e2e', node: 'n3' }], 'instance became node, then was dropped');
    const metrics = await (await fetch(`${strata.url}/metrics`)).text();
    assert.match(metrics, /^strata_distributor_relabel_dropped_series_total\{tenant="relabelled"[^}]*\} 20$/m);

    writeFileSync(runtimeFile, [...rules, '      - { action: hashmod, source_labels: [job], target_label: shard }', ''].join('\n'));
    await waitFor('the bad rule to be refused', async () => ((await gauge('strata_runtime_config_last_reload_successful')) === '0' ? true : undefined), 20_000);
    assert.match(
      readFileSync(strata.opts.logFile, 'utf8'),
      /runtime config reload failed; keeping the last good runtime config: .*relabel config 2: the hashmod action requires a non-zero modulus/,
    );
    // Kafka produce requests so far: a push whose every series a rule drops sends nothing to Kafka.
    const produced = async () =>
      (await (await fetch(`${strata.url}/metrics`)).text())
        .split('\n')
        .filter((l) => l.startsWith('strata_distributor_kafka_produce_duration_seconds_count'))
        .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
    const before = await produced();
    assert.equal((await push(strata.url, generateSeries('e2e_relabel_noise', 20, 1, start + 15_000, 15_000), { 'x-scope-orgid': 'relabelled' })).status, 200);
    assert.equal(await produced(), before, 'the dropped series never reached Kafka');
    assert.equal((await push(strata.url, generateSeries('e2e_relabel_noise', 20, 1, start + 15_000, 15_000), { 'x-scope-orgid': 'plain' })).status, 200);
    assert.ok((await produced()) > before, "the other tenant's series did");
    await waitFor(
      'the old rules still dropping',
      async () => (/tenant="relabelled"[^}]*\} 40$/m.test(await (await fetch(`${strata.url}/metrics`)).text()) ? true : undefined),
      20_000,
    );
  });

  test('a missing or wrong token is 401 on push and on query; nothing is written or read', async () => {
    const series = generateSeries('e2e_auth_denied', 10, 1, start, 15_000);
    for (const headers of [{ 'x-scope-orgid': 'secure' }, { 'x-scope-orgid': 'secure', authorization: 'Bearer wrong' }] as Record<string, string>[]) {
      const res = await push(strata.url, series, headers);
      assert.equal(res.status, 401);
      assert.match(res.body, /^(no credentials: tenant "secure" requires|wrong credentials for tenant "secure")/);
    }
    const ok = await push(strata.url, generateSeries('e2e_auth_ok', 10, 1, start, 15_000), { 'x-scope-orgid': 'secure', authorization: 'Bearer s3cret-token' });
    assert.equal(ok.status, 200, ok.body);

    for (const authorization of [undefined, 'Bearer wrong']) {
      const q = await api(
        strata.url,
        '/prometheus/api/v1/query',
        { query: 'count(e2e_auth_ok)', time: at },
        {
          headers: { 'x-scope-orgid': 'secure', ...(authorization ? { authorization } : {}) },
        },
      );
      assert.equal(q.httpStatus, 401);
      assert.equal(q.status, 'error');
      assert.match(q.error ?? '', /tenant "secure"/);
      assert.equal(q.data, undefined, 'no data in a refused answer');
    }

    const good = { authorization: 'Bearer s3cret-token' };
    await waitFor('e2e_auth_ok readable with the token', async () => ((await count('secure', 'e2e_auth_ok', good)) === '10' ? true : undefined));
    // One partition, consumed in order: the denied pushes came first, so had they been written they would show now.
    assert.equal(await count('secure', 'e2e_auth_denied', good), undefined, 'the 401 pushes wrote nothing');
  });
});
