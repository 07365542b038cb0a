// Preloaded into Strata's processes by the bench's --profile mode (NODE_OPTIONS=--import=<this>),
// because Node 20 refuses --cpu-prof in NODE_OPTIONS: runs the V8 CPU profiler through
// node:inspector from start to exit and writes <dir>/CPU.<pid>.cpuprofile; SIGUSR2
// writes <dir>/Heap.<pid>.<n>.heapsnapshot. SIGURG starts the steady phase's GC view: from then
// to exit, sampled allocations that lived into the old generation (still alive, or collected by
// a mark-compact: what makes full GCs run) go to <dir>/Alloc.<pid>.heapprofile, and the GCs' count
// and time to <dir>/GC.<pid>.json. Does nothing unless STRATA_BENCH_PROFILE_DIR is set.
import { Session } from 'node:inspector';
import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { writeHeapSnapshot } from 'node:v8';

const dir = process.env.STRATA_BENCH_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  // Same-thread inspector sessions answer synchronously, so the exit handler can still stop and write.
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: Number(process.env.STRATA_BENCH_PROFILE_INTERVAL_US ?? 1000) });
  session.post('Profiler.start');
  const gc = { major: 0, majorMs: 0, minor: 0, minorMs: 0 };
  let sampling = false;
  process.on('exit', () => {
    session.post('Profiler.stop', (err, res) => {
      if (!err && res?.profile) writeFileSync(join(dir, `CPU.${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
    if (!sampling) return;
    session.post('HeapProfiler.stopSampling', (err, res) => {
      if (!err && res?.profile) writeFileSync(join(dir, `Alloc.${process.pid}.heapprofile`), JSON.stringify(res.profile));
    });
    writeFileSync(join(dir, `GC.${process.pid}.json`), JSON.stringify(gc));
  });
  let n = 0;
  process.on('SIGUSR2', () => {
    const tmp = join(dir, `Heap.${process.pid}.${++n}.heapsnapshot.tmp`);
    writeHeapSnapshot(tmp);
    renameSync(tmp, tmp.slice(0, -'.tmp'.length));
  });
  process.on('SIGURG', () => {
    if (sampling) return;
    sampling = true;
    session.post('HeapProfiler.enable');
    // One sample per 32 KiB allocated; objects a scavenge collected are left out.
    session.post('HeapProfiler.startSampling', { samplingInterval: 32768, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: false });
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        const kind = e.detail?.kind;
        if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
          gc.major++;
          gc.majorMs += e.duration;
        } else if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
          gc.minor++;
          gc.minorMs += e.duration;
        }
      }
    }).observe({ entryTypes: ['gc'] });
  });
}
