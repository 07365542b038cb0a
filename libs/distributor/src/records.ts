// Splits one partition's series (and metadata) into Kafka record values no
// larger than the producer's max record size, keeping each series whole: a
// record is the unit Kafka accepts or refuses, and the broker bounds its size.

export interface RecordContent {
  series: Uint8Array[];
  /** What packRecords was given for each series, in step with `series` (empty when it was given none). */
  runs: number[];
  metadata: Uint8Array[];
}

/** Bytes a message body of `n` bytes takes framed in a WriteRequest: tag, uvarint length, body. */
export function framedSize(n: number): number {
  let varint = 1;
  for (let v = n; v >= 0x80; v = Math.floor(v / 128)) varint++;
  return 1 + varint + n;
}

/**
 * Greedy, in order: a record is closed when the next item would take it over
 * `maxBytes`. An item larger than `maxBytes` gets a record of its own (callers
 * reject such series before; metadata is bounded by its length limit).
 */
export function packRecords(series: readonly Uint8Array[], metadata: readonly Uint8Array[], maxBytes: number, runs?: readonly number[]): RecordContent[] {
  const out: RecordContent[] = [];
  let current: RecordContent = { series: [], runs: [], metadata: [] };
  let size = 0;
  const room = (item: Uint8Array) => {
    const n = framedSize(item.length);
    if (size > 0 && size + n > maxBytes) {
      out.push(current);
      current = { series: [], runs: [], metadata: [] };
      size = 0;
    }
    size += n;
  };
  for (let i = 0; i < series.length; i++) {
    room(series[i]);
    current.series.push(series[i]);
    if (runs !== undefined) current.runs.push(runs[i]);
  }
  for (const m of metadata) {
    room(m);
    current.metadata.push(m);
  }
  if (size > 0 || out.length === 0) out.push(current);
  return out;
}
