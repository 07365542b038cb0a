// Set operations on sorted series-ID lists (postings), as Uint32Arrays.

export const EMPTY_POSTINGS = new Uint32Array(0);

/** A list this many times shorter than the other is intersected by searching the other, not walking it. */
const SEARCH_RATIO = 32;

export function intersectPostings(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (a.length * SEARCH_RATIO < b.length) return intersectBySearch(a, b);
  if (b.length * SEARCH_RATIO < a.length) return intersectBySearch(b, a);
  const out = new Uint32Array(Math.min(a.length, b.length));
  let i = 0;
  let j = 0;
  let n = 0;
  while (i < a.length && j < b.length) {
    const x = a[i];
    const y = b[j];
    if (x === y) {
      out[n++] = x;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return out.subarray(0, n);
}

/** `small` ∩ `big`: each id of the short list is looked up in the long one by galloping then binary search (Prometheus' Seek). */
function intersectBySearch(small: Uint32Array, big: Uint32Array): Uint32Array {
  const out = new Uint32Array(small.length);
  let n = 0;
  let lo = 0;
  for (let i = 0; i < small.length && lo < big.length; i++) {
    const x = small[i];
    // Gallop to a window [lo, hi] that holds x if big does, then search it.
    let step = 1;
    let hi = lo;
    while (hi < big.length && big[hi] < x) {
      lo = hi + 1;
      hi += step;
      step *= 2;
    }
    if (hi >= big.length) hi = big.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (big[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    if (big[lo] === x) out[n++] = x;
  }
  return out.subarray(0, n);
}

/** Elements of `a` not in `b`. */
export function subtractPostings(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (b.length === 0) return a;
  const out = new Uint32Array(a.length);
  let j = 0;
  let n = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    while (j < b.length && b[j] < x) j++;
    if (j < b.length && b[j] === x) continue;
    out[n++] = x;
  }
  return out.subarray(0, n);
}

export function unionPostings(lists: Uint32Array[]): Uint32Array {
  if (lists.length === 0) return EMPTY_POSTINGS;
  if (lists.length === 1) return lists[0];
  let total = 0;
  for (const l of lists) total += l.length;
  const all = new Uint32Array(total);
  let off = 0;
  for (const l of lists) {
    all.set(l, off);
    off += l.length;
  }
  all.sort();
  let n = 0;
  for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[n - 1]) all[n++] = all[i];
  return all.subarray(0, n);
}
