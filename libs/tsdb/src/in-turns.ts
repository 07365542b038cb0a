// Work over every series of a big head, cut into turns of the event loop: a block cut of a
// million series must not hold the loop for seconds (Kafka acks, fetches and every request
// time out behind it). A merge sort whose runs and merges yield every TURN_ITEMS items.

import { setImmediate as nextTurn } from 'node:timers/promises';

/** Items handled between two turns of the event loop. */
export const TURN_ITEMS = 16_384;

/** Calls `fn` for each item, yielding to the event loop every TURN_ITEMS items. */
export async function forEachInTurns<T>(items: readonly T[], fn: (item: T) => void): Promise<void> {
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && i % TURN_ITEMS === 0) await nextTurn();
    fn(items[i]);
  }
}

/** Sorts `items` in place as Array.prototype.sort would (stably), yielding every TURN_ITEMS items of work. */
export async function sortInTurns<T>(items: T[], compare: (a: T, b: T) => number): Promise<T[]> {
  if (items.length <= TURN_ITEMS) return items.sort(compare);
  for (let from = 0; from < items.length; from += TURN_ITEMS) {
    const run = items.slice(from, from + TURN_ITEMS).sort(compare);
    for (let i = 0; i < run.length; i++) items[from + i] = run[i];
    await nextTurn();
  }
  let src = items;
  let dst = new Array<T>(items.length);
  for (let width = TURN_ITEMS; width < items.length; width *= 2) {
    for (let from = 0; from < items.length; from += 2 * width) {
      await mergeInTurns(src, dst, from, Math.min(from + width, items.length), Math.min(from + 2 * width, items.length), compare);
    }
    [src, dst] = [dst, src];
  }
  if (src !== items) for (let i = 0; i < items.length; i++) items[i] = src[i];
  return items;
}

/** Merges src[lo, mid) and src[mid, hi) into dst[lo, hi); the left run wins ties (stable). */
async function mergeInTurns<T>(src: T[], dst: T[], lo: number, mid: number, hi: number, compare: (a: T, b: T) => number): Promise<void> {
  let i = lo;
  let j = mid;
  for (let k = lo; k < hi; k++) {
    if (k > lo && (k - lo) % TURN_ITEMS === 0) await nextTurn();
    dst[k] = j >= hi || (i < mid && compare(src[i], src[j]) <= 0) ? src[i++] : src[j++];
  }
}
