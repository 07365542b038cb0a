// The ingest record contract shared by the distributor (writes) and ingesters (reads):
// key = tenant id (utf8), header `v` = record format version, value = the caller's
// bytes, snappy-compressed (block format) on the wire unless the producer compresses whole
// batches (-ingest-storage.kafka.producer-compression), handed back as they were, with their
// format.

import { compressSync } from 'snappy';
import { uncompress, uncompressedLength } from '@strata/snappy';

export const DEFAULT_TOPIC = 'ingest';
const RECORD_VERSION_HEADER = 'v';
/** Version 1: the value is a remote-write 1.0 WriteRequest holding one partition's series, as it is. */
const RECORD_FORMAT_UNCOMPRESSED = '1';
/**
 * Version 2: the same WriteRequest, snappy-compressed. Labels repeat in every
 * record, so this takes Kafka about a fifth of the bytes, and the broker, the
 * producer's CRC and the consumers' fetches with them.
 */
export const RECORD_FORMAT_WRITE_REQUEST = '2';
/**
 * Version 3: a remote-write 2.0 Request of float series (a symbols table, labels as
 * references into it), snappy-compressed; see symbolizeSeries in @strata/remote-write.
 */
export const RECORD_FORMAT_SYMBOLIZED = '3';
/** Version 4: version 3's Request as it is, for a batch the producer compresses whole. */
const RECORD_FORMAT_SYMBOLIZED_UNCOMPRESSED = '4';

/** The `v` header of each format, its value snappy-compressed or as it is. */
const RECORD_VERSIONS = {
  'write-request': { snappy: RECORD_FORMAT_WRITE_REQUEST, raw: RECORD_FORMAT_UNCOMPRESSED },
  symbolized: { snappy: RECORD_FORMAT_SYMBOLIZED, raw: RECORD_FORMAT_SYMBOLIZED_UNCOMPRESSED },
} as const;

/** What a record value holds: a 1.0 WriteRequest, or float series as a symbolized 2.0 Request (version 3). */
export type RecordFormat = 'write-request' | 'symbolized';

/** A record the distributor produces to one partition (the ingester consumes it as a ConsumedRecord). */
export interface PartitionRecord {
  partition: number;
  value: Buffer;
  /** Default 'write-request'. */
  format?: RecordFormat;
  /** Extra headers such as `traceparent`; `v` is always set by the writer. */
  headers?: Record<string, string>;
}

export interface ConsumedRecord {
  tenant: string;
  value: Buffer;
  format: RecordFormat;
  offset: bigint;
  /** All record headers as utf8 strings (`v` included; a repeated header keeps its last value). */
  headers: Record<string, string>;
  /** The record's timestamp, ms since the epoch. */
  timestamp: number;
}

/**
 * The record as the Kafka client produces it: key = tenant, value snappy-compressed (`snappy`) or as
 * it is (the batch is compressed whole), `v` over any caller header, all as bytes.
 */
export function toProduceMessage(
  topic: string,
  tenant: string,
  record: PartitionRecord,
  snappy = true,
): { topic: string; partition: number; key: Buffer; value: Buffer; headers: Map<Buffer, Buffer> } {
  const headers = new Map<Buffer, Buffer>();
  const version = RECORD_VERSIONS[record.format ?? 'write-request'][snappy ? 'snappy' : 'raw'];
  for (const [name, value] of Object.entries({ ...record.headers, [RECORD_VERSION_HEADER]: version })) {
    headers.set(Buffer.from(name), Buffer.from(value));
  }
  return { topic, partition: record.partition, key: Buffer.from(tenant, 'utf8'), value: snappy ? compressSync(record.value) : record.value, headers };
}

/** A consumed record as the wire has it: headers as [name, value] pairs (a repeated header keeps its last value). */
export function fromMessage(message: {
  key: Buffer | null;
  value: Buffer | null;
  offset: bigint;
  timestamp: bigint;
  headers: [Buffer | null, Buffer | null][];
}): ConsumedRecord {
  const headers: Record<string, string> = {};
  for (const [name, value] of message.headers) if (name !== null) headers[name.toString()] = value?.toString() ?? '';
  const version = headers[RECORD_VERSION_HEADER];
  return {
    tenant: message.key?.toString('utf8') ?? '',
    value: recordValue(message.value ?? Buffer.alloc(0), version),
    format: version === RECORD_FORMAT_SYMBOLIZED || version === RECORD_FORMAT_SYMBOLIZED_UNCOMPRESSED ? 'symbolized' : 'write-request',
    offset: message.offset,
    headers,
    timestamp: Number(message.timestamp),
  };
}

/**
 * The value as the writer was given it. A version-2 value that does not
 * decompress is handed on as it is: the consumer's decoder rejects it and
 * counts it, rather than the reader stalling the partition.
 */
function recordValue(value: Buffer, version: string | undefined): Buffer {
  if (version !== RECORD_FORMAT_WRITE_REQUEST && version !== RECORD_FORMAT_SYMBOLIZED) return value;
  const header = uncompressedLength(value);
  // No snappy element writes more than 32 bytes per byte it takes: a larger length is corrupt.
  if (header === undefined || header.length > 32 * value.length) return value;
  const out = Buffer.allocUnsafe(header.length);
  return uncompress(value, header.start, out, header.length) === undefined ? out : value;
}
