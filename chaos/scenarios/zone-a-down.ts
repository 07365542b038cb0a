// Zone a loses every ingester at once (kill -9) for the fault window, then comes back and
// replays its partitions from Kafka. Zone b must answer every query meanwhile.

import type { Scenario } from './scenario.ts';

export const zoneADown: Scenario = {
  name: 'zone-a-down',
  description: 'kill -9 every zone-a ingester, keep them down for --fault-seconds, restart them',
  availabilityTarget: 0.999,
  async run(ctx) {
    const victims = ctx.cluster.ingesters('a');
    await Promise.all(
      victims.map(async (p) => {
        const pid = p.pid;
        await p.kill('SIGKILL');
        ctx.event(`kill -9 ${p.name} (pid ${pid})`);
      }),
    );
    await ctx.sleep(ctx.faultSeconds * 1000);
    ctx.markHeal();
    for (const p of victims) {
      p.start();
      ctx.event(`restarted ${p.name} (pid ${p.pid})`);
    }
  },
};
