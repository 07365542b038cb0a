// Stops every node of a cluster at once. SIGTERM lets each broker flush and close its logs
// cleanly; stragglers are SIGKILLed rather than waited for (see below).
import type { BrokerProcess } from './broker-process.ts';

// Once one node has exited, the others have long finished their broker shutdown and only wait
// (Kafka hard-codes 5s) for KRaft peers that are already gone to acknowledge their resignation.
const AFTER_FIRST_EXIT_MS = 2000;

export async function stopNodes(procs: BrokerProcess[], killAfterMs: number): Promise<void> {
  const running = procs.filter((p) => p.running);
  if (running.length === 0) return;
  const deadline = Date.now() + killAfterMs;
  const left = (): number => Math.max(0, deadline - Date.now());
  for (const p of running) p.signal('SIGTERM');
  if (running.length > 1) {
    await Promise.race(running.map((p) => p.waitForExit(left())));
    await Promise.all(running.map((p) => p.waitForExit(Math.min(AFTER_FIRST_EXIT_MS, left()))));
  } else {
    await running[0].waitForExit(left());
  }
  for (const p of running) p.signal('SIGKILL');
  await Promise.all(running.map((p) => p.waitForExit()));
}
