// Public surface of @strata/kafka: ingest storage on Kafka (@platformatic/kafka).
export { IngestWriter } from './ingest-writer.ts';
export type { IngestWriterOptions } from './ingest-writer.ts';
export { PartitionReader } from './partition-reader.ts';
export type { PartitionReaderOptions, StartFrom } from './partition-reader.ts';
export { fetchLastProducedOffsets } from './offsets.ts';
export { LastProducedOffsetsReader } from './last-produced-offsets.ts';
export type { LastProducedOffsetsOptions } from './last-produced-offsets.ts';
export { KafkaError, KafkaUnavailableError, PartitionReaderFailedError } from './errors.ts';
export { DEFAULT_TOPIC, fromMessage } from './record.ts';
export type { ConsumedRecord, PartitionRecord, RecordFormat } from './record.ts';
export type { Logger } from './logger.ts';
export { DEFAULT_MAX_RECORD_SIZE_BYTES, DEFAULT_PRODUCER_MAX_IN_FLIGHT, kafkaConfigShape, kafkaBrokers } from './config.ts';
export type { KafkaConfig, ProducerCompression } from './config.ts';
export { describeKafkaSecurity, kafkaSecurity } from './kafka-security.ts';
export type { KafkaSecurity } from './kafka-security.ts';
