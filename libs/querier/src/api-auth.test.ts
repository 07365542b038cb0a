// Credentials on the query API: a missing or wrong token is a 401 before the
// querier is asked anything; the right one reads the tenant's data.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { labelsFromRecord, type LabelValuesParams, type Querier, type SelectParams, type Series } from '@strata/model';
import { Engine } from '@strata/promql';
import { emptyAppendStats } from '@strata/tsdb';
import { TenantHeads } from '@strata/tsdb/testing';
import { TokensAuthenticator, createHttpServer, createLogger, tokensFileSchema } from '@strata/service';
import { registerPrometheusApi } from './index.ts';

class CountingQuerier implements Querier {
  calls = 0;
  private readonly inner: Querier;

  constructor(inner: Querier) {
    this.inner = inner;
  }
  select(p: SelectParams): Promise<Series[]> {
    this.calls++;
    return this.inner.select(p);
  }
  labelNames(p: SelectParams): Promise<string[]> {
    this.calls++;
    return this.inner.labelNames(p);
  }
  labelValues(p: LabelValuesParams): Promise<string[]> {
    this.calls++;
    return this.inner.labelValues(p);
  }
}

test('query API: 401 with a reason and a challenge for missing or wrong credentials, nothing read; 200 with the right ones', async () => {
  const heads = new TenantHeads();
  heads.head('t1').append(labelsFromRecord({ __name__: 'up', job: 'api' }), new Float64Array([0]), new Float64Array([1]), emptyAppendStats());
  const querier = new CountingQuerier(heads);
  const logger = createLogger('test', 'silent');
  const registry = new Registry();
  const app = createHttpServer({ logger, registry, readiness: { notReadyReason: () => undefined } });
  registerPrometheusApi(app, {
    querier,
    engine: new Engine({ querier }),
    multitenancyEnabled: true,
    logger,
    registry,
    prefixes: ['/api/v1'],
    auth: new TokensAuthenticator(tokensFileSchema.parse({ tenants: { t1: { basic_auth: { username: 'grafana', password: 'pw' } } } })),
  });
  const basic = (u: string, p: string) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64');
  for (const url of ['/api/v1/query?query=up&time=0', '/api/v1/series?match[]=up', '/api/v1/labels', '/api/v1/label/job/values']) {
    for (const authorization of [undefined, basic('grafana', 'wrong'), 'Bearer pw']) {
      const res = await app.inject({ method: 'GET', url, headers: { 'x-scope-orgid': 't1', ...(authorization ? { authorization } : {}) } });
      assert.equal(res.statusCode, 401, `${url} ${authorization}`);
      assert.match(res.json().error, /^(no credentials|wrong credentials)\b.*tenant "t1"/);
      assert.equal(res.headers['www-authenticate'], 'Bearer realm="strata", Basic realm="strata"');
    }
  }
  assert.equal(querier.calls, 0, 'nothing read');
  const ok = await app.inject({
    method: 'GET',
    url: '/api/v1/query?query=up&time=0',
    headers: { 'x-scope-orgid': 't1', authorization: basic('grafana', 'pw') },
  });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(ok.json().data.result.length, 1);
});
