// One of two distributors dies (kill -9) mid-load; senders retry on the other, as behind a
// Service. A push it was handling is unacknowledged, so the sender retries it: nothing is lost.

import type { Scenario } from './scenario.ts';

export const distributorKill: Scenario = {
  name: 'distributor-kill',
  description: 'kill -9 one distributor, load continues via the other for --fault-seconds, restart it',
  availabilityTarget: 0.999,
  async run(ctx) {
    const victim = ctx.cluster.distributors()[1] ?? ctx.cluster.distributors()[0];
    const pid = victim.pid;
    await victim.kill('SIGKILL');
    ctx.event(`kill -9 ${victim.name} (pid ${pid})`);
    await ctx.sleep(ctx.faultSeconds * 1000);
    ctx.markHeal();
    victim.start();
    ctx.event(`restarted ${victim.name} (pid ${victim.pid})`);
  },
};
