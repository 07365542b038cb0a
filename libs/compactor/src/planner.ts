// Which blocks to compact next (Prometheus' leveled planner, tsdb/compact.go):
// first any group of overlapping blocks (the two zones' copies of a range:
// vertical compaction), else, range by range above the first, the blocks of
// one aligned window, once the window is complete or older than the newest
// block. Blocks the ingesters just uploaded wait a little (both zones' copies
// should be there) before their first compaction. Pure: no I/O.

export interface PlanBlock {
  ulid: string;
  minTime: number;
  /** Exclusive. */
  maxTime: number;
  level: number;
  /** When the block was created (its ULID time), ms. */
  createdAt: number;
}

export interface PlanOptions {
  /** Block ranges in ms, ascending: the first is the ingesters' block range. */
  ranges: number[];
  now: number;
  /** Level-1 blocks younger than this are not compacted yet. */
  firstLevelWaitMs: number;
}

/** The next group to compact (two blocks or more, sorted by minTime), or null. */
export function planCompaction(blocks: PlanBlock[], opts: PlanOptions): PlanBlock[] | null {
  const ready = (b: PlanBlock) => b.level > 1 || opts.now - b.createdAt >= opts.firstLevelWaitMs;
  const sorted = blocks.slice().sort((a, b) => a.minTime - b.minTime || a.maxTime - b.maxTime || a.ulid.localeCompare(b.ulid));

  for (const group of overlappingGroups(sorted)) if (group.every(ready)) return group;
  if (overlappingGroups(sorted).length > 0) return null; // wait for the overlaps to be resolved first

  // The newest block is left alone, as in Prometheus: a window fills up before it is compacted.
  const candidates = sorted.slice(0, -1);
  if (candidates.length < 2) return null;
  const highTime = candidates[candidates.length - 1].minTime;
  for (const range of opts.ranges.slice(1)) {
    for (const part of splitByRange(candidates, range)) {
      if (part.length < 2 || !part.every(ready)) continue;
      const mint = part[0].minTime;
      const maxt = Math.max(...part.map((b) => b.maxTime));
      if (maxt - mint === range || maxt <= highTime) return part;
    }
  }
  return null;
}

/** Groups of two or more blocks whose [minTime, maxTime) ranges overlap (transitively). */
export function overlappingGroups(sorted: PlanBlock[]): PlanBlock[][] {
  const out: PlanBlock[][] = [];
  let cur: PlanBlock[] = [];
  let curMax = -Infinity;
  for (const b of sorted) {
    if (cur.length > 0 && b.minTime < curMax) {
      cur.push(b);
      curMax = Math.max(curMax, b.maxTime);
      continue;
    }
    if (cur.length > 1) out.push(cur);
    cur = [b];
    curMax = b.maxTime;
  }
  if (cur.length > 1) out.push(cur);
  return out;
}

/** Blocks wholly inside one aligned window [k*range, (k+1)*range), window by window; blocks crossing a window edge are left out. */
export function splitByRange(sorted: PlanBlock[], range: number): PlanBlock[][] {
  const out: PlanBlock[][] = [];
  let i = 0;
  while (i < sorted.length) {
    const b = sorted[i];
    const t0 = Math.floor(b.minTime / range) * range;
    if (b.maxTime > t0 + range) {
      i++;
      continue;
    }
    const group: PlanBlock[] = [];
    while (i < sorted.length && sorted[i].minTime >= t0 && sorted[i].maxTime <= t0 + range) group.push(sorted[i++]);
    while (i < sorted.length && sorted[i].minTime < t0 + range) i++;
    out.push(group);
  }
  return out;
}
