// `npm start`'s single process (-target=all, multi-tenancy off) serves one user
// on one machine: a sustained 100k samples/s from one sender must not meet the
// multi-tenant 10,000 samples/s limit (429). Started with npm start's flags.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { AppProcess } from '@strata/local-cluster';
import { compressBody, encodeWriteRequest } from '@strata/remote-write';
import { pushRaw, type PushResponse } from './support/client.ts';
import { startSingleProcess, type SingleProcess } from './support/single-process.ts';

const SERIES = 1000;
const SAMPLES_PER_SERIES = 10; // per request: 10,000 samples
const REQUESTS_PER_SECOND = 10;
const SECONDS = 20;

describe('single process: one sender at 100k samples/s', { timeout: 600_000 }, () => {
  let sp: SingleProcess;
  let strata: AppProcess;

  before(async () => {
    sp = await startSingleProcess('throughput');
    strata = sp.strata;
  });

  after(async () => {
    await sp?.stop();
  });

  test('the startup log says which per-tenant limits are in force and how to change them', () => {
    const log = readFileSync(strata.opts.logFile, 'utf8');
    assert.match(
      log,
      /per-tenant limits \(single-tenant single-process defaults\): ingestion rate 10000000 samples\/s.*change with -distributor\.ingestion-rate-limit/,
    );
  });

  test(`${REQUESTS_PER_SECOND} pushes/s × ${SERIES * SAMPLES_PER_SERIES} samples for ${SECONDS}s: no 429`, async () => {
    const start = Date.now() - 10 * 60_000;
    const body = (k: number) =>
      compressBody(
        encodeWriteRequest({
          timeseries: Array.from({ length: SERIES }, (_, s) => ({
            labels: [
              { name: '__name__', value: 'throughput_metric' },
              { name: 'instance', value: `host-${s}` },
            ],
            samples: Array.from({ length: SAMPLES_PER_SERIES }, (_, i) => ({ value: k + i, timestamp: start + k * SAMPLES_PER_SERIES + i })),
          })),
        }),
      );
    const total = REQUESTS_PER_SECOND * SECONDS;
    const statuses = new Map<number, number>();
    const errors: string[] = [];
    const inflight: Promise<void>[] = [];
    const t0 = Date.now();
    for (let k = 0; k < total; k++) {
      // Open loop: request k leaves at its slot whatever the earlier ones are doing.
      const wait = t0 + (k * 1000) / REQUESTS_PER_SECOND - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inflight.push(
        pushRaw(strata.url, body(k)).then(
          (r: PushResponse) => {
            statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
            if (r.status >= 300 && errors.length < 3) errors.push(`${r.status} ${r.body.slice(0, 200)}`);
          },
          (err: Error) => void errors.push(err.message),
        ),
      );
    }
    await Promise.all(inflight);
    const seconds = (Date.now() - t0) / 1000;
    const summary = `statuses ${JSON.stringify(Object.fromEntries(statuses))} over ${seconds.toFixed(1)}s; first errors: ${errors.join(' | ')}`;
    assert.equal(statuses.get(429) ?? 0, 0, `rate limited (429) at ${((total * SERIES * SAMPLES_PER_SERIES) / seconds) | 0} samples/s: ${summary}`);
    const overloaded = [...statuses].filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
    assert.equal(overloaded, 0, `no 429, but the machine could not take the load (5xx, a different failure from the limit): ${summary}`);
    assert.equal(statuses.get(200), total, summary);

    // Every acknowledged sample reached the distributor's count.
    const metrics = await (await fetch(`${strata.url}/metrics`)).text();
    const received = metrics
      .split('\n')
      .filter((l) => l.startsWith('strata_distributor_received_samples_total{'))
      .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
    assert.equal(received, total * SERIES * SAMPLES_PER_SERIES);
  });
});
