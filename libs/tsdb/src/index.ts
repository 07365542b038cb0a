// The storage engine's public surface, grouped by concern as Prometheus' tsdb/ is:
//   encoding/  byte buffers, varints, 64-bit halves, CRC-32C
//   chunkenc/  XOR and native histogram chunk encodings and the bit streams under them
//   index/     the block index (writer, reader) and postings
//   block/     block files (chunks, meta.json, ULIDs), reading, writing, compaction
//   head/      the in-memory head: series, head chunks, out-of-order samples, exemplars, metadata

export { Head, emptyAppendStats } from './head/head.ts';
export type { AppendStats, HeadOptions, SeriesRef, BlockSeries, SeriesExemplars } from './head/head.ts';
export type { HeadSymbols } from './head/record-symbols.ts';
export { RangeHead } from './head/range-head.ts';
export { DecodedSamplesCache, SampleArena } from './head/decoded-samples.ts';
export { XOR_ENCODING } from './chunkenc/chunk-encoding.ts';
export type { EncodedChunk } from './chunkenc/chunk-encoding.ts';
export type { HistogramSample } from './head/histogram-series.ts';
export type { Exemplar, ExemplarInput } from './head/exemplars.ts';
export type { MetricMetadataEntry, MetricMetadataInput } from './head/metric-metadata.ts';
export { compactBlocks } from './block/compact.ts';
export type { CompactOptions, CompactStats } from './block/compact.ts';
export { BitReader, BitWriter } from './chunkenc/bit-stream.ts';
export {
  XorChunkEncoder,
  XorChunkIterator,
  decodeXorChunk,
  decodeXorChunkInto,
  xorChunkNumSamples,
  MAX_XOR_CHUNK_SAMPLES,
  MAX_ABS_TIMESTAMP,
  HI_WORD,
  LO_WORD,
} from './chunkenc/xor-chunk.ts';
export { crc32c } from './encoding/crc32c.ts';
export { createUlidGenerator, encodeUlid, isUlid, ulidTime } from './block/ulid.ts';
export type { UlidGeneratorDeps } from './block/ulid.ts';
export { encodeBlockMeta, parseBlockMeta, META_FILENAME } from './block/meta.ts';
export type { BlockMeta, BlockStats, BlockCompaction, ThanosMeta, ThanosFile } from './block/meta.ts';
export { writeBlock, writeBlockFromChunks, DEFAULT_SAMPLES_PER_CHUNK } from './block/block-writer.ts';
export type { WriteBlockOptions, WriteChunksBlockOptions } from './block/block-writer.ts';
export { BlockBuilder, TOMBSTONES_FILENAME } from './block/block-builder.ts';
export type { WrittenBlock, BlockBuilderOptions, FinishBlockOptions } from './block/block-builder.ts';
export { writeIndex } from './index/index-writer.ts';
export type { ChunkMeta, IndexSeries, IndexToc } from './index/index-writer.ts';
export { ChunksWriter, segmentFileName, chunkRef, DEFAULT_SEGMENT_SIZE } from './block/chunks-writer.ts';
export { FileByteSource, MemoryByteSource } from './block/byte-source.ts';
export type { ByteSource } from './block/byte-source.ts';
export { IndexReader } from './index/index-reader.ts';
export type { IndexSeriesEntry } from './index/index-reader.ts';
export { ChunksReader } from './block/chunks-reader.ts';
export type { RawChunk } from './block/chunks-reader.ts';
export { BlockReader } from './block/block-reader.ts';
export type { BlockFiles } from './block/block-reader.ts';
export { BlockFormatError, BlockUnsupportedError, BlockWriteError } from './block/block-errors.ts';
export { verifyBlock } from './block/verify-block.ts';
export type { VerifyBlockOptions, VerifyBlockStats } from './block/verify-block.ts';
