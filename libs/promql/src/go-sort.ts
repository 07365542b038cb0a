// Go's sort.Sort (pattern-defeating quicksort, the same algorithm as
// slices.SortFunc) and container/heap, step for step: Prometheus orders topk,
// bottomk, sort(), sort_desc() and quantile() with them, and where values tie
// (or NaN makes its Less inconsistent) only the same swaps give the same order.
// Never swap in a "better" sort here: the exact sequence of Less/Swap is the point.

/** What Go's sort.Interface and heap.Interface index: one collection's Less and Swap. */
export interface GoSortable {
  less(i: number, j: number): boolean;
  swap(i: number, j: number): void;
}

/** `data` with Less reversed (Go's sort.Reverse). */
export function goReverse(data: GoSortable): GoSortable {
  return { less: (i, j) => data.less(j, i), swap: (i, j) => data.swap(i, j) };
}

/** Go's bits.Len for a non-negative int below 2^32. */
const bitsLen = (n: number): number => 32 - Math.clz32(n);

/** sort.Sort(data) for data of length n (also slices.SortFunc, which runs the same pdqsort). */
export function goSort(data: GoSortable, n: number): void {
  if (n <= 1) return;
  pdqsort(data, 0, n, bitsLen(n));
}

const MAX_INSERTION = 12;

type SortedHint = 'unknown' | 'increasing' | 'decreasing';

function pdqsort(data: GoSortable, a: number, b: number, limit: number): void {
  let wasBalanced = true;
  let wasPartitioned = true;
  for (;;) {
    const length = b - a;
    if (length <= MAX_INSERTION) return insertionSort(data, a, b);
    if (limit === 0) return heapSort(data, a, b);
    if (!wasBalanced) {
      breakPatterns(data, a, b);
      limit--;
    }
    let [pivot, hint] = choosePivot(data, a, b);
    if (hint === 'decreasing') {
      reverseRange(data, a, b);
      pivot = b - 1 - (pivot - a);
      hint = 'increasing';
    }
    if (wasBalanced && wasPartitioned && hint === 'increasing' && partialInsertionSort(data, a, b)) return;
    if (a > 0 && !data.less(a - 1, pivot)) {
      a = partitionEqual(data, a, b, pivot);
      continue;
    }
    const [mid, alreadyPartitioned] = partition(data, a, b, pivot);
    wasPartitioned = alreadyPartitioned;
    const leftLen = mid - a;
    const rightLen = b - mid;
    const balanceThreshold = Math.trunc(length / 8);
    if (leftLen < rightLen) {
      wasBalanced = leftLen >= balanceThreshold;
      pdqsort(data, a, mid, limit);
      a = mid + 1;
    } else {
      wasBalanced = rightLen >= balanceThreshold;
      pdqsort(data, mid + 1, b, limit);
      b = mid;
    }
  }
}

function insertionSort(data: GoSortable, a: number, b: number): void {
  for (let i = a + 1; i < b; i++) {
    for (let j = i; j > a && data.less(j, j - 1); j--) data.swap(j, j - 1);
  }
}

function siftDown(data: GoSortable, lo: number, hi: number, first: number): void {
  let root = lo;
  for (;;) {
    let child = 2 * root + 1;
    if (child >= hi) return;
    if (child + 1 < hi && data.less(first + child, first + child + 1)) child++;
    if (!data.less(first + root, first + child)) return;
    data.swap(first + root, first + child);
    root = child;
  }
}

function heapSort(data: GoSortable, a: number, b: number): void {
  const first = a;
  const hi = b - a;
  for (let i = Math.trunc((hi - 1) / 2); i >= 0; i--) siftDown(data, i, hi, first);
  for (let i = hi - 1; i >= 0; i--) {
    data.swap(first, first + i);
    siftDown(data, 0, i, first);
  }
}

/** One quicksort partition around data[pivot]; returns its new place and whether nothing had to move. */
function partition(data: GoSortable, a: number, b: number, pivot: number): [number, boolean] {
  data.swap(a, pivot);
  let i = a + 1;
  let j = b - 1;
  while (i <= j && data.less(i, a)) i++;
  while (i <= j && !data.less(j, a)) j--;
  if (i > j) {
    data.swap(j, a);
    return [j, true];
  }
  data.swap(i, j);
  i++;
  j--;
  for (;;) {
    while (i <= j && data.less(i, a)) i++;
    while (i <= j && !data.less(j, a)) j--;
    if (i > j) break;
    data.swap(i, j);
    i++;
    j--;
  }
  data.swap(j, a);
  return [j, false];
}

/** Splits data[a:b] (nothing smaller than the pivot in it) into elements equal to the pivot, then greater ones. */
function partitionEqual(data: GoSortable, a: number, b: number, pivot: number): number {
  data.swap(a, pivot);
  let i = a + 1;
  let j = b - 1;
  for (;;) {
    while (i <= j && !data.less(a, i)) i++;
    while (i <= j && data.less(a, j)) j--;
    if (i > j) break;
    data.swap(i, j);
    i++;
    j--;
  }
  return i;
}

/** Shifts at most a few out-of-order neighbours; true when data[a:b] ends up sorted. */
function partialInsertionSort(data: GoSortable, a: number, b: number): boolean {
  const maxSteps = 5;
  const shortestShifting = 50;
  let i = a + 1;
  for (let step = 0; step < maxSteps; step++) {
    while (i < b && !data.less(i, i - 1)) i++;
    if (i === b) return true;
    if (b - a < shortestShifting) return false;
    data.swap(i, i - 1);
    if (i - a >= 2) {
      for (let j = i - 1; j >= 1; j--) {
        if (!data.less(j, j - 1)) break;
        data.swap(j, j - 1);
      }
    }
    if (b - i >= 2) {
      for (let j = i + 1; j < b; j++) {
        if (!data.less(j, j - 1)) break;
        data.swap(j, j - 1);
      }
    }
  }
  return false;
}

const MASK64 = (1n << 64n) - 1n;

/** Scatters three elements with Go's xorshift64 seeded by the length (rare: only after an unbalanced partition). */
function breakPatterns(data: GoSortable, a: number, b: number): void {
  const length = b - a;
  if (length < 8) return;
  let random = BigInt(length);
  const modulus = 2 ** bitsLen(length);
  const mask = BigInt(modulus - 1);
  const mid = a + Math.trunc(length / 4) * 2;
  for (let idx = mid - 1; idx <= mid + 1; idx++) {
    random ^= (random << 13n) & MASK64;
    random ^= random >> 7n;
    random ^= (random << 17n) & MASK64;
    let other = Number(random & mask);
    if (other >= length) other -= length;
    data.swap(idx, a + other);
  }
}

function choosePivot(data: GoSortable, a: number, b: number): [number, SortedHint] {
  const shortestNinther = 50;
  const maxSwaps = 4 * 3;
  const l = b - a;
  const swaps = { n: 0 };
  const quarter = Math.trunc(l / 4);
  let i = a + quarter;
  let j = a + quarter * 2;
  let k = a + quarter * 3;
  if (l >= 8) {
    if (l >= shortestNinther) {
      i = median(data, i - 1, i, i + 1, swaps);
      j = median(data, j - 1, j, j + 1, swaps);
      k = median(data, k - 1, k, k + 1, swaps);
    }
    j = median(data, i, j, k, swaps);
  }
  if (swaps.n === 0) return [j, 'increasing'];
  if (swaps.n === maxSwaps) return [j, 'decreasing'];
  return [j, 'unknown'];
}

/** The index of the median of data[a], data[b], data[c], counting the swaps of order2. */
function median(data: GoSortable, a: number, b: number, c: number, swaps: { n: number }): number {
  const order2 = (x: number, y: number): [number, number] => {
    if (data.less(y, x)) {
      swaps.n++;
      return [y, x];
    }
    return [x, y];
  };
  [a, b] = order2(a, b);
  [b, c] = order2(b, c);
  [a, b] = order2(a, b);
  return b;
}

function reverseRange(data: GoSortable, a: number, b: number): void {
  for (let i = a, j = b - 1; i < j; i++, j--) data.swap(i, j);
}

// --- container/heap -------------------------------------------------------------

/** heap.Push's second half: the caller has appended element n-1; move it up. */
export function goHeapUp(h: GoSortable, j: number): void {
  for (;;) {
    const i = Math.trunc((j - 1) / 2);
    if (i === j || !h.less(j, i)) return;
    h.swap(i, j);
    j = i;
  }
}

/** heap.Fix(h, i) for a heap of n elements. */
export function goHeapFix(h: GoSortable, i: number, n: number): void {
  if (!heapDown(h, i, n)) goHeapUp(h, i);
}

function heapDown(h: GoSortable, i0: number, n: number): boolean {
  let i = i0;
  for (;;) {
    const j1 = 2 * i + 1;
    if (j1 >= n) break;
    let j = j1;
    const j2 = j1 + 1;
    if (j2 < n && h.less(j2, j1)) j = j2;
    if (!h.less(j, i)) break;
    h.swap(i, j);
    i = j;
  }
  return i > i0;
}

// --- What Prometheus sorts samples with ---------------------------------------

/** vectorByValueHeap.Less (promql/functions.go): NaN is less than anything, even NaN. */
export const valueLess = (a: number, b: number): boolean => Number.isNaN(a) || a < b;
/** vectorByReverseValueHeap.Less: NaN first, then descending. */
export const reverseValueLess = (a: number, b: number): boolean => Number.isNaN(a) || a > b;
