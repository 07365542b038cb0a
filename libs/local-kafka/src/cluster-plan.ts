// Decides a local cluster's layout: node ids, loopback ports and cluster id. A data dir that
// already holds the cluster keeps its id (and its ports while they are free); never another size.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePorts } from './free-port.ts';
import type { ClusterLayout, NodeLayout } from './kraft-config.ts';
import { newKafkaUuid } from './kafka-uuid.ts';

interface ClusterState {
  clusterId: string;
  nodes: { nodeId: number; brokerPort: number; controllerPort: number }[];
}

// Reuses the cluster id (and, when still free, the ports) of a data dir that already holds this cluster.
export async function planCluster(dataDir: string, count: number): Promise<ClusterLayout> {
  const stateFile = join(dataDir, 'cluster.json');
  let previous: ClusterState | undefined;
  if (existsSync(stateFile)) {
    previous = JSON.parse(await readFile(stateFile, 'utf8')) as ClusterState;
    if (previous.nodes.length !== count) {
      throw new Error(`${dataDir} holds a ${previous.nodes.length}-node kafka cluster, not ${count}; use another dir`);
    }
  }
  const wanted = previous?.nodes.flatMap((n) => [n.brokerPort, n.controllerPort]) ?? [];
  const ports = await freePorts(2 * count, wanted);
  const clusterId = previous?.clusterId ?? newKafkaUuid();
  const nodes: NodeLayout[] = [];
  for (let i = 0; i < count; i++) {
    const nodeId = i + 1;
    nodes.push({ nodeId, brokerPort: ports[2 * i], controllerPort: ports[2 * i + 1], dir: join(dataDir, `node-${nodeId}`) });
  }
  const state: ClusterState = {
    clusterId,
    nodes: nodes.map(({ nodeId, brokerPort, controllerPort }) => ({ nodeId, brokerPort, controllerPort })),
  };
  await writeFile(stateFile, JSON.stringify(state, null, 2) + '\n');
  return { clusterId, nodes };
}
