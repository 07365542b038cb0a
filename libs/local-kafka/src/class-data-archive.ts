// Builds an AppCDS archive of the broker's classes (one training run of a throwaway broker),
// which halves JVM startup. Optional: without an archive the broker simply starts slower.
import { existsSync } from 'node:fs';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrokerProcess } from './broker-process.ts';
import { freePorts } from './free-port.ts';
import { classDataArchive, jvmArgs } from './jvm-args.ts';
import { nodeFiles, serverProperties, type ClusterLayout } from './kraft-config.ts';
import { newKafkaUuid } from './kafka-uuid.ts';
import { formatStorage } from './storage-format.ts';
import { waitForPort, waitUntilWritable } from './wait-ready.ts';

/** Starts a 1-node broker once with -XX:ArchiveClassesAtExit, produces to it, stops it. */
export async function buildClassDataArchive(libsDir: string): Promise<void> {
  const archive = classDataArchive(libsDir);
  const tmpArchive = `${archive}.tmp-${process.pid}`;
  const dir = await mkdtemp(join(tmpdir(), 'strata-kafka-cds-'));
  const [brokerPort, controllerPort] = await freePorts(2);
  const node = { nodeId: 1, brokerPort, controllerPort, dir };
  const layout: ClusterLayout = { clusterId: newKafkaUuid(), nodes: [node] };
  const files = nodeFiles(node);
  const proc = new BrokerProcess({
    nodeId: 1,
    libsDir,
    propsFile: files.props,
    logFile: files.log,
    jvmArgs: jvmArgs({ extra: [`-XX:ArchiveClassesAtExit=${tmpArchive}`] }),
  });
  try {
    await writeFile(files.props, serverProperties(layout, node));
    await formatStorage({
      libsDir,
      propsFile: files.props,
      dataDir: files.data,
      clusterId: layout.clusterId,
      nodeId: 1,
      logFile: files.formatLog,
    });
    proc.start();
    const wait = {
      deadline: Date.now() + 120_000,
      abort: () => (proc.exited ? `training broker exited, see ${files.log}` : undefined),
    };
    await waitForPort(brokerPort, wait);
    await waitUntilWritable([`127.0.0.1:${brokerPort}`], 1, wait);
    // The archive is written while the JVM exits; give it time before any SIGKILL.
    await proc.stop('SIGTERM', 60_000);
    if (!existsSync(tmpArchive)) throw new Error(`the JVM wrote no class data archive; see ${files.log}`);
    await rename(tmpArchive, archive);
  } finally {
    await proc.stop('SIGKILL');
    await rm(tmpArchive, { force: true });
    await rm(dir, { recursive: true, force: true });
  }
}
