// Public surface of @strata/local-kafka: a real Apache Kafka (KRaft) on loopback.
export { KAFKA_VERSION, kafkaLibsDir } from './kafka-version.ts';
export { fetchKafka } from './fetch-kafka.ts';
export type { FetchKafkaOptions } from './fetch-kafka.ts';
export { startKafka } from './start-kafka.ts';
export type { LocalKafka, StartKafkaOptions } from './start-kafka.ts';
export type { SaslMechanism, SecureListener } from './kraft-config.ts';
export { ensureTopic } from './ensure-topic.ts';
export type { EnsureTopicOptions, EnsureTopicResult } from './ensure-topic.ts';
export type { ConnectionSecurity } from './probe-client.ts';
// The broker's JVM flags and class path, for callers that start Kafka their own way (test/support/pod-runner).
export { classDataArgs, classpath, jvmArgs } from './jvm-args.ts';
