// JVM flags for local brokers and the storage tool: small heap and fast startup over peak
// throughput (C1 only, serial GC, the class-data archive), slf4j-simple logging to stderr.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

export function jvmArgs(opts: { heapMb?: number; extra?: string[] } = {}): string[] {
  const heap = opts.heapMb ?? 512;
  return [
    `-Xmx${heap}m`,
    '-Xms64m',
    '-Xss512k',
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-XX:+ExitOnOutOfMemoryError',
    '-Xshare:auto',
    '-Djava.awt.headless=true',
    '-Dorg.slf4j.simpleLogger.showDateTime=true',
    "-Dorg.slf4j.simpleLogger.dateTimeFormat=yyyy-MM-dd'T'HH:mm:ss.SSS",
    // The full config dump and per-partition chatter drown what matters in the log.
    '-Dorg.slf4j.simpleLogger.log.org.apache.kafka.common.config=warn',
    '-Dorg.slf4j.simpleLogger.log.org.apache.kafka.common.utils.AppInfoParser=warn',
    '-Dorg.slf4j.simpleLogger.log.org.apache.kafka.common.metrics=warn',
    '-Dorg.slf4j.simpleLogger.log.state.change.logger=warn',
    ...(opts.extra ?? []),
  ];
}

export function classpath(libsDir: string): string {
  return `${libsDir}/*`;
}

/** The AppCDS archive of the broker's classes lives beside the jars it describes. */
export function classDataArchive(libsDir: string): string {
  return join(dirname(libsDir), 'kafka.jsa');
}

/** Flags that use the archive when it exists (-Xshare:auto ignores one that does not fit this JVM). */
export function classDataArgs(libsDir: string): string[] {
  const archive = classDataArchive(libsDir);
  return existsSync(archive) ? [`-XX:SharedArchiveFile=${archive}`] : [];
}
