// Label messages met before, found again by their bytes: a sender repeats the same
// (name, value) pairs in every request, so what a pair's bytes say is worked out once per
// pair rather than once per series. The distributor validates, hashes and symbolizes
// series through one table of them.

import { ByteStrings, METRIC_NAME, grown } from '@strata/model';
import { TAG_LABEL_NAME, TAG_LABEL_VALUE } from './messages.ts';

/** The message holds a name field and a value field (each at most once) and nothing else. */
export const PAIR_PLAIN = 1;
/**
 * Valid whatever the name scheme and needing no decoding: a non-empty legacy label name,
 * a non-empty ASCII value, and for `__name__` a valid legacy metric name. Other pairs
 * (empty or non-ASCII values, UTF-8 names, invalid ones) are validated as strings.
 */
export const PAIR_ASCII_VALID = 2;
/** The name is `__name__`. */
export const PAIR_METRIC_NAME = 4;

const METRIC_NAME_BYTES = Buffer.from(METRIC_NAME, 'latin1');

/** Pairs and bytes known at most; past either the table starts over at the next trim(). */
const MAX_PAIRS = 1 << 18;
const MAX_BYTES = 32 << 20;

/**
 * Label messages (1.0 `Label`, as sent) by their bytes, each with the ids of its name and
 * value in `strings`, where they sit in the message, and PAIR_* flags. Ids stay valid
 * until trim() starts over.
 */
export class LabelPairs {
  /** Names and values met, by id (0 is ""). */
  readonly strings = new ByteStrings();
  private readonly messages = new ByteStrings();
  flags = new Uint8Array(1024);
  nameId = new Int32Array(1024);
  valueId = new Int32Array(1024);
  /** Name and value bytes as offsets into the message. */
  nameStart = new Int32Array(1024);
  nameEnd = new Int32Array(1024);
  valueStart = new Int32Array(1024);
  valueEnd = new Int32Array(1024);

  constructor() {
    this.strings.id(new Uint8Array(0), 0, 0);
  }

  /** Starts over when the table has grown past its bounds, ids handed out before void; true when it did. */
  trim(): boolean {
    if (this.messages.count <= MAX_PAIRS && this.messages.bytesUsed + this.strings.bytesUsed <= MAX_BYTES) return false;
    this.reset();
    return true;
  }

  /** Forgets every pair; ids handed out before are void. */
  reset(): void {
    this.messages.reset();
    this.strings.reset();
    this.strings.id(new Uint8Array(0), 0, 0);
  }

  /** The id of the Label message at bytes [start, end) of `b`, worked out when new. */
  id(b: Uint8Array, start: number, end: number): number {
    const p = this.messages.id(b, start, end);
    if (this.messages.added) this.learn(b, start, end, p);
    return p;
  }

  private learn(b: Uint8Array, start: number, end: number, p: number): void {
    if (p >= this.flags.length) {
      const n = p + 1;
      this.flags = grown(this.flags, n);
      this.nameId = grown(this.nameId, n);
      this.valueId = grown(this.valueId, n);
      this.nameStart = grown(this.nameStart, n);
      this.nameEnd = grown(this.nameEnd, n);
      this.valueStart = grown(this.valueStart, n);
      this.valueEnd = grown(this.valueEnd, n);
    }
    let ns = start;
    let ne = start;
    let vs = start;
    let ve = start;
    let seen = 0;
    let plain = true;
    for (let pos = start; pos < end;) {
      const tag = b[pos];
      let len = 0;
      let at = pos + 1;
      let complete = false;
      for (let shift = 0; shift <= 28 && at < end && !complete; shift += 7) {
        const x = b[at++];
        len += (x & 0x7f) * 2 ** shift;
        complete = x < 0x80;
      }
      const fieldEnd = at + len;
      const bit = tag === TAG_LABEL_NAME ? 1 : tag === TAG_LABEL_VALUE ? 2 : 0;
      if (!complete || fieldEnd > end || bit === 0 || (seen & bit) !== 0) {
        plain = false;
        break;
      }
      seen |= bit;
      if (bit === 1) {
        ns = at;
        ne = fieldEnd;
      } else {
        vs = at;
        ve = fieldEnd;
      }
      pos = fieldEnd;
    }
    this.nameId[p] = plain ? this.strings.id(b, ns, ne) : 0;
    this.valueId[p] = plain ? this.strings.id(b, vs, ve) : 0;
    this.nameStart[p] = ns - start;
    this.nameEnd[p] = ne - start;
    this.valueStart[p] = vs - start;
    this.valueEnd[p] = ve - start;
    const metric = plain && isMetricName(b, ns, ne);
    this.flags[p] = (plain ? PAIR_PLAIN : 0) | (plain && asciiValid(b, ns, ne, vs, ve, metric) ? PAIR_ASCII_VALID : 0) | (metric ? PAIR_METRIC_NAME : 0);
  }
}

function isMetricName(b: Uint8Array, start: number, end: number): boolean {
  if (end - start !== METRIC_NAME_BYTES.length) return false;
  for (let i = 0; i < METRIC_NAME_BYTES.length; i++) if (b[start + i] !== METRIC_NAME_BYTES[i]) return false;
  return true;
}

/** See PAIR_ASCII_VALID. */
function asciiValid(b: Uint8Array, ns: number, ne: number, vs: number, ve: number, metric: boolean): boolean {
  if (ne === ns || ve === vs) return false;
  for (let i = ns; i < ne; i++) {
    const c = b[i];
    if (!((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || (i > ns && c >= 48 && c <= 57))) return false;
  }
  for (let i = vs; i < ve; i++) {
    const c = b[i];
    if (c >= 0x80) return false;
    if (metric && !((c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c === 95 || c === 58 || (i > vs && c >= 48 && c <= 57))) return false;
  }
  return true;
}
