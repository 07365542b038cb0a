// Preloaded into Strata's processes by the bench's --profile mode (NODE_OPTIONS=--import=<this>),
// because Node 20 refuses --cpu-prof in NODE_OPTIONS: runs the V8 CPU profiler through
// node:inspector from start to exit and writes <dir>/CPU.<pid>.cpuprofile; SIGUSR2
// writes <dir>/Heap.<pid>.<n>.heapsnapshot. Does nothing unless STRATA_BENCH_PROFILE_DIR is set.
import { Session } from 'node:inspector';
import { writeFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { writeHeapSnapshot } from 'node:v8';

const dir = process.env.STRATA_BENCH_PROFILE_DIR;
if (dir) {
  const session = new Session();
  session.connect();
  // Same-thread inspector sessions answer synchronously, so the exit handler can still stop and write.
  session.post('Profiler.enable');
  session.post('Profiler.setSamplingInterval', { interval: Number(process.env.STRATA_BENCH_PROFILE_INTERVAL_US ?? 1000) });
  session.post('Profiler.start');
  process.on('exit', () => {
    session.post('Profiler.stop', (err, res) => {
      if (!err && res?.profile) writeFileSync(join(dir, `CPU.${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
  let n = 0;
  process.on('SIGUSR2', () => {
    const tmp = join(dir, `Heap.${process.pid}.${++n}.heapsnapshot.tmp`);
    writeHeapSnapshot(tmp);
    renameSync(tmp, tmp.slice(0, -'.tmp'.length));
  });
}
