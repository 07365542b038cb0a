import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { kafkaConfigShape } from './config.ts';
import { describeKafkaSecurity, kafkaSecurity } from './kafka-security.ts';

const parse = (flags: Record<string, string>) => z.object(kafkaConfigShape).parse(flags);

test('no security flags: plaintext, nothing passed to the clients', () => {
  assert.deepEqual(kafkaSecurity(parse({})), {});
  assert.equal(describeKafkaSecurity({}), 'plaintext');
});

test('SASL, TLS with a CA and a client certificate, and the rack reach the client options', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-kafka-security-'));
  for (const f of ['ca.pem', 'cert.pem', 'key.pem']) writeFileSync(join(dir, f), `-----BEGIN ${f}-----\n`);
  const s = kafkaSecurity(
    parse({
      'ingest-storage.kafka.sasl-mechanism': 'SCRAM-SHA-512',
      'ingest-storage.kafka.sasl-username': 'alice',
      'ingest-storage.kafka.sasl-password': 'secret',
      'ingest-storage.kafka.tls-enabled': 'true',
      'ingest-storage.kafka.tls-ca-path': join(dir, 'ca.pem'),
      'ingest-storage.kafka.tls-cert-path': join(dir, 'cert.pem'),
      'ingest-storage.kafka.tls-key-path': join(dir, 'key.pem'),
      'ingest-storage.kafka.tls-server-name': 'kafka.example',
      'ingest-storage.kafka.client-rack': 'zone-a',
    }),
  );
  assert.deepEqual(s.sasl, { mechanism: 'SCRAM-SHA-512', username: 'alice', password: 'secret' });
  assert.equal(s.tls?.ca, '-----BEGIN ca.pem-----\n');
  assert.equal(s.tls?.key, '-----BEGIN key.pem-----\n');
  assert.equal(s.tls?.rejectUnauthorized, true);
  assert.equal(s.tlsServerName, 'kafka.example');
  assert.equal(s.clientRack, 'zone-a');
  assert.equal(describeKafkaSecurity(s), 'TLS, SASL SCRAM-SHA-512 as alice, rack zone-a');
  assert.doesNotMatch(describeKafkaSecurity(s), /secret/);
});

test('settings that cannot work are refused at start, naming the flag', () => {
  const refused: [Record<string, string>, RegExp][] = [
    [{ 'ingest-storage.kafka.sasl-mechanism': 'PLAIN' }, /needs -ingest-storage.kafka.sasl-username/],
    [{ 'ingest-storage.kafka.sasl-username': 'alice', 'ingest-storage.kafka.sasl-password': 'x' }, /sasl-mechanism is not/],
    [{ 'ingest-storage.kafka.tls-ca-path': '/x.pem' }, /tls-ca-path is set but -ingest-storage.kafka.tls-enabled is not/],
    [{ 'ingest-storage.kafka.tls-enabled': 'true', 'ingest-storage.kafka.tls-cert-path': '/c.pem' }, /go together/],
    [
      { 'ingest-storage.kafka.tls-enabled': 'true', 'ingest-storage.kafka.tls-ca-path': '/nonexistent/ca.pem' },
      /tls-ca-path: cannot read \/nonexistent\/ca.pem/,
    ],
  ];
  for (const [flags, why] of refused) assert.throws(() => kafkaSecurity(parse(flags)), why, JSON.stringify(flags));
  assert.throws(() => parse({ 'ingest-storage.kafka.sasl-mechanism': 'GSSAPI' }));
});
