// Starts a whole local Strata cluster on loopback (Kafka, distributor,
// ingester-zone-a-0/1, ingester-zone-b-0/1, querier) and keeps it running
// until Ctrl-C. Usage: npm run cluster -- [--dir D] [--partitions N] [--brokers 1|3] [--redis] [--query-frontend] [--queriers N]
// (npm runs it on the pinned Node; the Kafka client needs Node >= 22).
// (--redis: a local redis-server holds the partition ring; its page is <distributor>/ingester/partition-ring)
// (--query-frontend: a query-scheduler and a query-frontend too; the queriers pull queries from the scheduler)

import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LocalCluster } from '@strata/local-cluster';

const { values } = parseArgs({
  options: {
    dir: { type: 'string', default: './data/cluster' },
    partitions: { type: 'string', default: '2' },
    brokers: { type: 'string', default: '1' },
    redis: { type: 'boolean', default: false },
    'query-frontend': { type: 'boolean', default: false },
    queriers: { type: 'string', default: '1' },
  },
});
const dataDir = resolve(values.dir!);
console.log(`starting a local Strata cluster in ${dataDir} ...`);
const cluster = await LocalCluster.start({
  dataDir,
  partitions: Number(values.partitions),
  kafkaBrokers: values.brokers === '3' ? 3 : 1,
  redis: values.redis,
  queryFrontend: values['query-frontend'],
  queriers: Number(values.queriers),
  log: (line) => console.log(line),
});
console.log(`Kafka:        ${cluster.kafka.brokers.join(',')}`);
if (cluster.redis) console.log(`Redis:        ${cluster.redis.endpoint} (pid ${cluster.redis.pid}); ring ${cluster.distributorUrl}/ingester/partition-ring`);
for (const p of cluster.processes.values()) console.log(`${p.name.padEnd(20)} ${p.url}  pid ${p.pid}  log ${p.opts.logFile}`);
const queryUrl = values['query-frontend'] ? cluster.frontendUrl : cluster.querierUrl;
console.log(`push to ${cluster.distributorUrl}/api/v1/push (X-Scope-OrgID required), query ${queryUrl}/prometheus`);
const stop = async () => {
  console.log('stopping ...');
  await cluster.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
