// The (only) querier dies (kill -9) and is restarted at once, as a pod would be. Queries fail
// until it listens again, so availability here measures restart time, not redundancy.

import type { Scenario } from './scenario.ts';

export const querierKill: Scenario = {
  name: 'querier-kill',
  description: 'kill -9 the querier and restart it at once; the fault window lasts until it is ready',
  async run(ctx) {
    const q = ctx.cluster.process('querier');
    const pid = q.pid;
    await q.kill('SIGKILL');
    ctx.event(`kill -9 querier (pid ${pid})`);
    q.start();
    ctx.event(`restarted querier (pid ${q.pid})`);
    await q.waitReady();
    ctx.event('querier ready');
  },
};
