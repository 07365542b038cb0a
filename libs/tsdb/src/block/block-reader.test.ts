import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryAbortedError, labelsFromRecord, type Series } from '@strata/model';
import { BlockReader, writeBlock } from '../index.ts';

function series(rec: Record<string, string>, ts: number[]): Series {
  return { labels: labelsFromRecord(rec), timestamps: Float64Array.from(ts), values: Float64Array.from(ts, (t) => t / 1000) };
}

async function withBlock(fn: (r: BlockReader) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'strata-block-reader-'));
  try {
    const written = await writeBlock({
      dir,
      mint: 0,
      maxt: 10_000,
      series: [series({ __name__: 'early', job: 'a' }, [1000, 2000]), series({ __name__: 'late', job: 'b', zone: 'eu' }, [8000, 9000])],
    });
    assert.ok(written);
    const r = await BlockReader.openDir(written.dir);
    try {
      await fn(r);
    } finally {
      await r.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const any = [{ type: '=~' as const, name: '__name__', value: '.+' }];

test('block label names and values honour the time range', () =>
  withBlock(async (r) => {
    assert.deepEqual(await r.labelNames({ matchers: any, mint: 0, maxt: 3000 }), ['__name__', 'job'], 'only series with a chunk in range');
    assert.deepEqual(await r.labelNames({ matchers: any, mint: 0, maxt: 20_000 }), ['__name__', 'job', 'zone']);
    assert.deepEqual(await r.labelNames({ matchers: [], mint: 0, maxt: 3000 }), ['__name__', 'job', 'zone'], 'without matchers: the whole block');
    assert.deepEqual(await r.labelNames({ matchers: [], mint: 20_000, maxt: 30_000 }), [], 'outside the block');
    assert.deepEqual(await r.labelValues({ name: 'job', matchers: any, mint: 7000, maxt: 9500 }), ['b']);
    assert.deepEqual(await r.labelValues({ name: 'job', matchers: any, mint: -Infinity, maxt: Infinity }), ['a', 'b']);
    assert.deepEqual(await r.labelValues({ name: 'job', matchers: [], mint: 10_000, maxt: 20_000 }), []);
  }));

test('a block select stops when the signal fired', () =>
  withBlock(async (r) => {
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(r.select({ matchers: [], mint: 0, maxt: 10_000, signal: ac.signal }), QueryAbortedError);
    assert.equal((await r.select({ matchers: [], mint: 0, maxt: 10_000 })).length, 2);
  }));
