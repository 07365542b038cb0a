// The Apache Kafka release the local broker runs and where its jars are cached.
// Keep KAFKA_VERSION in step with the default in scripts/kafka/pom.xml.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const KAFKA_VERSION = '4.1.1';

/** The monorepo root (this file lives in libs/local-kafka/src). */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The git-ignored directory holding the broker's jars for one Kafka version. */
export function kafkaLibsDir(version: string = KAFKA_VERSION): string {
  return join(REPO_ROOT, '.cache', 'kafka', version, 'libs');
}
