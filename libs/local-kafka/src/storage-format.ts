// Formats a node's KRaft metadata/log directory (kafka-storage format) before its first start.
// Never formats a directory twice: a formatted node keeps its data across restarts.
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { classDataArgs } from './class-data-archive.ts';
import { classpath, jvmArgs } from './jvm-args.ts';
import { runCommand, tail } from './run-command.ts';

export function isFormatted(dataDir: string): boolean {
  return existsSync(join(dataDir, 'meta.properties'));
}

export async function formatStorage(opts: {
  libsDir: string;
  propsFile: string;
  dataDir: string;
  clusterId: string;
  logFile: string;
}): Promise<void> {
  if (isFormatted(opts.dataDir)) return;
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
  ];
  const r = await runCommand('java', args, { timeoutMs: 120_000 });
  await writeFile(opts.logFile, r.output);
  if (r.code !== 0) throw new Error(`formatting ${opts.dataDir} failed (exit ${r.code}):\n${tail(r.output)}`);
}
