// The Apache Kafka release the local broker runs and where its jars are cached.
// Keep the default in step with scripts/kafka/pom.xml; STRATA_KAFKA_VERSION overrides it (to try another 4.x).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const KAFKA_VERSION = process.env.STRATA_KAFKA_VERSION || '4.3.1';

/** The monorepo root (this file lives in libs/local-kafka/src). */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');

/** The git-ignored directory holding the broker's jars for one Kafka version. */
export function kafkaLibsDir(version: string = KAFKA_VERSION): string {
  return join(REPO_ROOT, '.cache', 'kafka', version, 'libs');
}
