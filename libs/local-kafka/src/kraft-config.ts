// Builds server.properties for one combined broker+controller KRaft node of a local cluster,
// tuned for a small machine and fast startup. Listeners are loopback only.
import { join } from 'node:path';

export interface NodeLayout {
  nodeId: number;
  brokerPort: number;
  controllerPort: number;
  /** The SECURE listener's port, when the cluster has one. */
  securePort?: number;
  /** The node's own directory: server.properties, server.log and the data dir live here. */
  dir: string;
}

export interface ClusterLayout {
  clusterId: string;
  nodes: NodeLayout[];
  /** A second client listener that authenticates and/or encrypts (the PLAINTEXT one stays for the brokers themselves and probes). */
  secure?: SecureListener;
  /** broker.rack of each node, with the rack-aware replica selector: consumers that say their rack fetch from a replica in it (KIP-392). */
  racks?: string[];
}

export type SaslMechanism = 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';

/** The SECURE listener: TLS, SASL or both (SASL_SSL). */
export interface SecureListener {
  tls?: {
    /** PEM file holding the broker's unencrypted PKCS#8 private key and its certificate chain. */
    keystorePem: string;
    /** PEM file of the CAs that sign client certificates: set, the listener requires one. */
    clientCaPem?: string;
  };
  /** Mechanisms the listener offers and the users (name → password) each of them knows. */
  sasl?: { mechanisms: SaslMechanism[]; users: Record<string, string> };
}

// Fits the largest record the distributor produces (-ingest-storage.kafka.producer-max-record-size-bytes, 15983616) plus batch framing; as in k8s/.
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const HOST = '127.0.0.1';

export function nodeFiles(node: NodeLayout): { props: string; log: string; data: string; formatLog: string } {
  return {
    props: join(node.dir, 'server.properties'),
    log: join(node.dir, 'server.log'),
    data: join(node.dir, 'data'),
    formatLog: join(node.dir, 'format.log'),
  };
}

export function serverProperties(cluster: ClusterLayout, node: NodeLayout): string {
  const n = cluster.nodes.length;
  const rf = Math.min(3, n);
  const minIsr = n >= 3 ? 2 : 1;
  const voters = cluster.nodes.map((v) => `${v.nodeId}@${HOST}:${v.controllerPort}`).join(',');
  const secure = cluster.secure !== undefined && node.securePort !== undefined ? `,SECURE://${HOST}:${node.securePort}` : '';
  const props: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': node.nodeId,
    'controller.quorum.voters': voters,
    listeners: `PLAINTEXT://${HOST}:${node.brokerPort},CONTROLLER://${HOST}:${node.controllerPort}${secure}`,
    'advertised.listeners': `PLAINTEXT://${HOST}:${node.brokerPort}${secure}`,
    'controller.listener.names': 'CONTROLLER',
    'inter.broker.listener.name': 'PLAINTEXT',
    'listener.security.protocol.map': `PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT${cluster.secure === undefined ? '' : `,SECURE:${securityProtocol(cluster.secure)}`}`,
    ...secureListenerProperties(cluster.secure, node),
    ...rackProperties(cluster, node),
    'log.dirs': nodeFiles(node).data,

    // Topics are created on purpose (ensureTopic), never by a typo in a client.
    'auto.create.topics.enable': false,
    'num.partitions': 1,
    'default.replication.factor': rf,
    'min.insync.replicas': minIsr,
    'message.max.bytes': MAX_MESSAGE_BYTES,
    'replica.fetch.max.bytes': MAX_MESSAGE_BYTES,

    // Internal topics sized for the cluster; few partitions so coordinators load fast.
    'offsets.topic.replication.factor': rf,
    'offsets.topic.num.partitions': 4,
    'transaction.state.log.replication.factor': rf,
    'transaction.state.log.min.isr': minIsr,
    'transaction.state.log.num.partitions': 4,
    'share.coordinator.state.topic.replication.factor': rf,
    'share.coordinator.state.topic.min.isr': minIsr,
    'share.coordinator.state.topic.num.partitions': 4,

    // Consumer groups: no join delay, and sessions as short as 1s are allowed (readers use ~6s).
    'group.initial.rebalance.delay.ms': 0,
    'group.min.session.timeout.ms': 1000,

    // A fresh quorum elects its first leader sooner (default waits 1-2s).
    'controller.quorum.election.timeout.ms': 500,
    // Nodes are combined broker+controller: killing the active controller's node first costs a
    // controller election (followers notice after this fetch timeout; default 2s), then the new
    // controller's full broker session before it fences the dead broker. 1s is the lowest sane
    // value (twice the leader's 500ms fetch wait, KIP-1236); a spurious controller election moves
    // no partition leader.
    'controller.quorum.fetch.timeout.ms': 1000,

    // A killed broker is fenced (its partitions get new leaders, it leaves every ISR) once the
    // controller has missed its heartbeats for the session timeout: that bounds the write stall
    // of a partition leader's death (Kafka's defaults, 2s / 9s, make it ~9s). 8 heartbeats a
    // session, so a loaded box's pauses do not fence live brokers. docs/operations.md has the
    // production values.
    'broker.heartbeat.interval.ms': 250,
    'broker.session.timeout.ms': 2000,
    'replica.lag.time.max.ms': 10000,

    // Small machine: few threads, small buffers.
    'num.network.threads': 2,
    'num.io.threads': 4,
    'background.threads': 4,
    'num.recovery.threads.per.data.dir': 1,
    'num.replica.fetchers': 1,
    'log.cleaner.threads': 1,
    'log.cleaner.dedupe.buffer.size': 8 * 1024 * 1024,
    'group.coordinator.threads': 1,
    'share.coordinator.threads': 1,
  };
  const lines = Object.entries(props).map(([k, v]) => `${k}=${String(v)}`);
  return `# generated by @strata/local-kafka for node ${node.nodeId} of cluster ${cluster.clusterId}\n${lines.join('\n')}\n`;
}

function rackProperties(cluster: ClusterLayout, node: NodeLayout): Record<string, string> {
  const rack = cluster.racks?.[cluster.nodes.indexOf(node)];
  if (rack === undefined) return {};
  return { 'broker.rack': rack, 'replica.selector.class': 'org.apache.kafka.common.replica.RackAwareReplicaSelector' };
}

function securityProtocol(s: SecureListener): string {
  if (s.sasl !== undefined) return s.tls !== undefined ? 'SASL_SSL' : 'SASL_PLAINTEXT';
  return 'SSL';
}

/** The SECURE listener's own settings (listener.name.secure.*): its keystore, client CAs and SASL logins. */
function secureListenerProperties(s: SecureListener | undefined, node: NodeLayout): Record<string, string> {
  if (s === undefined || node.securePort === undefined) return {};
  const p = 'listener.name.secure.';
  const out: Record<string, string> = {};
  if (s.tls !== undefined) {
    out[`${p}ssl.keystore.type`] = 'PEM';
    out[`${p}ssl.keystore.location`] = s.tls.keystorePem;
    if (s.tls.clientCaPem !== undefined) {
      out[`${p}ssl.truststore.type`] = 'PEM';
      out[`${p}ssl.truststore.location`] = s.tls.clientCaPem;
      out[`${p}ssl.client.auth`] = 'required';
    }
  }
  if (s.sasl !== undefined) {
    out[`${p}sasl.enabled.mechanisms`] = s.sasl.mechanisms.join(',');
    for (const m of s.sasl.mechanisms) {
      // PLAIN checks the users listed here; SCRAM checks the credentials formatted into the metadata log.
      const users = Object.entries(s.sasl.users).map(([name, pw]) => ` user_${name}="${pw}"`);
      out[`${p}${m.toLowerCase()}.sasl.jaas.config`] =
        m === 'PLAIN'
          ? `org.apache.kafka.common.security.plain.PlainLoginModule required${users.join('')};`
          : 'org.apache.kafka.common.security.scram.ScramLoginModule required;';
    }
  }
  return out;
}

/** The storage tool's --add-scram arguments: every user, for every SCRAM mechanism the listener offers. */
export function scramCredentialArgs(s: SecureListener | undefined): string[] {
  const scram = (s?.sasl?.mechanisms ?? []).filter((m) => m !== 'PLAIN');
  return scram.flatMap((m) => Object.entries(s!.sasl!.users).flatMap(([name, pw]) => ['--add-scram', `${m}=[name=${name},password=${pw}]`]));
}
