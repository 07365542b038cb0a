// Resolves the Kafka broker jars from Maven Central into the git-ignored cache (once), then
// trains the class-data archive that speeds up broker start. Never leaves a half-filled libs dir.
import { existsSync } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { buildClassDataArchive } from './class-data-archive.ts';
import { classDataArchive } from './jvm-args.ts';
import { buildFormatTemplate, hasFormatTemplate } from './storage-format.ts';
import { KAFKA_VERSION, REPO_ROOT, kafkaLibsDir } from './kafka-version.ts';
import { runCommand, tail } from './run-command.ts';

const COMPLETE_MARKER = '.complete';

export interface FetchKafkaOptions {
  version?: string;
  /** Called with one line for each thing actually done (download, archive training). */
  log?: (line: string) => void;
}

/** Returns the directory holding the broker's jars, downloading them first if missing. */
export async function fetchKafka(opts: FetchKafkaOptions = {}): Promise<string> {
  const version = opts.version ?? KAFKA_VERSION;
  const libs = kafkaLibsDir(version);
  if (!existsSync(join(libs, COMPLETE_MARKER))) await download(version, libs, opts.log);
  await ensureFormatTemplate(libs, opts.log);
  await ensureClassDataArchive(libs, opts.log);
  return libs;
}

async function download(version: string, libs: string, log: FetchKafkaOptions['log']): Promise<void> {
  log?.(`fetching Apache Kafka ${version} jars from Maven Central into ${libs}`);
  await mkdir(dirname(libs), { recursive: true });
  const tmp = `${libs}.tmp-${process.pid}-${Date.now()}`;
  try {
    await copyDependencies(version, tmp);
    const jars = (await readdir(tmp)).filter((f) => f.endsWith('.jar'));
    if (!jars.some((j) => j.startsWith(`kafka_2.13-${version}`))) {
      throw new Error(`maven resolved no kafka_2.13-${version} jar into ${tmp}`);
    }
    await writeFile(join(tmp, COMPLETE_MARKER), jars.sort().join('\n') + '\n');
    await installDir(tmp, libs);
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}

async function ensureFormatTemplate(libs: string, log: FetchKafkaOptions['log']): Promise<void> {
  if (hasFormatTemplate(libs)) return;
  try {
    await buildFormatTemplate(libs);
  } catch (err) {
    log?.(`no storage template, each node will be formatted by kafka-storage: ${(err as Error).message}`);
  }
}

// A failed training is remembered (and reported once) so every start does not retry it.
async function ensureClassDataArchive(libs: string, log: FetchKafkaOptions['log']): Promise<void> {
  const archive = classDataArchive(libs);
  const failed = `${archive}.failed`;
  if (existsSync(archive) || existsSync(failed)) return;
  log?.(`training the broker class-data archive ${archive} (once, a few seconds)`);
  try {
    await buildClassDataArchive(libs);
  } catch (err) {
    await writeFile(failed, `${(err as Error).message}\n`);
    log?.(`class-data archive not built, brokers will start slower: ${(err as Error).message}`);
  }
}

async function copyDependencies(version: string, outDir: string): Promise<void> {
  const pom = join(REPO_ROOT, 'scripts', 'kafka', 'pom.xml');
  const args = ['-q', '-B', '-f', pom, 'dependency:copy-dependencies', `-Dkafka.version=${version}`, `-DoutputDirectory=${outDir}`];
  const r = await runCommand('mvn', args, { cwd: REPO_ROOT, timeoutMs: 600_000 });
  if (r.code !== 0) {
    throw new Error(`'mvn ${args.join(' ')}' failed (exit ${r.code}); is Maven Central reachable?\n${tail(r.output)}`);
  }
}

// Another process may have installed the same version meanwhile; theirs is as good as ours.
async function installDir(tmp: string, libs: string): Promise<void> {
  if (existsSync(libs) && !existsSync(join(libs, COMPLETE_MARKER))) {
    await rm(libs, { recursive: true, force: true });
  }
  try {
    await rename(tmp, libs);
  } catch (err) {
    if (!existsSync(join(libs, COMPLETE_MARKER))) throw err;
  }
}
