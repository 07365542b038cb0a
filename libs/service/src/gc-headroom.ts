// Headroom between V8's full GCs. With a small live heap (an ingester of 100,000 series
// holds about 90 MiB) and little garbage, V8's own growing factor left ~40 MiB of room and
// it started a new incremental mark-compact about every second, each freeing ~1.5 MiB:
// half of an ingester's CPU at 200,000 samples/s (docs/benchmarks.md, "GC headroom").
// While the live heap is small, let it grow 100 % before the next full GC, the headroom
// Go's default GOGC=100 gives Prometheus and Mimir; above the floor V8's own factor
// applies, so a large heap does not double. `node --heap-growing-percent=N` overrides.

import { PerformanceObserver, constants } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

/** Below this live heap V8 may grow it 100 % before the next full GC. */
export const GC_HEADROOM_FLOOR_BYTES = 256 * 1024 * 1024;

/** V8's --heap-growing-percent for a live heap of `liveBytes`: 100 under the floor, 0 (V8's own factor) from it on. */
export function heapGrowingPercent(liveBytes: number, floorBytes = GC_HEADROOM_FLOOR_BYTES): number {
  return liveBytes < floorBytes ? 100 : 0;
}

/**
 * Keeps the headroom for this process, re-judged after each full GC; returns a line for the
 * startup log. Does nothing when the command line sets --heap-growing-percent itself.
 */
export function keepGcHeadroom(execArgv: readonly string[] = process.execArgv): string {
  if (execArgv.some((a) => a.startsWith('--heap-growing-percent') || a.startsWith('--heap_growing_percent'))) {
    return 'V8 heap growth between full GCs: as set on the node command line';
  }
  let current = -1;
  const apply = () => {
    const percent = heapGrowingPercent(getHeapStatistics().used_heap_size);
    if (percent === current) return;
    current = percent;
    setFlagsFromString(`--heap-growing-percent=${percent}`);
  };
  apply();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if ((e as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) apply();
  }).observe({ entryTypes: ['gc'] });
  return `V8 heap may grow 100% between full GCs while under ${GC_HEADROOM_FLOOR_BYTES >> 20} MiB live (V8's own factor above; node --heap-growing-percent=N overrides)`;
}
