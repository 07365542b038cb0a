// The common case of a 1.0 series, validated and hashed once per series rather than once
// per request. A sender sends the same series in much the same order every time, so the
// series that followed the previous one last time is tried first, by comparing its label
// bytes; then a table of every series met, by the same bytes. A series met for the first
// time is worked out label pair by label pair (LabelPairs knows each pair's verdict from the
// first time it met it). Everything not sure to be valid is validated on decoded labels.
//
// The table keeps series in the order it first met them, and a series met right after the one
// before it in the table costs little: its bytes and entries are next to what was just read.
// A sender that changes its order (Prometheus resharding, a restart) meets every series
// somewhere else, a cache miss for its bytes and each of its entries: a third more CPU per
// sample here. When most series of a round of the table are met out of table order, the table
// starts over and is relearned in the sender's order; if the next round is just as scattered
// (an order that changes every time), it waits twice as many rounds before it tries again.

import { ByteStrings, SendingOrder, grown } from '@strata/model';
import { PAIR_ASCII_VALID, PAIR_METRIC_NAME, type LabelPairs, type ParsedSeries } from '@strata/remote-write';
import { seriesTokenFromBytes } from './sharding.ts';

const TAG_TIMESERIES_LABELS = 0x0a;

/** Series and label bytes known at most; past either the table starts over at the next begin(). */
const MAX_SERIES = 1 << 20;
const MAX_BYTES = 64 << 20;

export interface LabelCheckLimits {
  maxLabelNamesPerSeries: number;
  maxLabelNameLength: number;
  maxLabelValueLength: number;
}

/**
 * Series by their label fields as sent: whether they are the fast case (every label a
 * PAIR_ASCII_VALID pair, names strictly sorted, one of them `__name__`), their label count
 * and longest name and value for the tenant's limits, their token for the last tenant that
 * sent them, and their label pair ids for the Symbolizer: `ids[run]` labels, then the ids.
 */
export class KnownSeries {
  readonly pairs: LabelPairs;
  /** Runs of pair ids: a count, then the ids (KnownPairs.ids). */
  ids = new Int32Array(16 * 1024);
  private idsLength = 0;
  /** The run of the series token() last accepted. */
  run = -1;
  private readonly series = new ByteStrings();
  /** Per series: its run, or -1 when it is not the fast case. */
  private runOf = new Int32Array(1024);
  /** Per series: 1 + the series that followed it last time (0: none yet). */
  private next = new Int32Array(1024);
  private seedOf = new Int32Array(1024);
  private tokenOf = new Float64Array(1024);
  private longestName = new Int32Array(1024);
  private longestValue = new Int32Array(1024);
  private previous = -1;
  /** When to start over to follow the senders' order (and how often it did). */
  readonly order = new SendingOrder();

  constructor(pairs: LabelPairs) {
    this.pairs = pairs;
  }

  /** Before a request's series: starts over past the bounds (runs handed out before are void). */
  begin(): void {
    this.previous = -1;
    const pairsReset = this.pairs.trim();
    if (!pairsReset && this.series.count <= MAX_SERIES && this.series.bytesUsed + 4 * this.idsLength <= MAX_BYTES) {
      if (this.order.relearnNow(this.series.count)) this.startOver();
      return;
    }
    if (!pairsReset) this.pairs.reset();
    this.startOver();
  }

  private startOver(): void {
    this.series.reset();
    this.idsLength = 0;
    this.order.restart();
  }

  /**
   * The series' token (seriesToken of its labels as sent) when its labels are sure to be
   * valid under either name scheme and within `limits`, its pair ids at `run`; -1 when not
   * sure: validate the decoded labels.
   */
  token(s: ParsedSeries, seed: number, limits: LabelCheckLimits): number {
    if (s.rawStart < 0) return -1;
    const b = s.bytes;
    const guess = this.previous >= 0 ? this.next[this.previous] - 1 : -1;
    let id: number;
    let added = false;
    if (guess >= 0 && this.series.equals(guess, b, s.rawStart, s.rawEnd)) {
      id = guess;
    } else {
      id = this.series.id(b, s.rawStart, s.rawEnd);
      added = this.series.added;
      if (added) this.learn(s, id, seed);
      if (this.previous >= 0) this.next[this.previous] = id + 1;
    }
    if (this.previous >= 0 && !added) this.order.meet(id, this.previous);
    this.previous = id;
    const run = this.runOf[id];
    if (run < 0) return -1;
    if (this.ids[run] > limits.maxLabelNamesPerSeries || this.longestName[id] > limits.maxLabelNameLength || this.longestValue[id] > limits.maxLabelValueLength)
      return -1;
    if (this.seedOf[id] !== seed) {
      this.seedOf[id] = seed;
      this.tokenOf[id] = seriesTokenFromBytes(seed, s);
    }
    this.run = run;
    return this.tokenOf[id];
  }

  /** Works out a series met for the first time from its label pairs. */
  private learn(s: ParsedSeries, id: number, seed: number): void {
    if (id >= this.runOf.length) {
      this.runOf = grown(this.runOf, id + 1);
      this.next = grown(this.next, id + 1);
      this.seedOf = grown(this.seedOf, id + 1);
      this.tokenOf = grown(this.tokenOf, id + 1);
      this.longestName = grown(this.longestName, id + 1);
      this.longestValue = grown(this.longestValue, id + 1);
    }
    this.next[id] = 0;
    this.runOf[id] = -1;
    const n = s.labelCount;
    const at = this.idsLength;
    if (at + 1 + n > this.ids.length) this.ids = grown(this.ids, at + 1 + n);
    const ids = this.ids;
    const pairs = this.pairs;
    const b = s.bytes;
    const end = s.rawEnd;
    let k = at + 1;
    let sawName = false;
    let prevStart = -1;
    let prevEnd = -1;
    let longestName = 0;
    let longestValue = 0;
    for (let p = s.rawStart; p < end;) {
      // The parse checked the lengths; messages of 128 bytes or more are not the fast case.
      const len = b[p + 1];
      if (b[p] !== TAG_TIMESERIES_LABELS || len >= 0x80 || k - at > n) return;
      const ms = p + 2;
      p = ms + len;
      const pair = pairs.id(b, ms, p);
      const flags = pairs.flags[pair];
      if ((flags & PAIR_ASCII_VALID) === 0) return;
      const ns = ms + pairs.nameStart[pair];
      const ne = ms + pairs.nameEnd[pair];
      if (prevStart >= 0 && compareBytes(b, prevStart, prevEnd, ns, ne) >= 0) return;
      prevStart = ns;
      prevEnd = ne;
      if ((flags & PAIR_METRIC_NAME) !== 0) sawName = true;
      longestName = Math.max(longestName, ne - ns);
      longestValue = Math.max(longestValue, pairs.valueEnd[pair] - pairs.valueStart[pair]);
      ids[k++] = pair;
    }
    if (!sawName || n === 0 || k - at - 1 !== n) return;
    ids[at] = n;
    this.idsLength = k;
    this.runOf[id] = at;
    this.longestName[id] = longestName;
    this.longestValue[id] = longestValue;
    this.seedOf[id] = seed;
    this.tokenOf[id] = seriesTokenFromBytes(seed, s);
  }
}

/** Byte order of b[as..ae) and b[bs..be). */
function compareBytes(b: Uint8Array, as: number, ae: number, bs: number, be: number): number {
  const n = Math.min(ae - as, be - bs);
  for (let i = 0; i < n; i++) {
    const d = b[as + i] - b[bs + i];
    if (d !== 0) return d;
  }
  return ae - as - (be - bs);
}
