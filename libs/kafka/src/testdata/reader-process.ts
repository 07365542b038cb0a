// A PartitionReader in its own process, for tests that kill -9 a reader. Prints one JSON line per
// event on stdout: {"started":true}, then {"consumed":<next offset>} after each committed batch.
// Usage: node --import tsx reader-process.ts <brokers> <topic> <partition> <group>
import { PartitionReader } from '../partition-reader.ts';

const [brokers, topic, partition, group] = process.argv.slice(2);
const reader: PartitionReader = new PartitionReader({
  brokers: brokers.split(','),
  topic,
  partition: Number(partition),
  consumerGroup: group,
  startFrom: 'committed',
  onRecords: async (batch) => {
    const next = batch[batch.length - 1].offset + 1n;
    await reader.commit(next);
    console.log(JSON.stringify({ consumed: next.toString() }));
  },
});
await reader.start();
console.log(JSON.stringify({ started: true }));
