// Flags of ingest storage on Kafka, named as in Mimir (-ingest-storage.kafka.*), for apps to
// compose into their config. Defaults live here and nowhere else.
import { z } from 'zod';
import { duration } from '@strata/service';

/** Mimir's default -ingest-storage.kafka.producer-max-record-size-bytes. */
export const DEFAULT_MAX_RECORD_SIZE_BYTES = 15_983_616;

export const kafkaConfigShape = {
  /** Comma-separated bootstrap brokers, host:port. */
  'ingest-storage.kafka.address': z.string().default('127.0.0.1:9092'),
  'ingest-storage.kafka.topic': z.string().min(1).default('ingest'),
  'ingest-storage.kafka.client-id': z.string().min(1).default('strata'),
  /** Upper bound of one acked write, as in Mimir; yields ms. */
  'ingest-storage.kafka.write-timeout': duration('10s'),
  /** Partition reader's group session timeout: how fast a killed ingester's successor gets the partition; yields ms. */
  'ingest-storage.kafka.session-timeout': duration('6s'),
  /** Largest record value the distributor produces; a partition's series are split over records above it (Mimir's default). */
  'ingest-storage.kafka.producer-max-record-size-bytes': z.coerce.number().int().min(1024).default(DEFAULT_MAX_RECORD_SIZE_BYTES),
};

export type KafkaConfig = z.infer<z.ZodObject<typeof kafkaConfigShape>>;

/** Splits the address flag into broker addresses. */
export function kafkaBrokers(address: string): string[] {
  return address
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a.length > 0);
}
