// Chunk encodings, byte for byte as Prometheus writes them (tsdb/chunkenc's Encoding),
// and the encoded chunk the head, the series and the block code hand each other.
// Constants and types only: everything in the TSDB imports this file, so it imports nothing.

/** Gorilla/XOR float samples (xor-chunk.ts). */
export const XOR_ENCODING = 1;
/** Integer native histograms (histogram-chunk.ts). */
export const HISTOGRAM_ENCODING = 2;
/** Float native histograms (histogram-chunk.ts). */
export const FLOAT_HISTOGRAM_ENCODING = 3;

/** The encoding byte in front of a chunk in a segment file, and in a head chunk's metadata. */
export type ChunkEncoding = typeof XOR_ENCODING | typeof HISTOGRAM_ENCODING | typeof FLOAT_HISTOGRAM_ENCODING;

/** Whether a byte read from a file is an encoding this TSDB reads. */
export function isChunkEncoding(encoding: number): encoding is ChunkEncoding {
  return encoding === XOR_ENCODING || encoding === HISTOGRAM_ENCODING || encoding === FLOAT_HISTOGRAM_ENCODING;
}

/** A chunk of a block being cut: its bytes, encoding and the times of its first and last sample. */
export interface EncodedChunk {
  minTime: number;
  maxTime: number;
  /** The bytes; of a head chunk in a file, read from it at each access (read it once). */
  data: Uint8Array;
  /** XOR_ENCODING when absent. */
  encoding?: ChunkEncoding;
}
