// How every Kafka connection authenticates and encrypts (-ingest-storage.kafka.sasl-*, tls-*) and
// which rack it is in (client-rack), read once from the config into what @platformatic/kafka's
// clients take. A setting that cannot work (a mechanism without a user, a certificate without its
// key, a file that cannot be read) is refused at start with the flag's name.
import { readFileSync } from 'node:fs';
import type { ConnectionOptions as TlsOptions } from 'node:tls';
import type { BaseOptions } from '@platformatic/kafka';
import type { KafkaConfig } from './config.ts';

/** The connection settings every client of this lib (and ensureTopic) is built with. */
export type KafkaSecurity = Pick<BaseOptions, 'sasl' | 'tls' | 'tlsServerName' | 'clientRack'>;

type SecurityFlags = Pick<
  KafkaConfig,
  | 'ingest-storage.kafka.sasl-mechanism'
  | 'ingest-storage.kafka.sasl-username'
  | 'ingest-storage.kafka.sasl-password'
  | 'ingest-storage.kafka.tls-enabled'
  | 'ingest-storage.kafka.tls-ca-path'
  | 'ingest-storage.kafka.tls-cert-path'
  | 'ingest-storage.kafka.tls-key-path'
  | 'ingest-storage.kafka.tls-server-name'
  | 'ingest-storage.kafka.tls-insecure-skip-verify'
  | 'ingest-storage.kafka.client-rack'
>;

export function kafkaSecurity(config: SecurityFlags): KafkaSecurity {
  const out: KafkaSecurity = {};
  const sasl = saslOptions(config);
  if (sasl !== undefined) out.sasl = sasl;
  const tls = tlsOptions(config);
  if (tls !== undefined) {
    out.tls = tls;
    const serverName = config['ingest-storage.kafka.tls-server-name'];
    if (serverName !== '') out.tlsServerName = serverName;
  }
  const rack = config['ingest-storage.kafka.client-rack'];
  if (rack !== '') out.clientRack = rack;
  return out;
}

/** One line for the startup log and status pages: how this process reaches Kafka (never the password). */
export function describeKafkaSecurity(s: KafkaSecurity): string {
  const parts = [s.tls === undefined ? 'plaintext' : s.tls.rejectUnauthorized === false ? 'TLS (certificates not verified)' : 'TLS'];
  if (s.sasl !== undefined) parts.push(`SASL ${s.sasl.mechanism} as ${typeof s.sasl.username === 'string' ? s.sasl.username : '(provided)'}`);
  if (s.clientRack !== undefined) parts.push(`rack ${s.clientRack}`);
  return parts.join(', ');
}

function saslOptions(config: SecurityFlags): KafkaSecurity['sasl'] {
  const mechanism = config['ingest-storage.kafka.sasl-mechanism'];
  const username = config['ingest-storage.kafka.sasl-username'];
  const password = config['ingest-storage.kafka.sasl-password'];
  if (mechanism === '') {
    if (username !== '' || password !== '')
      throw new Error('-ingest-storage.kafka.sasl-username/-password are set but -ingest-storage.kafka.sasl-mechanism is not');
    return undefined;
  }
  if (username === '' || password === '') {
    throw new Error(`-ingest-storage.kafka.sasl-mechanism=${mechanism} needs -ingest-storage.kafka.sasl-username and -ingest-storage.kafka.sasl-password`);
  }
  return { mechanism, username, password };
}

function tlsOptions(config: SecurityFlags): TlsOptions | undefined {
  if (!config['ingest-storage.kafka.tls-enabled']) {
    const set = (['tls-ca-path', 'tls-cert-path', 'tls-key-path'] as const).filter((f) => config[`ingest-storage.kafka.${f}`] !== '');
    if (set.length > 0) throw new Error(`-ingest-storage.kafka.${set[0]} is set but -ingest-storage.kafka.tls-enabled is not`);
    return undefined;
  }
  const cert = config['ingest-storage.kafka.tls-cert-path'];
  const key = config['ingest-storage.kafka.tls-key-path'];
  if ((cert === '') !== (key === '')) throw new Error('-ingest-storage.kafka.tls-cert-path and -ingest-storage.kafka.tls-key-path go together');
  const ca = config['ingest-storage.kafka.tls-ca-path'];
  const tls: TlsOptions = { rejectUnauthorized: !config['ingest-storage.kafka.tls-insecure-skip-verify'] };
  if (ca !== '') tls.ca = readPem('tls-ca-path', ca);
  if (cert !== '') {
    tls.cert = readPem('tls-cert-path', cert);
    tls.key = readPem('tls-key-path', key);
  }
  return tls;
}

function readPem(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`-ingest-storage.kafka.${flag}: cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}
