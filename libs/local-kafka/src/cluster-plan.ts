// Decides a local cluster's layout: node ids, loopback ports and cluster id. A data dir that
// already holds the cluster keeps its id (and its ports while they are free); never another size.
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { freePorts } from './free-port.ts';
import type { ClusterLayout, NodeLayout, SecureListener } from './kraft-config.ts';
import { newKafkaUuid } from './kafka-uuid.ts';

interface ClusterState {
  clusterId: string;
  nodes: { nodeId: number; brokerPort: number; controllerPort: number; securePort?: number }[];
}

// Reuses the cluster id (and, when still free, the ports) of a data dir that already holds this cluster.
export async function planCluster(dataDir: string, count: number, secure?: SecureListener): Promise<ClusterLayout> {
  const stateFile = join(dataDir, 'cluster.json');
  let previous: ClusterState | undefined;
  if (existsSync(stateFile)) {
    previous = JSON.parse(await readFile(stateFile, 'utf8')) as ClusterState;
    if (previous.nodes.length !== count) {
      throw new Error(`${dataDir} holds a ${previous.nodes.length}-node kafka cluster, not ${count}; use another dir`);
    }
  }
  const perNode = secure === undefined ? 2 : 3;
  const wanted = previous?.nodes.flatMap((n) => [n.brokerPort, n.controllerPort, ...(perNode === 3 ? [n.securePort ?? 0] : [])]) ?? [];
  const ports = await freePorts(perNode * count, wanted);
  const clusterId = previous?.clusterId ?? newKafkaUuid();
  const nodes: NodeLayout[] = [];
  for (let i = 0; i < count; i++) {
    const nodeId = i + 1;
    const [brokerPort, controllerPort, securePort] = ports.slice(perNode * i, perNode * (i + 1));
    nodes.push({ nodeId, brokerPort, controllerPort, ...(securePort !== undefined ? { securePort } : {}), dir: join(dataDir, `node-${nodeId}`) });
  }
  const state: ClusterState = {
    clusterId,
    nodes: nodes.map(({ nodeId, brokerPort, controllerPort, securePort }) => ({ nodeId, brokerPort, controllerPort, securePort })),
  };
  await writeFile(stateFile, JSON.stringify(state, null, 2) + '\n');
  return { clusterId, nodes, ...(secure !== undefined ? { secure } : {}) };
}
