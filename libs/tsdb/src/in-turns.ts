// Work over every series of a big head, cut into turns of the event loop: a block cut of a
// million series must not hold the loop for seconds (Kafka acks, fetches and every request
// time out behind it). Loops yield once SLICE_MS of work has gone by (Turns); a merge sort sorts
// runs of TURN_ITEMS at once and merges in slices.

import { setImmediate as nextTurn } from 'node:timers/promises';

/** Items of a sort run sorted at once (a few tens of milliseconds for series labels). */
export const TURN_ITEMS = 16_384;
/** Work between two turns of the event loop. */
const SLICE_MS = 20;
/** Items between two looks at the clock. */
const CLOCK_EVERY = 64;

/**
 * The slices of one long loop: `if (turns.due()) await turns.next();` in its body lets the event loop
 * turn once SLICE_MS of work has gone by, however much each item costs.
 */
export class Turns {
  private sliceStart = performance.now();
  private items = 0;

  due(): boolean {
    if (++this.items < CLOCK_EVERY) return false;
    this.items = 0;
    return performance.now() - this.sliceStart >= SLICE_MS;
  }

  async next(): Promise<void> {
    await nextTurn();
    this.sliceStart = performance.now();
  }
}

/** Calls `fn` for each item, in slices of the event loop's time. */
export async function forEachInTurns<T>(items: Iterable<T>, fn: (item: T) => void): Promise<void> {
  const turns = new Turns();
  for (const item of items) {
    if (turns.due()) await turns.next();
    fn(item);
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
  const turns = new Turns();
  let i = lo;
  let j = mid;
  for (let k = lo; k < hi; k++) {
    if (turns.due()) await turns.next();
    dst[k] = j >= hi || (i < mid && compare(src[i], src[j]) <= 0) ? src[i++] : src[j++];
  }
}
