// Native histograms as PromQL computes with them: absolute float bucket counts
// over exponential schemas (-4..8) or custom bounds (schema -53, NHCB), with
// Prometheus' FloatHistogram semantics for adding, subtracting, scaling,
// comparing, compacting and detecting counter resets.

import type { NativeHistogram } from '@strata/model';
import { PromQLError } from '../errors.ts';
import { formatGoG } from '../go-compat.ts';
import { kahanInc } from '../stats.ts';
import type { IndexedBucket, Span } from './buckets.ts';
import {
  bucketBound,
  collapseBuckets,
  compactBuckets,
  customBoundsMatch,
  expandBuckets,
  intersectCustomBounds,
  isCustomBucketsSchema,
  isExponentialSchema,
  mapCustomBuckets,
  reduceResolution,
  spansMatch,
  targetIndex,
} from './buckets.ts';

export type CounterResetHint = 'unknown' | 'reset' | 'not_reset' | 'gauge';

/** One bucket with its bounds, as bucket iterators return them. */
export interface Bucket {
  lower: number;
  upper: number;
  lowerInclusive: boolean;
  upperInclusive: boolean;
  count: number;
  index: number;
}

/** Adding an exponential to a custom-buckets histogram (or the reverse) is not defined; callers turn it into an annotation. */
export class IncompatibleSchemaError extends PromQLError {
  constructor() {
    super(
      'promql-incompatible-histogram-schemas',
      'unprocessable',
      'cannot apply this operation to histograms with a mix of exponential and custom bucket schemas',
    );
  }
}

/** The outcome flags of add/sub, for the annotations PromQL attaches. */
export interface CombineResult {
  counterResetCollision: boolean;
  nhcbBoundsReconciled: boolean;
}

export class FloatHistogram implements NativeHistogram {
  counterResetHint: CounterResetHint = 'unknown';
  schema = 0;
  zeroThreshold = 0;
  zeroCount = 0;
  count = 0;
  sum = 0;
  positiveSpans: Span[] = [];
  negativeSpans: Span[] = [];
  positiveBuckets: number[] = [];
  negativeBuckets: number[] = [];
  customValues: number[] | undefined = undefined;

  static from(h: NativeHistogram): FloatHistogram {
    const f = new FloatHistogram();
    f.counterResetHint = h.counterResetHint;
    f.schema = h.schema;
    f.zeroThreshold = h.zeroThreshold;
    f.zeroCount = h.zeroCount;
    f.count = h.count;
    f.sum = h.sum;
    f.positiveSpans = h.positiveSpans.map((s) => ({ ...s }));
    f.negativeSpans = h.negativeSpans.map((s) => ({ ...s }));
    f.positiveBuckets = [...h.positiveBuckets];
    f.negativeBuckets = [...h.negativeBuckets];
    f.customValues = h.customValues ? [...h.customValues] : undefined;
    return f;
  }

  usesCustomBuckets(): boolean {
    return isCustomBucketsSchema(this.schema);
  }

  copy(): FloatHistogram {
    return FloatHistogram.from(this);
  }

  // --- Scaling -------------------------------------------------------------------

  /** Scales every count and the sum in place; a negative factor makes it a gauge. */
  mul(factor: number): this {
    this.zeroCount *= factor;
    this.count *= factor;
    this.sum *= factor;
    this.positiveBuckets = this.positiveBuckets.map((b) => b * factor);
    this.negativeBuckets = this.negativeBuckets.map((b) => b * factor);
    if (factor < 0) this.counterResetHint = 'gauge';
    return this;
  }

  /** Divides in place; dividing by zero leaves no buckets (and infinite counts). */
  div(scalar: number): this {
    this.zeroCount /= scalar;
    this.count /= scalar;
    this.sum /= scalar;
    if (scalar === 0) {
      this.positiveBuckets = [];
      this.negativeBuckets = [];
      this.positiveSpans = [];
      this.negativeSpans = [];
      return this;
    }
    this.positiveBuckets = this.positiveBuckets.map((b) => b / scalar);
    this.negativeBuckets = this.negativeBuckets.map((b) => b / scalar);
    if (scalar < 0) this.counterResetHint = 'gauge';
    return this;
  }

  // --- Adding and subtracting ------------------------------------------------------

  /** this += other, reconciling zero buckets, schemas and custom bounds (Prometheus' Add). */
  add(other: FloatHistogram): CombineResult {
    return this.combine(other, 1);
  }

  /** this -= other (Prometheus' Sub); the caller marks a PromQL "-" result as a gauge. */
  sub(other: FloatHistogram): CombineResult {
    return this.combine(other, -1);
  }

  private combine(other: FloatHistogram, sign: 1 | -1): CombineResult {
    if (this.usesCustomBuckets() !== other.usesCustomBuckets()) throw new IncompatibleSchemaError();
    const counterResetCollision = this.adjustCounterReset(other);
    let nhcbBoundsReconciled = false;
    if (!this.usesCustomBuckets()) {
      const otherZeroCount = this.reconcileZeroBuckets(other); // Changes this.zeroCount first.
      this.zeroCount += sign * otherZeroCount;
    }
    this.count += sign * other.count;
    this.sum += sign * other.sum;

    if (this.usesCustomBuckets()) {
      const mine = expandBuckets(this.positiveSpans, this.positiveBuckets);
      const theirs = expandBuckets(other.positiveSpans, other.positiveBuckets);
      if (customBoundsMatch(this.customValues, other.customValues)) {
        this.setPositive(addPairs(mine, theirs, sign, () => false));
      } else {
        nhcbBoundsReconciled = true;
        const bounds = intersectCustomBounds(this.customValues ?? [], other.customValues ?? []);
        const a = mapCustomBuckets(mine, this.customValues ?? [], bounds);
        const b = mapCustomBuckets(theirs, other.customValues ?? [], bounds);
        const pairs: IndexedBucket[] = [];
        a.forEach((v, i) => {
          const c = v + sign * b[i];
          if (c !== 0) pairs.push({ index: i, count: c });
        });
        this.setPositive(pairs);
        this.customValues = bounds;
      }
      return { counterResetCollision, nhcbBoundsReconciled };
    }

    let myPos = expandBuckets(this.positiveSpans, this.positiveBuckets);
    let myNeg = expandBuckets(this.negativeSpans, this.negativeBuckets);
    let otherPos = expandBuckets(other.positiveSpans, other.positiveBuckets);
    let otherNeg = expandBuckets(other.negativeSpans, other.negativeBuckets);
    if (other.schema < this.schema) {
      myPos = reduceResolution(myPos, this.schema, other.schema);
      myNeg = reduceResolution(myNeg, this.schema, other.schema);
      this.schema = other.schema;
    } else if (other.schema > this.schema) {
      otherPos = reduceResolution(otherPos, other.schema, this.schema);
      otherNeg = reduceResolution(otherNeg, other.schema, this.schema);
    }
    // Buckets of the other histogram inside the (reconciled) zero bucket are already in its zero count.
    const inZero = (idx: number) => bucketBound(idx, this.schema, undefined) <= this.zeroThreshold;
    this.setPositive(addPairs(myPos, otherPos, sign, inZero));
    this.setNegative(addPairs(myNeg, otherNeg, sign, inZero));
    return { counterResetCollision, nhcbBoundsReconciled };
  }

  /**
   * this += other with Kahan-Neumaier compensation kept in `comp` (same
   * layout as this; created when undefined), so huge values that cancel do
   * not swallow small ones. The caller adds `comp` once at the end
   * (Prometheus' KahanAdd).
   */
  kahanAdd(other: FloatHistogram, comp: FloatHistogram | undefined): CombineResult & { comp: FloatHistogram } {
    if (this.usesCustomBuckets() !== other.usesCustomBuckets()) throw new IncompatibleSchemaError();
    const counterResetCollision = this.adjustCounterReset(other);
    let nhcbBoundsReconciled = false;
    const c = comp ?? new FloatHistogram();
    if (!comp) {
      c.schema = this.schema;
      c.zeroThreshold = this.zeroThreshold;
      c.customValues = this.customValues;
    }
    [this.count, c.count] = kahanInc(other.count, this.count, c.count);
    [this.sum, c.sum] = kahanInc(other.sum, this.sum, c.sum);

    if (this.usesCustomBuckets()) {
      let mine = expandBuckets(this.positiveSpans, this.positiveBuckets);
      let mineC = expandBuckets(c.positiveSpans, c.positiveBuckets);
      let theirs = expandBuckets(other.positiveSpans, other.positiveBuckets);
      if (!customBoundsMatch(this.customValues, other.customValues)) {
        nhcbBoundsReconciled = true;
        const bounds = intersectCustomBounds(this.customValues ?? [], other.customValues ?? []);
        const toPairs = (counts: number[]) => counts.map((count, index) => ({ index, count })).filter((p) => p.count !== 0);
        mine = toPairs(mapCustomBuckets(mine, this.customValues ?? [], bounds));
        mineC = toPairs(mapCustomBuckets(mineC, c.customValues ?? [], bounds));
        theirs = toPairs(mapCustomBuckets(theirs, other.customValues ?? [], bounds));
        this.customValues = bounds;
        c.customValues = bounds;
      }
      const [sum, cmp] = kahanPairs(mine, mineC, theirs, () => false);
      this.setPositive(sum);
      c.setPositive(cmp);
      return { counterResetCollision, nhcbBoundsReconciled, comp: c };
    }

    const otherZeroCount = this.reconcileZeroBuckets(other);
    if (c.zeroThreshold < this.zeroThreshold) {
      [c.zeroCount, c.zeroThreshold] = c.zeroCountForLargerThreshold(this.zeroThreshold);
      c.trimBucketsInZeroBucket();
    }
    [this.zeroCount, c.zeroCount] = kahanInc(otherZeroCount, this.zeroCount, c.zeroCount);

    let myPos = expandBuckets(this.positiveSpans, this.positiveBuckets);
    let myNeg = expandBuckets(this.negativeSpans, this.negativeBuckets);
    let cPos = expandBuckets(c.positiveSpans, c.positiveBuckets);
    let cNeg = expandBuckets(c.negativeSpans, c.negativeBuckets);
    let otherPos = expandBuckets(other.positiveSpans, other.positiveBuckets);
    let otherNeg = expandBuckets(other.negativeSpans, other.negativeBuckets);
    if (other.schema < this.schema) {
      myPos = reduceResolution(myPos, this.schema, other.schema);
      myNeg = reduceResolution(myNeg, this.schema, other.schema);
      cPos = reduceResolution(cPos, c.schema, other.schema);
      cNeg = reduceResolution(cNeg, c.schema, other.schema);
      this.schema = other.schema;
      c.schema = other.schema;
    } else if (other.schema > this.schema) {
      otherPos = reduceResolution(otherPos, other.schema, this.schema);
      otherNeg = reduceResolution(otherNeg, other.schema, this.schema);
    }
    const inZero = (idx: number) => bucketBound(idx, this.schema, undefined) <= this.zeroThreshold;
    const [pos, posC] = kahanPairs(myPos, cPos, otherPos, inZero);
    const [neg, negC] = kahanPairs(myNeg, cNeg, otherNeg, inZero);
    this.setPositive(pos);
    this.setNegative(neg);
    c.setPositive(posC);
    c.setNegative(negC);
    return { counterResetCollision, nhcbBoundsReconciled, comp: c };
  }

  /** Sets the counter reset hint for a sum or difference; true on a reset/not-reset collision. */
  private adjustCounterReset(other: FloatHistogram): boolean {
    const a = this.counterResetHint;
    const b = other.counterResetHint;
    if (a === b || a === 'gauge') return false;
    if (b === 'gauge') {
      this.counterResetHint = 'gauge';
      return false;
    }
    if (a === 'unknown') return false;
    this.counterResetHint = 'unknown';
    return b !== 'unknown';
  }

  /**
   * Widens the zero buckets of both histograms to a common threshold that is
   * not inside a populated bucket of either; changes this histogram and
   * returns the other's zero count at that threshold.
   */
  private reconcileZeroBuckets(other: FloatHistogram): number {
    let otherZeroCount = other.zeroCount;
    let otherThreshold = other.zeroThreshold;
    while (otherThreshold !== this.zeroThreshold) {
      if (this.zeroThreshold > otherThreshold) [otherZeroCount, otherThreshold] = other.zeroCountForLargerThreshold(this.zeroThreshold);
      if (otherThreshold > this.zeroThreshold) {
        [this.zeroCount, this.zeroThreshold] = this.zeroCountForLargerThreshold(otherThreshold);
        this.trimBucketsInZeroBucket();
      }
    }
    return otherZeroCount;
  }

  /**
   * The zero count at a larger threshold, and the threshold itself: moved up
   * to the top of a populated bucket it would cut through.
   */
  zeroCountForLargerThreshold(largerThreshold: number): [number, number] {
    if (largerThreshold === this.zeroThreshold) return [this.zeroCount, largerThreshold];
    for (;;) {
      let count = this.zeroCount;
      let restart = false;
      for (const b of this.positiveBucketList()) {
        if (b.lower >= largerThreshold) break;
        count += b.count;
        if (b.upper > largerThreshold) {
          if (b.count !== 0) largerThreshold = b.upper;
          break;
        }
      }
      for (const b of this.negativeBucketList()) {
        if (b.upper <= -largerThreshold) break;
        count += b.count;
        if (b.lower < -largerThreshold) {
          if (b.count !== 0) {
            largerThreshold = -b.lower;
            restart = true;
          }
          break;
        }
      }
      if (!restart) return [count, largerThreshold];
    }
  }

  /** Drops the buckets now inside the zero bucket (their counts already are in the zero count). */
  trimBucketsInZeroBucket(): void {
    this.setPositive(
      expandBuckets(this.positiveSpans, this.positiveBuckets).filter((b) => bucketBound(b.index - 1, this.schema, undefined) >= this.zeroThreshold),
    );
    this.setNegative(
      expandBuckets(this.negativeSpans, this.negativeBuckets).filter((b) => bucketBound(b.index - 1, this.schema, undefined) >= this.zeroThreshold),
    );
    this.compact(0);
  }

  setPositive(pairs: IndexedBucket[]): void {
    const { spans, buckets } = collapseBuckets(pairs);
    this.positiveSpans = spans;
    this.positiveBuckets = buckets;
  }

  setNegative(pairs: IndexedBucket[]): void {
    const { spans, buckets } = collapseBuckets(pairs);
    this.negativeSpans = spans;
    this.negativeBuckets = buckets;
  }

  // --- Layout ------------------------------------------------------------------------

  /** Removes empty buckets and joins runs at most maxEmpty apart, in place. */
  compact(maxEmpty = 0): this {
    ({ spans: this.positiveSpans, buckets: this.positiveBuckets } = compactBuckets(this.positiveSpans, this.positiveBuckets, maxEmpty));
    ({ spans: this.negativeSpans, buckets: this.negativeBuckets } = compactBuckets(this.negativeSpans, this.negativeBuckets, maxEmpty));
    return this;
  }

  /** A copy in a lower-resolution schema. */
  copyToSchema(targetSchema: number): FloatHistogram {
    if (targetSchema === this.schema) return this.copy();
    const c = new FloatHistogram();
    c.schema = targetSchema;
    c.zeroThreshold = this.zeroThreshold;
    c.zeroCount = this.zeroCount;
    c.count = this.count;
    c.sum = this.sum;
    c.setPositive(reduceResolution(expandBuckets(this.positiveSpans, this.positiveBuckets), this.schema, targetSchema));
    c.setNegative(reduceResolution(expandBuckets(this.negativeSpans, this.negativeBuckets), this.schema, targetSchema));
    return c;
  }

  /**
   * Exact (bitwise) equality of content: same schema, counts, sum, zero
   * bucket, custom bounds and buckets, whatever the spans' shape.
   */
  equals(o: FloatHistogram): boolean {
    if (this.schema !== o.schema || !sameBits(this.count, o.count) || !sameBits(this.sum, o.sum)) return false;
    if (this.usesCustomBuckets() && !customBoundsMatch(this.customValues, o.customValues)) return false;
    if (this.zeroThreshold !== o.zeroThreshold || !sameBits(this.zeroCount, o.zeroCount)) return false;
    if (!spansMatch(this.negativeSpans, o.negativeSpans) || !bucketsMatch(this.negativeBuckets, o.negativeBuckets)) return false;
    return spansMatch(this.positiveSpans, o.positiveSpans) && bucketsMatch(this.positiveBuckets, o.positiveBuckets);
  }

  // --- Counter resets ------------------------------------------------------------------

  /** Whether this histogram, following `previous`, shows a counter reset (Prometheus' DetectReset). */
  detectReset(previous: FloatHistogram): boolean {
    if (this.counterResetHint === 'reset') return true;
    if (this.counterResetHint === 'not_reset') return false;
    if (this.count < previous.count) return true;
    if (this.usesCustomBuckets()) {
      if (!previous.usesCustomBuckets()) return true;
      if (!customBoundsMatch(this.customValues, previous.customValues)) return this.detectResetWithMismatchedBounds(previous);
    } else if (previous.usesCustomBuckets()) return true;
    if (this.schema > previous.schema) return true;
    if (this.zeroThreshold < previous.zeroThreshold) return true;
    const [previousZeroCount, newThreshold] = previous.zeroCountForLargerThreshold(this.zeroThreshold);
    if (newThreshold !== this.zeroThreshold) return true;
    if (this.zeroCount < previousZeroCount) return true;
    for (const positive of [true, false]) {
      const curr = this.mergedBuckets(positive, this.zeroThreshold, this.schema);
      const prev = previous.mergedBuckets(positive, this.zeroThreshold, this.schema);
      if (detectResetIn(curr, prev)) return true;
    }
    return false;
  }

  private detectResetWithMismatchedBounds(previous: FloatHistogram): boolean {
    const bounds = intersectCustomBounds(this.customValues ?? [], previous.customValues ?? []);
    const curr = mapCustomBuckets(expandBuckets(this.positiveSpans, this.positiveBuckets), this.customValues ?? [], bounds);
    const prev = mapCustomBuckets(expandBuckets(previous.positiveSpans, previous.positiveBuckets), previous.customValues ?? [], bounds);
    return curr.some((c, i) => c < prev[i]);
  }

  /**
   * Buckets of one side merged into targetSchema, skipping (for exponential
   * schemas) the leading ones whose upper bound is <= absoluteStart.
   */
  mergedBuckets(positive: boolean, absoluteStart: number, targetSchema: number): IndexedBucket[] {
    const pairs = positive ? expandBuckets(this.positiveSpans, this.positiveBuckets) : expandBuckets(this.negativeSpans, this.negativeBuckets);
    const merged = this.usesCustomBuckets() ? pairs : reduceResolution(pairs, this.schema, targetSchema);
    if (this.usesCustomBuckets() || absoluteStart === 0) return merged;
    let i = 0;
    while (i < merged.length && bucketBound(merged[i].index, targetSchema, undefined) <= absoluteStart) i++;
    return merged.slice(i);
  }

  // --- Iteration ------------------------------------------------------------------------

  /** The zero bucket ([-threshold, threshold]); histograms with custom buckets have none. */
  zeroBucket(): Bucket {
    return { lower: -this.zeroThreshold, upper: this.zeroThreshold, lowerInclusive: true, upperInclusive: true, count: this.zeroCount, index: 0 };
  }

  private bucketAt(index: number, count: number, positive: boolean): Bucket {
    const cv = this.customValues;
    let lower: number;
    let upper: number;
    if (positive) {
      upper = bucketBound(index, this.schema, cv);
      lower = bucketBound(index - 1, this.schema, cv);
    } else {
      lower = -bucketBound(index, this.schema, cv);
      upper = -bucketBound(index - 1, this.schema, cv);
    }
    return { lower, upper, lowerInclusive: lower < 0, upperInclusive: upper > 0, count, index };
  }

  /** Positive buckets, ascending from the zero bucket. */
  positiveBucketList(): Bucket[] {
    return expandBuckets(this.positiveSpans, this.positiveBuckets).map((b) => this.bucketAt(b.index, b.count, true));
  }

  /** Negative buckets, descending from the zero bucket. */
  negativeBucketList(): Bucket[] {
    return expandBuckets(this.negativeSpans, this.negativeBuckets).map((b) => this.bucketAt(b.index, b.count, false));
  }

  /**
   * Every bucket in ascending order: negative, zero (if populated), positive.
   * Buckets overlapping the zero bucket have that edge clipped to the threshold.
   */
  allBuckets(): Bucket[] {
    const out: Bucket[] = [];
    const clip = (b: Bucket): Bucket => {
      const c = { ...b };
      if (c.upper < 0 && c.upper > -this.zeroThreshold) c.upper = -this.zeroThreshold;
      else if (c.lower > 0 && c.lower < this.zeroThreshold) c.lower = this.zeroThreshold;
      return c;
    };
    for (const b of this.negativeBucketList().reverse()) out.push(clip(b));
    if (this.zeroCount > 0) out.push(this.zeroBucket());
    for (const b of this.positiveBucketList()) out.push(clip(b));
    return out;
  }

  // --- Printing ---------------------------------------------------------------------------

  /** Prometheus' FloatHistogram.String(), e.g. what count_values puts into its label. */
  toString(): string {
    const parts = [`{count:${formatGoG(this.count)}, sum:${formatGoG(this.sum)}`];
    for (const b of this.negativeBucketList()
      .filter((x) => x.count !== 0)
      .reverse())
      parts.push(bucketString(b));
    if (this.zeroCount !== 0) parts.push(bucketString(this.zeroBucket()));
    for (const b of this.positiveBucketList()) if (b.count !== 0) parts.push(bucketString(b));
    return parts.join(', ') + '}';
  }

  /** The promqltest notation of this histogram (Prometheus' TestExpression). */
  testExpression(): string {
    const m = this.copy().compact(Number.MAX_SAFE_INTEGER);
    const res: string[] = [];
    if (m.schema !== 0) res.push(`schema:${m.schema}`);
    if (m.count !== 0) res.push(`count:${formatGoG(m.count)}`);
    if (m.sum !== 0) res.push(`sum:${formatGoG(m.sum)}`);
    if (m.zeroCount !== 0) res.push(`z_bucket:${formatGoG(m.zeroCount)}`);
    if (m.zeroThreshold !== 0) res.push(`z_bucket_w:${formatGoG(m.zeroThreshold)}`);
    if (m.usesCustomBuckets()) res.push(`custom_values:[${(m.customValues ?? []).map(formatGoG).join(' ')}]`);
    if (m.counterResetHint !== 'unknown') res.push(`counter_reset_hint:${m.counterResetHint}`);
    const side = (key: string, offKey: string, spans: Span[], buckets: number[]) => {
      if (spans[0] && spans[0].offset !== 0) res.push(`${offKey}:${spans[0].offset}`);
      if (buckets.length > 0) res.push(`${key}:[${buckets.map(formatGoG).join(' ')}]`);
    };
    side('buckets', 'offset', m.positiveSpans, m.positiveBuckets);
    side('n_buckets', 'n_offset', m.negativeSpans, m.negativeBuckets);
    return `{{${res.join(' ')}}}`;
  }

  /** Whether any count or the sum overflowed to ±Inf (direct mean calculation must switch). */
  hasOverflow(): boolean {
    const inf = (v: number) => v === Infinity || v === -Infinity;
    return inf(this.count) || inf(this.sum) || inf(this.zeroCount) || this.positiveBuckets.some(inf) || this.negativeBuckets.some(inf);
  }

  /** Whether the schema is one PromQL can compute with. */
  isValidSchema(): boolean {
    return this.usesCustomBuckets() || isExponentialSchema(this.schema);
  }
}

/** this + other per index; `skip` drops the other side's buckets inside the zero bucket. */
function addPairs(mine: IndexedBucket[], theirs: IndexedBucket[], sign: number, skip: (idx: number) => boolean): IndexedBucket[] {
  const byIndex = new Map<number, number>();
  for (const b of mine) byIndex.set(b.index, (byIndex.get(b.index) ?? 0) + b.count);
  let below = true;
  for (const b of theirs) {
    if (below && skip(b.index)) continue;
    below = false;
    byIndex.set(b.index, (byIndex.get(b.index) ?? 0) + sign * b.count);
  }
  return [...byIndex].sort((a, b) => a[0] - b[0]).map(([index, count]) => ({ index, count }));
}

/** Kahan-adds `theirs` into (`mine`, compensation `comp`) per bucket index. */
function kahanPairs(mine: IndexedBucket[], comp: IndexedBucket[], theirs: IndexedBucket[], skip: (idx: number) => boolean): [IndexedBucket[], IndexedBucket[]] {
  const sums = new Map<number, number>();
  const comps = new Map<number, number>();
  for (const b of mine) sums.set(b.index, b.count);
  for (const b of comp) comps.set(b.index, b.count);
  let below = true;
  for (const b of theirs) {
    if (below && skip(b.index)) continue;
    below = false;
    const [sum, c] = kahanInc(b.count, sums.get(b.index) ?? 0, comps.get(b.index) ?? 0);
    sums.set(b.index, sum);
    comps.set(b.index, c);
  }
  const sorted = (m: Map<number, number>) => [...m].sort((a, b) => a[0] - b[0]).map(([index, count]) => ({ index, count }));
  return [sorted(sums), sorted(comps)];
}

/** Prometheus' detectReset over two bucket lists of one schema. */
function detectResetIn(curr: IndexedBucket[], prev: IndexedBucket[]): boolean {
  let c = 0;
  for (const p of prev) {
    while (c < curr.length && curr[c].index < p.index) c++;
    if (c >= curr.length || curr[c].index > p.index) {
      if (p.count !== 0) return true;
    } else if (curr[c].count < p.count) return true;
  }
  return false;
}

function sameBits(a: number, b: number): boolean {
  return Object.is(a, b) || (Number.isNaN(a) && Number.isNaN(b) && sameNaNBits(a, b));
}

const f64 = new Float64Array(2);
const u64 = new BigUint64Array(f64.buffer);
function sameNaNBits(a: number, b: number): boolean {
  f64[0] = a;
  f64[1] = b;
  return u64[0] === u64[1];
}

function bucketsMatch(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((x, i) => sameBits(x, b[i]));
}

function bucketString(b: Bucket): string {
  return `${b.lowerInclusive ? '[' : '('}${formatGoG(b.lower)},${formatGoG(b.upper)}${b.upperInclusive ? ']' : ')'}:${formatGoG(b.count)}`;
}
