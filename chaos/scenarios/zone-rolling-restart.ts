// A rolling restart as a deploy does it: SIGTERM one ingester, restart it, wait until it is
// ready (caught up), then the next; all of zone a, then all of zone b.

import type { Scenario } from './scenario.ts';

export const zoneRollingRestart: Scenario = {
  name: 'zone-rolling-restart',
  description: 'SIGTERM + restart each zone-a ingester in turn, waiting for ready, then zone b',
  availabilityTarget: 0.999,
  async run(ctx) {
    for (const zone of ['a', 'b']) {
      for (const p of ctx.cluster.ingesters(zone)) {
        const pid = p.pid;
        const began = Date.now();
        await p.kill('SIGTERM');
        ctx.event(`SIGTERM ${p.name} (pid ${pid}) exited after ${Date.now() - began}ms`);
        p.start();
        await p.waitReady(300_000);
        ctx.event(`${p.name} restarted (pid ${p.pid}) and ready after ${Date.now() - began}ms`);
      }
    }
  },
};
