export { Head, emptyAppendStats } from './head.ts';
export type { AppendStats, HeadOptions, SeriesRef, BlockSeries, SeriesExemplars } from './head.ts';
export type { HeadSymbols } from './record-symbols.ts';
export { RangeHead } from './range-head.ts';
export { DecodedSamplesCache, SampleArena } from './decoded-samples.ts';
export { XOR_ENCODING } from './chunk-encoding.ts';
export type { EncodedChunk } from './chunk-encoding.ts';
export type { HistogramSample } from './histogram-series.ts';
export type { Exemplar, ExemplarInput } from './exemplars.ts';
export type { MetricMetadataEntry, MetricMetadataInput } from './metric-metadata.ts';
export { compactBlocks } from './compact.ts';
export type { CompactOptions, CompactStats } from './compact.ts';
export { BitReader, BitWriter } from './bit-stream.ts';
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
} from './xor-chunk.ts';
export { crc32c } from './crc32c.ts';
export { createUlidGenerator, encodeUlid, isUlid, ulidTime } from './ulid.ts';
export type { UlidGeneratorDeps } from './ulid.ts';
export { encodeBlockMeta, parseBlockMeta, META_FILENAME } from './meta.ts';
export type { BlockMeta, BlockStats, BlockCompaction, ThanosMeta, ThanosFile } from './meta.ts';
export { writeBlock, writeBlockFromChunks, DEFAULT_SAMPLES_PER_CHUNK } from './block-writer.ts';
export type { WriteBlockOptions, WriteChunksBlockOptions } from './block-writer.ts';
export { BlockBuilder, TOMBSTONES_FILENAME } from './block-builder.ts';
export type { WrittenBlock, BlockBuilderOptions, FinishBlockOptions } from './block-builder.ts';
export { writeIndex } from './index-writer.ts';
export type { ChunkMeta, IndexSeries, IndexToc } from './index-writer.ts';
export { ChunksWriter, segmentFileName, chunkRef, DEFAULT_SEGMENT_SIZE } from './chunks-writer.ts';
export { FileByteSource, MemoryByteSource } from './byte-source.ts';
export type { ByteSource } from './byte-source.ts';
export { IndexReader } from './index-reader.ts';
export type { IndexSeriesEntry } from './index-reader.ts';
export { ChunksReader } from './chunks-reader.ts';
export type { RawChunk } from './chunks-reader.ts';
export { BlockReader } from './block-reader.ts';
export type { BlockFiles } from './block-reader.ts';
export { BlockFormatError, BlockUnsupportedError, BlockWriteError } from './block-errors.ts';
