// Starts a local Apache Kafka cluster (1 or 3 combined KRaft nodes) on loopback and hands back
// its addresses and lifecycle. Never returns with a half-started cluster: on failure every node is killed.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { BrokerProcess } from './broker-process.ts';
import { planCluster } from './cluster-plan.ts';
import { fetchKafka } from './fetch-kafka.ts';
import { classDataArgs, jvmArgs } from './jvm-args.ts';
import { nodeFiles, scramCredentialArgs, serverProperties, type ClusterLayout, type NodeLayout, type SecureListener } from './kraft-config.ts';
import { tail } from './run-command.ts';
import { stopNodes } from './stop-nodes.ts';
import { formatStorage } from './storage-format.ts';
import { waitForPort, waitUntilRegistered, waitUntilWritable, type AbortCheck } from './wait-ready.ts';

export interface StartKafkaOptions {
  /** Holds one directory per node (config, data, server.log); reused if it already holds this cluster. */
  dataDir: string;
  brokers?: 1 | 3;
  /** Progress lines (formatting, pids, readiness); broker output goes to <dataDir>/node-N/server.log. */
  log?: (line: string) => void;
  /** Upper bound for the whole startup; default 90s. */
  startTimeoutMs?: number;
  /** Kafka version to run; default KAFKA_VERSION. */
  version?: string;
  /** Max heap per node in MiB; default 512. */
  heapMb?: number;
  /** Extra JVM flags appended after the defaults. */
  jvmArgs?: string[];
  /** A second client listener with TLS and/or SASL (its addresses: LocalKafka.secureBrokers); the PLAINTEXT one stays. */
  secure?: SecureListener;
  /** broker.rack per node (with the rack-aware replica selector), e.g. one zone each. */
  racks?: string[];
  /** A node exited that nobody stopped (crash, OOM, kill -9); `startBroker(i)` brings it back. */
  onUnexpectedExit?: (node: number, exit: { code: number | null; signal: NodeJS.Signals | null }) => void;
}

export interface LocalKafka {
  /** Bootstrap addresses, 'host:port', one per node; stable across stopBroker/startBroker. */
  readonly brokers: string[];
  /** The SECURE listener's addresses (with StartKafkaOptions.secure), one per node. */
  readonly secureBrokers: string[];
  /** The current (or last) pid of each node. */
  readonly pids: number[];
  readonly dataDir: string;
  /** Each node's stdout/stderr log file. */
  readonly logFiles: string[];
  /** SIGTERM to every node, SIGKILL after a timeout; resolves once all exited. */
  stop(): Promise<void>;
  /** Stops node `i` (index into brokers) with `signal` (default SIGTERM, SIGKILL after a timeout). */
  stopBroker(i: number, signal?: NodeJS.Signals): Promise<void>;
  /** Restarts node `i` with the same config and data; resolves when it serves and the cluster accepts writes. */
  startBroker(i: number): Promise<void>;
}

const STOP_KILL_AFTER_MS = 20_000;

export async function startKafka(opts: StartKafkaOptions): Promise<LocalKafka> {
  const started = Date.now();
  const count = opts.brokers ?? 1;
  const log = opts.log ?? (() => undefined);
  const deadline = started + (opts.startTimeoutMs ?? 90_000);
  const libsDir = await fetchKafka({ version: opts.version, log });

  await mkdir(opts.dataDir, { recursive: true });
  const layout = { ...(await planCluster(opts.dataDir, count, opts.secure)), ...(opts.racks !== undefined ? { racks: opts.racks } : {}) };
  const args = jvmArgs({ heapMb: opts.heapMb, extra: [...classDataArgs(libsDir), ...(opts.jvmArgs ?? [])] });
  // Nodes stopped on purpose (stopBroker) are not a reason to abort a wait, nor an unexpected exit.
  const wanted = layout.nodes.map(() => true);
  const procs = layout.nodes.map((node, i) => {
    const files = nodeFiles(node);
    const onExit = (exit: { code: number | null; signal: NodeJS.Signals | null }) => {
      if (wanted[i]) opts.onUnexpectedExit?.(i, exit);
    };
    return new BrokerProcess({ nodeId: node.nodeId, libsDir, propsFile: files.props, logFile: files.log, jvmArgs: args, onExit });
  });
  const killAll = (): void => procs.forEach((p) => p.killNow());
  process.on('exit', killAll);

  const brokers = layout.nodes.map((n) => `127.0.0.1:${n.brokerPort}`);
  const rf = Math.min(3, count);
  const abort = abortCheck(layout.nodes, procs, wanted);
  try {
    await prepareNodes(layout, libsDir);
    log(`kafka: ${count} node(s) prepared in ${Date.now() - started}ms`);
    for (const [i, p] of procs.entries()) log(`kafka: node ${layout.nodes[i].nodeId} pid ${p.start()} on ${brokers[i]}`);
    for (const node of layout.nodes) await waitForPort(node.brokerPort, { deadline, abort });
    log(`kafka: listening after ${Date.now() - started}ms`);
    await waitUntilWritable(brokers, rf, { deadline, abort });
  } catch (err) {
    wanted.fill(false);
    await Promise.all(procs.map((p) => p.stop('SIGKILL')));
    process.off('exit', killAll);
    throw new Error(`starting local kafka in ${opts.dataDir} failed: ${(err as Error).message}`, { cause: err });
  }
  log(`kafka: ${count} node(s) ready in ${Date.now() - started}ms: ${brokers.join(',')}`);

  return {
    brokers,
    secureBrokers: layout.nodes.flatMap((n) => (n.securePort === undefined ? [] : [`127.0.0.1:${n.securePort}`])),
    dataDir: opts.dataDir,
    logFiles: layout.nodes.map((n) => nodeFiles(n).log),
    get pids() {
      return procs.map((p) => p.pid ?? -1);
    },
    async stop() {
      wanted.fill(false);
      await stopNodes(procs, STOP_KILL_AFTER_MS);
      process.off('exit', killAll);
    },
    async stopBroker(i, signal = 'SIGTERM') {
      const p = nodeAt(procs, i);
      wanted[i] = false;
      await p.stop(signal, STOP_KILL_AFTER_MS);
    },
    async startBroker(i) {
      const p = nodeAt(procs, i);
      const node = layout.nodes[i];
      const restartDeadline = Date.now() + (opts.startTimeoutMs ?? 90_000);
      wanted[i] = true;
      log(`kafka: node ${node.nodeId} restarted, pid ${p.start()}`);
      const wait = { deadline: restartDeadline, abort };
      await waitForPort(node.brokerPort, wait);
      await waitUntilRegistered(brokers[i], node.nodeId, wait);
      await waitUntilWritable(brokers, rf, wait);
    },
  };
}

function nodeAt(procs: BrokerProcess[], i: number): BrokerProcess {
  const p = procs[i];
  if (p === undefined) throw new RangeError(`no kafka node at index ${i} (cluster has ${procs.length})`);
  return p;
}

async function prepareNodes(layout: ClusterLayout, libsDir: string): Promise<void> {
  await Promise.all(
    layout.nodes.map(async (node) => {
      const files = nodeFiles(node);
      await mkdir(node.dir, { recursive: true });
      await writeFile(files.props, serverProperties(layout, node));
      await formatStorage({
        libsDir,
        propsFile: files.props,
        dataDir: files.data,
        clusterId: layout.clusterId,
        nodeId: node.nodeId,
        logFile: files.formatLog,
        scramArgs: scramCredentialArgs(layout.secure),
      });
    }),
  );
}

function abortCheck(nodes: NodeLayout[], procs: BrokerProcess[], wanted: boolean[]): AbortCheck {
  return () => {
    for (const [i, p] of procs.entries()) {
      const exit = p.exited;
      if (exit === undefined || !wanted[i]) continue;
      const logFile = nodeFiles(nodes[i]).log;
      const lines = existsSync(logFile) ? tail(readFileSync(logFile, 'utf8'), 15) : '(no log)';
      return `kafka node ${nodes[i].nodeId} exited (code ${exit.code}, signal ${exit.signal}); ${logFile}:\n${lines}`;
    }
    return undefined;
  };
}
