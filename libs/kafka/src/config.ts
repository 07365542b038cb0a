// Flags of ingest storage on Kafka, named as in Mimir (-ingest-storage.kafka.*), for apps to
// compose into their config. Defaults live here and nowhere else.
import { z } from 'zod';
import { boolFlag, duration } from '@strata/service';

/** Mimir's default -ingest-storage.kafka.producer-max-record-size-bytes. */
export const DEFAULT_MAX_RECORD_SIZE_BYTES = 15_983_616;
/** Kafka's producer default of max.in.flight.requests.per.connection. */
export const DEFAULT_PRODUCER_MAX_IN_FLIGHT = 5;
/** Codecs of -ingest-storage.kafka.producer-compression (Kafka's compression.type, gzip aside). */
const PRODUCER_COMPRESSIONS = ['none', 'snappy', 'lz4', 'zstd'] as const;
export type ProducerCompression = (typeof PRODUCER_COMPRESSIONS)[number];

export const kafkaConfigShape = {
  'ingest-storage.kafka.address': z
    .string()
    .default('127.0.0.1:9092')
    .describe('Comma-separated Kafka bootstrap brokers, host:port (-target=all: none set starts a local broker).'),
  'ingest-storage.kafka.topic': z.string().min(1).default('ingest').describe('Kafka topic of the ingest storage; one partition per ingester pair.'),
  'ingest-storage.kafka.client-id': z.string().min(1).default('strata').describe('Kafka client id prefix.'),
  // Durations yield ms.
  'ingest-storage.kafka.write-timeout': duration('10s').describe('Upper bound of one acked (acks=all) write before the push is answered 503.'),
  'ingest-storage.kafka.write-attempt-timeout': duration('3s').describe(
    "Upper bound of one produce attempt within a write; a leader silent that long is asked again after fresh metadata. Keep it above the brokers' broker.session.timeout.ms.",
  ),
  'ingest-storage.kafka.session-timeout': duration('6s').describe(
    'No effect since the partition reader assigns its partition itself (no group membership, no session); accepted so existing configs still parse.',
  ),
  'ingest-storage.kafka.producer-max-in-flight': z.coerce
    .number()
    .int()
    .min(1)
    .default(DEFAULT_PRODUCER_MAX_IN_FLIGHT)
    .describe(
      'Produce requests a distributor has out at once; pushes that come while that many are out go to Kafka together in the next request (one batch per partition). Does not cap throughput: more waiting pushes make larger requests.',
    ),
  'ingest-storage.kafka.producer-record-version': z.coerce
    .number()
    .int()
    .min(2)
    .max(3)
    .default(3)
    .describe(
      'Record format the distributor writes: 3 sends float series with a symbols table (each label string once per record, so less Kafka traffic and less ingester CPU), 2 a remote-write 1.0 WriteRequest. Ingesters read both; set 2 while ingesters older than format 3 still run.',
    ),
  'ingest-storage.kafka.producer-compression': z
    .enum(PRODUCER_COMPRESSIONS)
    .default('zstd')
    .describe(
      "Codec of the distributor's record batches (Kafka's compression.type): none, snappy, lz4 or zstd. With none each record's value is snappy-compressed on its own (record formats 2 and 3); with a codec the batch is compressed whole and values go as they are (formats 1 and 4). zstd halves the bytes in Kafka at the same CPU (docs/benchmarks.md#producer-compression). Ingesters older than record format 4 read only none: set none while they still run.",
    ),
  'ingest-storage.kafka.producer-max-record-size-bytes': z.coerce
    .number()
    .int()
    .min(1024)
    .default(DEFAULT_MAX_RECORD_SIZE_BYTES)
    .describe("Largest Kafka record the distributor produces; a partition's series are split over records above it."),
  ...kafkaSecurityConfigShape(),
};

/** Authentication, encryption and rack of every Kafka connection, with Mimir's flag names. */
function kafkaSecurityConfigShape() {
  return {
    'ingest-storage.kafka.sasl-mechanism': z
      .enum(['', 'PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'])
      .default('')
      .describe('SASL mechanism to authenticate to Kafka with: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (empty: no SASL).'),
    'ingest-storage.kafka.sasl-username': z.string().default('').describe('SASL username (with -ingest-storage.kafka.sasl-mechanism).'),
    'ingest-storage.kafka.sasl-password': z
      .string()
      .default('')
      .describe('SASL password; in -config.file with -config.expand-env it can come from ${ENV}. Redacted on every page.'),
    'ingest-storage.kafka.tls-enabled': boolFlag(false).describe('Connect to Kafka over TLS.'),
    'ingest-storage.kafka.tls-ca-path': z.string().default('').describe("PEM file of the CAs that sign the brokers' certificates (empty: the system's)."),
    'ingest-storage.kafka.tls-cert-path': z
      .string()
      .default('')
      .describe('PEM file of the client certificate, for brokers that require one (with tls-key-path).'),
    'ingest-storage.kafka.tls-key-path': z.string().default('').describe("PEM file of the client certificate's private key."),
    'ingest-storage.kafka.tls-server-name': z.string().default('').describe("Name to check the brokers' certificates against (empty: the broker's host)."),
    'ingest-storage.kafka.tls-insecure-skip-verify': boolFlag(false).describe(
      'Accept any broker certificate. Only for trying things out: anyone on the path can read and change records.',
    ),
    'ingest-storage.kafka.client-rack': z
      .string()
      .default('')
      .describe("This client's rack (Kafka's client.rack): set it to the zone so brokers with a rack-aware replica selector serve fetches from the same zone."),
  };
}

export type KafkaConfig = z.infer<z.ZodObject<typeof kafkaConfigShape>>;

/** Splits the address flag into broker addresses. */
export function kafkaBrokers(address: string): string[] {
  return address
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a.length > 0);
}
