// One of three Kafka brokers dies (kill -9): the one leading partition 0 of the ingest topic,
// so leadership must move. With RF 3 and min.insync.replicas=2, acks=all writes keep working.

import type { Scenario } from './scenario.ts';

export const brokerDown: Scenario = {
  name: 'broker-down',
  description: 'kill -9 the Kafka broker leading partition 0, keep it down for --fault-seconds, restart it',
  availabilityTarget: 0.999,
  async run(ctx) {
    const kafka = ctx.cluster.local.kafka;
    const i = await ctx.cluster.partitionLeader(0);
    const pid = kafka.pids[i];
    const killedAt = Date.now();
    await kafka.stopBroker(i, 'SIGKILL');
    ctx.event(`kill -9 kafka broker ${kafka.brokers[i]} (pid ${pid}), leader of partition 0`);
    // The cluster's part of the stall: how long until a producer refreshing metadata sees a new leader.
    const next = await ctx.cluster.waitForNewLeader(0, i);
    ctx.event(`partition 0 led by kafka broker ${kafka.brokers[next]} ${Date.now() - killedAt}ms after the kill (leader election)`);
    await ctx.sleep(Math.max(0, ctx.faultSeconds * 1000 - (Date.now() - killedAt)));
    ctx.markHeal();
    ctx.event(`restarting kafka broker ${kafka.brokers[i]}`);
    await kafka.startBroker(i);
    ctx.event(`kafka broker ${kafka.brokers[i]} back (pid ${kafka.pids[i]}), cluster accepts acks=all writes`);
  },
};
