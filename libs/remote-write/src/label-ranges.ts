// Labels kept as byte ranges of the request they came in, decoded to strings
// only on demand: the distributor validates and shards, and the ingester finds
// its series, on the bytes of well-formed ASCII labels without making strings.

import type { EncodedLabels, Label } from '@strata/model';
import { TAG_LABEL_NAME, TAG_LABEL_VALUE, WT_LABEL } from './messages.ts';
import type { ProtoReader } from './wire.ts';

/** The byte ranges of a request's labels, 4 entries per label, in one growing array. */
export class LabelRanges {
  a = new Int32Array(1024);
  labels = 0;
  /** The current series' label fields (tags included), or rawStart -1 once another field came between two of them. */
  rawStart = -1;
  rawEnd = -1;

  /** Starts a series: the label fields read next are its own. */
  beginSeries(): void {
    this.rawStart = -1;
    this.rawEnd = -1;
  }

  /**
   * Reads one Label message body ending at `end` (its field's tag at `fieldStart`) and appends its
   * ranges; a repeated field keeps its last value, as protobuf does.
   */
  read(r: ProtoReader, end: number, fieldStart: number): void {
    if (this.rawEnd === -1) this.rawStart = fieldStart;
    else if (fieldStart !== this.rawEnd) this.rawStart = -1;
    this.rawEnd = end;
    let ns = 0;
    let ne = 0;
    let vs = 0;
    let ve = 0;
    while (r.pos < end) {
      const tag = r.tag(end, 'Label');
      if (tag === TAG_LABEL_NAME) {
        ne = r.len(end, 1, 'Label');
        ns = r.pos;
        r.pos = ne;
      } else if (tag === TAG_LABEL_VALUE) {
        ve = r.len(end, 2, 'Label');
        vs = r.pos;
        r.pos = ve;
      } else {
        r.skip(tag, end, 'Label', WT_LABEL);
      }
    }
    let a = this.a;
    const k = this.labels * 4;
    if (k + 4 > a.length) {
      // Series already parsed keep the old array: their ranges are in it.
      const grown = new Int32Array(a.length * 2);
      grown.set(a);
      this.a = a = grown;
    }
    a[k] = ns;
    a[k + 1] = ne;
    a[k + 2] = vs;
    a[k + 3] = ve;
    this.labels++;
  }
}

/** A series' labels as ranges into its reader's bytes (see EncodedLabels). */
export class RangedLabels implements EncodedLabels {
  private decoded: Label[] | undefined;
  private badUtf8 = false;

  private readonly reader: ProtoReader;
  readonly ranges: Int32Array;
  readonly firstLabel: number;
  readonly labelCount: number;
  readonly rawStart: number;
  readonly rawEnd: number;

  constructor(reader: ProtoReader, ranges: LabelRanges, firstLabel: number) {
    this.reader = reader;
    this.ranges = ranges.a;
    this.firstLabel = firstLabel;
    this.labelCount = ranges.labels - firstLabel;
    const contiguous = ranges.rawStart >= 0;
    this.rawStart = contiguous ? ranges.rawStart : -1;
    this.rawEnd = contiguous ? ranges.rawEnd : -1;
  }

  get bytes(): Uint8Array {
    return this.reader.bytes;
  }

  /** As sent: not re-sorted, empty values kept. Decoded on first use. */
  get labels(): Label[] {
    if (this.decoded !== undefined) return this.decoded;
    const r = this.reader;
    const a = this.ranges;
    const out = new Array<Label>(this.labelCount);
    const saved = r.invalidUtf8;
    r.invalidUtf8 = false;
    for (let i = 0, k = this.firstLabel * 4; i < this.labelCount; i++, k += 4) {
      out[i] = { name: r.string(a[k], a[k + 1]), value: r.string(a[k + 2], a[k + 3]) };
    }
    this.badUtf8 = r.invalidUtf8;
    r.invalidUtf8 = saved;
    this.decoded = out;
    return out;
  }

  /** A label name or value held bytes that are not UTF-8 (they were decoded as U+FFFD). */
  get invalidUtf8(): boolean {
    void this.labels;
    return this.badUtf8;
  }
}
