// Formats a node's KRaft data dir before its first start. Kafka's storage tool runs once per
// Kafka version into a template; each node gets a copy with its own ids (one JVM less per node).
// Never formats a directory twice: a formatted node keeps its data across restarts.
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { newKafkaUuid } from './kafka-uuid.ts';
import { classDataArgs, classpath, jvmArgs } from './jvm-args.ts';
import { serverProperties } from './kraft-config.ts';
import { runCommand, tail } from './run-command.ts';

const META = 'meta.properties';
// What the storage tool writes into meta.properties for a static quorum; anything else means
// the format changed and cloning is no longer safe.
const META_KEYS = ['cluster.id', 'directory.id', 'node.id', 'version'];

function isFormatted(dataDir: string): boolean {
  return existsSync(join(dataDir, META));
}

function templateDir(libsDir: string): string {
  return join(dirname(libsDir), 'format-template');
}

export async function formatStorage(opts: {
  libsDir: string;
  propsFile: string;
  dataDir: string;
  clusterId: string;
  nodeId: number;
  logFile: string;
  /** The storage tool's --add-scram arguments (SCRAM users live in the metadata log): formatted by the tool itself, not from the template. */
  scramArgs?: string[];
}): Promise<void> {
  if (isFormatted(opts.dataDir)) return;
  const template = templateDir(opts.libsDir);
  if (isFormatted(template) && (opts.scramArgs ?? []).length === 0) {
    await cp(template, opts.dataDir, { recursive: true, filter: (src) => basename(src) !== META });
    await writeFile(join(opts.dataDir, META), metaProperties(opts.nodeId, opts.clusterId));
    return;
  }
  await runStorageTool(opts);
}

/** Runs the storage tool once into the template dir; the caller falls back to per-node formatting on error. */
export function hasFormatTemplate(libsDir: string): boolean {
  return isFormatted(templateDir(libsDir));
}

export async function buildFormatTemplate(libsDir: string): Promise<void> {
  const template = templateDir(libsDir);
  if (isFormatted(template)) return;
  const work = `${template}.tmp-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  try {
    const node = { nodeId: 1, brokerPort: 1, controllerPort: 2, dir: work };
    const propsFile = join(work, 'server.properties');
    const dataDir = join(work, 'data');
    await writeFile(propsFile, serverProperties({ clusterId: 'template', nodes: [node] }, node));
    await runStorageTool({ libsDir, propsFile, dataDir, clusterId: newKafkaUuid(), logFile: join(work, 'format.log') });
    const keys = Object.keys(parseProperties(await readFile(join(dataDir, META), 'utf8'))).sort();
    if (keys.join(',') !== META_KEYS.join(',')) {
      throw new Error(`unexpected ${META} keys ${keys.join(',')}; not cloning formatted storage`);
    }
    await rename(dataDir, template).catch((err: unknown) => {
      if (!isFormatted(template)) throw err;
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function runStorageTool(opts: {
  libsDir: string;
  propsFile: string;
  dataDir: string;
  clusterId: string;
  logFile: string;
  scramArgs?: string[];
}): Promise<void> {
  const args = [
    ...jvmArgs({ extra: classDataArgs(opts.libsDir) }),
    '-cp',
    classpath(opts.libsDir),
    'kafka.tools.StorageTool',
    'format',
    '--cluster-id',
    opts.clusterId,
    '--config',
    opts.propsFile,
    ...(opts.scramArgs ?? []),
  ];
  const r = await runCommand('java', args, { timeoutMs: 120_000 });
  await writeFile(opts.logFile, r.output);
  if (r.code !== 0) throw new Error(`formatting ${opts.dataDir} failed (exit ${r.code}):\n${tail(r.output)}`);
}

function metaProperties(nodeId: number, clusterId: string): string {
  return `#\n#written by @strata/local-kafka\nnode.id=${nodeId}\ndirectory.id=${newKafkaUuid()}\nversion=1\ncluster.id=${clusterId}\n`;
}

function parseProperties(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.startsWith('#') || !line.includes('=')) continue;
    const i = line.indexOf('=');
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim();
  }
  return out;
}
