// Strata against a Kafka that authenticates and encrypts, as managed Kafkas do: a real broker
// with a SASL_SSL listener (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 over TLS with a test CA).
// - The single process writes and reads through it with SCRAM-SHA-512, the password coming from
//   ${ENV} in -config.file, and shows it on no page and in no log line.
// - A wrong password or an untrusted certificate keeps a distributor up and not ready, /ready and
//   one log line saying why; with the right settings the same broker takes its pushes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppProcess, freePorts } from '@strata/local-cluster';
import { ensureTopic, startKafka, type LocalKafka } from '@strata/local-kafka';
import { api, generateSeries, push, waitFor } from './support/client.ts';
import { startSingleProcess, type SingleProcess } from './support/single-process.ts';
import { makeTestCerts, type TestCerts } from './support/tls-certs.ts';

const PASSWORD = 'strata-kafka-secret-42';

describe('Kafka with SASL and TLS', () => {
  const dir = mkdtempSync(join(tmpdir(), 'strata-kafka-security-'));
  let certs: TestCerts;
  let kafka: LocalKafka;
  const started: AppProcess[] = [];

  before(async () => {
    mkdirSync(join(dir, 'certs'));
    certs = makeTestCerts(join(dir, 'certs'));
    kafka = await startKafka({
      dataDir: join(dir, 'kafka'),
      secure: { tls: { keystorePem: certs.serverKeystorePem }, sasl: { mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'], users: { strata: PASSWORD } } },
    });
    await ensureTopic({ brokers: kafka.brokers, topic: 'ingest', partitions: 1, replicationFactor: 1 });
  });

  after(async () => {
    for (const p of started) await p.kill('SIGKILL');
    await kafka?.stop();
    if (process.env.STRATA_KEEP_TEST_DATA === undefined) rmSync(dir, { recursive: true, force: true });
  });

  function secureFlags(mechanism: string, password: string, ca: string): string[] {
    return [
      `-ingest-storage.kafka.address=${kafka.secureBrokers.join(',')}`,
      `-ingest-storage.kafka.sasl-mechanism=${mechanism}`,
      '-ingest-storage.kafka.sasl-username=strata',
      `-ingest-storage.kafka.sasl-password=${password}`,
      '-ingest-storage.kafka.tls-enabled=true',
      `-ingest-storage.kafka.tls-ca-path=${ca}`,
    ];
  }

  async function startDistributor(name: string, args: string[]): Promise<AppProcess> {
    return startApp(name, 'distributor', args);
  }

  async function startApp(name: string, target: 'distributor' | 'ingester', args: string[]): Promise<AppProcess> {
    const [port, grpcPort] = await freePorts(2);
    const ingester = target === 'ingester' ? [`-server.grpc-listen-port=${grpcPort}`, `-blocks-storage.tsdb.dir=${join(dir, name, 'tsdb')}`] : [];
    const p = new AppProcess({
      name,
      target,
      httpPort: port,
      logFile: join(dir, `${name}.log`),
      args: [`-server.http-listen-port=${port}`, '-auth.multitenancy-enabled=false', ...ingester, ...args],
    });
    started.push(p);
    p.start();
    return p;
  }

  /** /ready's answer once it names a reason other than the first "connecting". */
  async function notReadyReason(p: AppProcess): Promise<string> {
    return waitFor(`${p.name} to say why it is not ready`, async () => {
      const res = await fetch(`${p.url}/ready`);
      const body = await res.text();
      return res.status === 503 && /cannot reach Kafka/.test(body) ? body : undefined;
    });
  }

  test('the single process writes and reads through SASL_SSL with SCRAM-SHA-512, the password from ${ENV} and shown nowhere', async () => {
    const configFile = join(dir, 'strata.yaml');
    writeFileSync(configFile, 'ingest_storage:\n  kafka:\n    sasl_password: ${STRATA_TEST_KAFKA_PASSWORD}\n');
    process.env.STRATA_TEST_KAFKA_PASSWORD = PASSWORD;
    let sp: SingleProcess | undefined;
    try {
      const flags = secureFlags('SCRAM-SHA-512', PASSWORD, certs.caPem).filter((f) => !f.includes('sasl-password'));
      sp = await startSingleProcess('kafka-sasl', [...flags, `-config.file=${configFile}`, '-config.expand-env=true']);
      const now = Date.now();
      const res = await push(sp.strata.url, generateSeries('kafka_sasl_test', 5, 1, now, 15_000));
      assert.equal(res.status, 200, res.body);
      const got = await waitFor('the pushed series to be queryable', async () => {
        const r = await api<{ result: unknown[] }>(sp!.strata.url, '/api/v1/query', { query: 'count({__name__=~".+"})', time: String(now / 1000) });
        return r.data?.result.length === 1 ? r.data.result : undefined;
      });
      assert.deepEqual((got[0] as { value: [number, string] }).value[1], '5');
      const pages = await Promise.all(
        ['/ui/api/status/config', '/ui/api/status/services', '/ui/api/status/kafka'].map(async (path) => (await fetch(`${sp!.strata.url}${path}`)).text()),
      );
      for (const page of pages) assert.doesNotMatch(page, new RegExp(PASSWORD), 'a page shows the SASL password');
      assert.doesNotMatch(readFileSync(join(sp.dir, 'strata.log'), 'utf8'), new RegExp(PASSWORD), 'the log shows the SASL password');
      assert.match(readFileSync(join(sp.dir, 'strata.log'), 'utf8'), /TLS, SASL SCRAM-SHA-512 as strata/);
    } finally {
      delete process.env.STRATA_TEST_KAFKA_PASSWORD;
      await sp?.stop();
    }
  });

  test('a wrong password: the distributor stays up, not ready, and says the authentication failed', async () => {
    const p = await startDistributor('wrong-password', secureFlags('SCRAM-SHA-256', 'not-the-password', certs.caPem));
    const reason = await notReadyReason(p);
    assert.match(reason, /SASL SCRAM-SHA-256 as strata/);
    assert.match(reason, /auth|credential|SASL/i);
    assert.ok(p.running, 'the distributor exited');
    const push503 = await push(p.url, generateSeries('kafka_sasl_test', 1, 1, Date.now(), 15_000));
    assert.equal(push503.status, 503, 'a push while Kafka refuses the credentials is retriable');
    const lines = readFileSync(join(dir, 'wrong-password.log'), 'utf8')
      .split('\n')
      .filter((l) => /cannot reach Kafka/.test(l));
    assert.equal(lines.length, 1, `one log line for the one reason, got:\n${lines.join('\n')}`);
  });

  test('an untrusted broker certificate: not ready, and the reason names the certificate', async () => {
    const p = await startDistributor('untrusted-ca', secureFlags('PLAIN', PASSWORD, certs.otherCaPem));
    const reason = await notReadyReason(p);
    assert.match(reason, /certificate/i);
    assert.ok(p.running, 'the distributor exited');
  });

  test('with the right settings the distributor is ready and its pushes are acknowledged', async () => {
    const p = await startDistributor('plain-ok', secureFlags('PLAIN', PASSWORD, certs.caPem));
    await p.waitReady(60_000);
    const res = await push(p.url, generateSeries('kafka_sasl_test', 3, 1, Date.now(), 15_000));
    assert.equal(res.status, 200, res.body);
  });

  test('a wrong password: an ingester stays up past its reader start timeout, not ready, one line per reason, retrying', async () => {
    const p = await startApp('ingester-zone-a-0', 'ingester', [
      ...secureFlags('SCRAM-SHA-512', 'not-the-password', certs.caPem),
      '-ingester.ring.instance-id=ingester-zone-a-0',
      `-blocks-storage.filesystem.dir=${join(dir, 'bucket')}`,
    ]);
    const reason = await notReadyReason(p);
    assert.match(reason, /SASL SCRAM-SHA-512 as strata|auth|credential|SASL/i);
    // The reader's start used to give up after 60 s and take the process with it.
    await new Promise((r) => setTimeout(r, 65_000));
    assert.ok(p.running, 'the ingester exited');
    const res = await fetch(`${p.url}/ready`);
    assert.equal(res.status, 503);
    assert.match(await res.text(), /cannot reach Kafka/);
    const log = readFileSync(join(dir, 'ingester-zone-a-0.log'), 'utf8').split('\n');
    const lines = log.filter((l) => /cannot reach Kafka/.test(l));
    assert.equal(lines.length, 1, `one log line for the one reason, got:\n${lines.join('\n')}`);
    assert.ok(log.filter((l) => /kafka partition reader started/.test(l)).length === 0, 'it never consumed');
  });
});
