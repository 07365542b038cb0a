// Kafka's random ids (cluster.id, directory.id): 16 random bytes in base64url, 22 characters.
import { randomBytes } from 'node:crypto';

/** Like Kafka's Uuid.randomUuid(): never starts with '-', which command-line parsers would take for a flag. */
export function newKafkaUuid(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}
