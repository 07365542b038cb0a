// Fuzzes a real distributor process (real Kafka) with >= 10,000 push requests
// mutated from valid remote write 1.0 / 2.0 and OTLP bodies: every answer must be
// 2xx, or 4xx with a one-line reason; never 5xx, never a hang; the process stays
// up and its memory bounded. Seeded: STRATA_FUZZ_SEED=<n> replays a run.

import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppProcess } from '@strata/local-cluster';
import { startDistributorWithKafka, type DistributorWithKafka } from './support/distributor.ts';
import { scrape } from './support/metrics.ts';
import { FuzzCorpus, Rng, type FuzzRequest } from './support/fuzz-bodies.ts';

const REQUESTS = Number(process.env.STRATA_FUZZ_REQUESTS ?? 10_000);
const CONCURRENCY = 8;
const MAX_RECV = 10 << 20;

async function rssBytes(url: string): Promise<number> {
  const rss = (await scrape(url)).sum('process_resident_memory_bytes');
  assert.ok(rss !== undefined, 'process_resident_memory_bytes missing from /metrics');
  return rss;
}

const mb = (b: number) => `${(b / 2 ** 20).toFixed(1)} MB`;

describe('write-path fuzz against a real distributor and Kafka', { timeout: 600_000 }, () => {
  let env: DistributorWithKafka;
  let distributor: AppProcess;

  before(async () => {
    env = await startDistributorWithKafka({
      name: 'fuzz',
      partitions: 2,
      args: [
        `-distributor.max-recv-msg-size=${MAX_RECV}`,
        // As a careful operator would set them: the hostile bodies (a million empty series, 300,000 points) are refused before decoding.
        '-distributor.max-series-per-request=100000',
        // Limits out of the way, so most valid bodies reach Kafka.
        '-distributor.ingestion-rate-limit=100000000',
        '-distributor.ingestion-burst-size=100000000',
      ],
    });
    distributor = env.distributor;
  });

  after(async () => {
    await env?.stop();
  });

  test(`${REQUESTS} mutated RW 1.0, RW 2.0 and OTLP requests: 2xx or 4xx with a one-line reason, process up, memory bounded`, async () => {
    const seed = Number(process.env.STRATA_FUZZ_SEED ?? Date.now() % 2 ** 31);
    console.log(`fuzz seed ${seed} (replay: STRATA_FUZZ_SEED=${seed} node scripts/test.mjs test/fuzz-push.test.ts)`);
    const rng = new Rng(seed);
    const corpus = new FuzzCorpus(Date.now());
    // Generated up front so the sequence does not depend on answer timing.
    const requests: FuzzRequest[] = Array.from({ length: REQUESTS }, (_, i) => corpus.next(rng, `fuzz-${i % 3}`));
    const pid = distributor.pid!;
    const rss = { start: await rssBytes(distributor.url), middle: 0, end: 0 };
    const statuses = new Map<string, number>();
    const byProtocol = new Map<string, number>();
    const failures: string[] = [];
    let next = 0;
    let done = 0;
    let slowest = 0;
    const started = Date.now();
    const worker = async () => {
      while (next < requests.length) {
        const i = next++;
        const r = requests[i];
        const t0 = Date.now();
        let status: number;
        let text: string;
        let bytes: Buffer;
        try {
          const res = await fetch(`${distributor.url}${r.path}`, { method: 'POST', headers: r.headers, body: r.body, signal: AbortSignal.timeout(30_000) });
          status = res.status;
          bytes = Buffer.from(await res.arrayBuffer());
          text = bytes.toString('utf8');
        } catch (err) {
          failures.push(`#${i} ${r.protocol} ${r.mutation}: no answer (${(err as Error).message})`);
          continue;
        } finally {
          slowest = Math.max(slowest, Date.now() - t0);
        }
        statuses.set(String(status), (statuses.get(String(status)) ?? 0) + 1);
        byProtocol.set(`${r.protocol} ${status}`, (byProtocol.get(`${r.protocol} ${status}`) ?? 0) + 1);
        const ok2xx = status >= 200 && status < 300;
        const ok4xx = status >= 400 && status < 500;
        if (!ok2xx && !ok4xx) failures.push(`#${i} ${r.protocol} ${r.mutation}: ${status} ${text.slice(0, 300)}`);
        if (ok4xx) {
          if (bytes.length === 0) failures.push(`#${i} ${r.protocol} ${r.mutation}: ${status} with an empty body`);
          // Remote write reasons are text/plain, one line; OTLP's are a google.rpc.Status (JSON or protobuf).
          let reason: string | undefined = text;
          if (r.path !== '/api/v1/push') {
            try {
              reason = (JSON.parse(text) as { message?: string }).message;
            } catch {
              reason = undefined; // a protobuf google.rpc.Status: non-empty is all we check
            }
          }
          if (reason !== undefined && !/^[^\n]+\n?$/.test(reason)) {
            failures.push(`#${i} ${r.protocol} ${r.mutation}: ${status} reason is not one line: ${JSON.stringify(text.slice(0, 300))}`);
          }
        }
        if (++done === Math.floor(requests.length / 2)) rss.middle = await rssBytes(distributor.url);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const seconds = (Date.now() - started) / 1000;
    rss.end = await rssBytes(distributor.url);

    const ready = await fetch(`${distributor.url}/ready`, { signal: AbortSignal.timeout(10_000) });
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch {
      alive = false;
    }
    console.log(
      `fuzz: ${requests.length} requests in ${seconds.toFixed(1)}s (${(requests.length / seconds).toFixed(0)}/s, slowest ${slowest} ms); ` +
        `statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`,
    );
    console.log(`fuzz: by protocol ${JSON.stringify(Object.fromEntries([...byProtocol].sort()))}`);
    console.log(`fuzz: resident memory start ${mb(rss.start)}, middle ${mb(rss.middle)}, end ${mb(rss.end)}`);
    if (failures.length > 0) {
      const log = readFileSync(join(env.dir, 'distributor.log'), 'utf8').split('\n').slice(-20).join('\n');
      assert.fail(`${failures.length} bad answers (seed ${seed}), first ones:\n${failures.slice(0, 15).join('\n')}\n--- distributor log tail ---\n${log}`);
    }
    assert.equal(ready.status, 200, 'the distributor is still ready');
    assert.ok(alive && distributor.running, `distributor pid ${pid} is still alive`);
    // Some of everything: valid data was written, bad data refused for several reasons.
    for (const s of ['200', '204', '400', '413', '415']) assert.ok((statuses.get(s) ?? 0) > 0, `no ${s} answers: the corpus lost its variety`);
    const bound = 2 * rss.start + 200 * 2 ** 20;
    assert.ok(rss.middle < bound && rss.end < bound, `resident memory ${mb(rss.middle)} / ${mb(rss.end)} above ${mb(bound)}`);
  });
});
