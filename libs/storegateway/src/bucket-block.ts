// Opens a block in the bucket for reading: meta.json (sizes of its files),
// then the index header (TOC, symbols, postings offset table) through range
// reads. Chunks are fetched per query.

import type { Bucket } from '@strata/objstore';
import { BlockReader, parseBlockMeta, type BlockMeta, type ByteSource } from '@strata/tsdb';
import { BucketByteSource } from './bucket-byte-source.ts';
import { blockFileKey, META_FILE } from './layout.ts';

export async function openBucketBlock(bucket: Bucket, tenant: string, ulid: string, knownMeta?: BlockMeta): Promise<BlockReader> {
  const meta = knownMeta?.thanos?.files ? knownMeta : parseBlockMeta(new TextDecoder().decode(await bucket.get(blockFileKey(tenant, ulid, META_FILE))));
  const sizes = new Map((meta.thanos?.files ?? []).map((f) => [f.rel_path, f.size_bytes]));
  let segments = meta.thanos?.segment_files ?? [...sizes.keys()].filter((p) => p.startsWith('chunks/')).map((p) => p.slice(7));
  if (segments.length === 0) {
    segments = (await bucket.list(`${tenant}/${ulid}/chunks/`)).map((k) => k.slice(k.lastIndexOf('/') + 1)).filter((n) => /^\d{6}$/.test(n));
  }
  segments.sort();
  const source = (rel: string): Promise<ByteSource> => BucketByteSource.open(bucket, blockFileKey(tenant, ulid, rel), sizes.get(rel));
  const index = await source('index');
  const chunkSegments = await Promise.all(segments.map((s) => source(`chunks/${s}`)));
  return BlockReader.open({ index, chunkSegments, meta });
}
