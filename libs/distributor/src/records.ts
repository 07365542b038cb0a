// Splits one partition's series (and metadata) into Kafka record values no
// larger than the producer's max record size, keeping each series whole: a
// record is the unit Kafka accepts or refuses, and the broker bounds its size.

export interface RecordContent {
  series: Uint8Array[];
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
export function packRecords(series: readonly Uint8Array[], metadata: readonly Uint8Array[], maxBytes: number): RecordContent[] {
  const out: RecordContent[] = [];
  let current: RecordContent = { series: [], metadata: [] };
  let size = 0;
  const add = (item: Uint8Array, kind: 'series' | 'metadata') => {
    const n = framedSize(item.length);
    if (size > 0 && size + n > maxBytes) {
      out.push(current);
      current = { series: [], metadata: [] };
      size = 0;
    }
    current[kind].push(item);
    size += n;
  };
  for (const s of series) add(s, 'series');
  for (const m of metadata) add(m, 'metadata');
  if (size > 0 || out.length === 0) out.push(current);
  return out;
}
