import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { labelsFromRecord, type Series } from '@strata/model';
import { MemoryByteSource, verifyBlock, writeBlock, type BlockMeta } from '../index.ts';

function series(rec: Record<string, string>, from: number, n: number): Series {
  const ts = Array.from({ length: n }, (_, i) => from + i * 1000);
  return { labels: labelsFromRecord(rec), timestamps: Float64Array.from(ts), values: Float64Array.from(ts, (t) => t / 1000) };
}

interface BlockBytes {
  meta: BlockMeta;
  index: Uint8Array;
  chunks: Uint8Array;
}

async function writtenBlock(): Promise<BlockBytes> {
  const dir = await mkdtemp(join(tmpdir(), 'strata-verify-block-'));
  try {
    const written = await writeBlock({
      dir,
      mint: 0,
      maxt: 1_000_000,
      samplesPerChunk: 120,
      series: [
        series({ __name__: 'up', job: 'a' }, 0, 300),
        series({ __name__: 'up', job: 'b' }, 5000, 300),
        series({ __name__: 'http_requests_total', code: '200', job: 'a' }, 1000, 500),
      ],
    });
    assert.ok(written);
    return {
      meta: written.meta,
      index: new Uint8Array(await readFile(join(written.dir, 'index'))),
      chunks: new Uint8Array(await readFile(join(written.dir, 'chunks', '000001'))),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function verify(b: BlockBytes, opts: { index?: Uint8Array; chunks?: Uint8Array; minTime?: number; maxTime?: number; checkChunks?: boolean } = {}) {
  return verifyBlock(
    { index: new MemoryByteSource(opts.index ?? b.index), chunkSegments: [new MemoryByteSource(opts.chunks ?? b.chunks)] },
    { minTime: opts.minTime ?? b.meta.minTime, maxTime: opts.maxTime ?? b.meta.maxTime, checkChunks: opts.checkChunks ?? true },
  );
}

function flipped(bytes: Uint8Array, at: number): Uint8Array {
  const copy = bytes.slice();
  copy[at] ^= 0x10;
  return copy;
}

test('a sound block verifies, chunks decoded', async () => {
  const b = await writtenBlock();
  assert.deepEqual(await verify(b), { series: 3, chunks: 3 + 3 + 5, samples: 1100 });
  assert.deepEqual(await verify(b, { checkChunks: false }), { series: 3, chunks: 11, samples: 0 });
});

test('a flipped byte anywhere in the index is refused with the section that failed its checksum', async () => {
  const b = await writtenBlock();
  // Past the 5-byte header, each section carries a CRC32C: any flipped byte is caught by one of them.
  let caught = 0;
  let tried = 0;
  for (let at = 5; at < b.index.length; at += Math.max(1, Math.floor(b.index.length / 97))) {
    const err = await verify(b, { index: flipped(b.index, at), checkChunks: false }).then(
      () => undefined,
      (e: Error) => e,
    );
    // Padding, and the label index sections no reader (Prometheus' included) reads any more, carry
    // nothing a query sees: a flip there changes no answer.
    tried++;
    if (err === undefined) continue;
    caught++;
    assert.match(err.message, /^index/, `byte ${at}: ${err.message}`);
    assert.ok(!err.message.includes('\n'), 'one line');
  }
  assert.ok(caught >= tried * 0.75, `${caught} of ${tried} flips caught`);
  await assert.rejects(verify(b, { index: flipped(b.index, 9) }), /index symbols: checksum mismatch/);
});

test('a truncated chunk file and a flipped chunk byte are refused', async () => {
  const b = await writtenBlock();
  await assert.rejects(verify(b, { chunks: b.chunks.subarray(0, b.chunks.length - 100) }), /chunk.*(references offset|wanted|truncated)/);
  await assert.rejects(verify(b, { chunks: flipped(b.chunks, 40) }), /chunk at segment 1 offset \d+: checksum mismatch/);
  // Without chunk verification the references are still checked against the file sizes.
  await assert.rejects(verify(b, { chunks: b.chunks.subarray(0, 20), checkChunks: false }), /references offset \d+ of segment 1 \(20 bytes\)/);
});

test("chunks outside meta.json's range are refused", async () => {
  const b = await writtenBlock();
  await assert.rejects(verify(b, { maxTime: 100_000 }), /found \d+ chunks outside the block time range \[0, 100000\]/);
});
