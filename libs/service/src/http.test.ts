import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { createHttpServer } from './http.ts';
import { createLogger } from './logger.ts';

test('/healthz answers 200 while /ready says not ready: liveness never depends on what readiness waits for', async () => {
  const app = createHttpServer({
    logger: createLogger('http-test', 'silent'),
    registry: new Registry(),
    readiness: { notReadyReason: () => 'replaying partition 0' },
  });
  try {
    const ready = await app.inject({ method: 'GET', url: '/ready' });
    assert.equal(ready.statusCode, 503);
    assert.equal(ready.body, 'not ready: replaying partition 0\n');
    const live = await app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(live.statusCode, 200);
    assert.equal(live.body, 'ok\n');
  } finally {
    await app.close();
  }
});
