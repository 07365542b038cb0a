// The Kafka client choice measured on Strata's workload, in one run on one
// 3-broker KRaft cluster (RF 3, min.insync.replicas 2, acks=all):
// @platformatic/kafka (pure JS, the client in use since issue 15), kafkajs (the
// one it replaced) and @confluentinc/kafka-javascript (librdkafka, built from
// the source it ships: no prebuilt binary is reachable here). Each client runs
// in its own process (test/bench/kafka-clients/child.mjs), rounds interleaved:
// produce throughput per CPU-second and latency, fetch cost per record, and the
// longest send stall when the partition leader is SIGKILLed. kafkajs and
// confluent are installed into .cache/kafka-clients/ on first use (the install
// time is printed): they are not Strata dependencies.
//
//   npm run bench:kafka-clients [-- --records 20000 --size 8192 --concurrency 16 --rounds 2]

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureTopic, startKafka, type LocalKafka } from '@strata/local-kafka';
import { Admin } from '@platformatic/kafka';
import { loadAverage, machineDescription } from '../proc-stats.ts';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '20000' },
    size: { type: 'string', default: '8192' },
    concurrency: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '2' },
    clients: { type: 'string', default: 'platformatic,kafkajs,confluent' },
  },
});
const RECORDS = Number(values.records);
const SIZE = Number(values.size);
const CONCURRENCY = Number(values.concurrency);
const ROUNDS = Number(values.rounds);
const CLIENTS = values.clients.split(',') as ClientName[];
type ClientName = 'kafkajs' | 'confluent' | 'platformatic';

const root = join(import.meta.dirname, '..', '..', '..');
const cacheDir = join(root, '.cache', 'kafka-clients');
const log = (l: string) => console.error(l);

interface Installed {
  node: string;
  modulesDir: string;
  version: string;
  installSeconds?: number;
  note?: string;
}

const PACKAGES: Record<Exclude<ClientName, 'platformatic'>, { pkg: string; version: string; extra?: string[]; env?: Record<string, string>; note: string }> = {
  confluent: {
    pkg: '@confluentinc/kafka-javascript',
    version: '1.10.1',
    // Its configure downloads zlib/OpenSSL/zstd/curl sources unless linked against the system's
    // (Debian: libssl-dev zlib1g-dev libzstd-dev libsasl2-dev liblz4-dev).
    env: { CKJS_LINKING: 'dynamic' },
    note: 'librdkafka 2.15 built from source, linked against Debian libssl/zlib/zstd/sasl',
  },
  kafkajs: { pkg: 'kafkajs', version: '2.2.4', note: 'pure JS, no release since 2023; Strata used it until issue 15' },
};

function install(name: ClientName): Installed {
  if (name === 'platformatic') {
    // Its `exports` hides package.json from require(): read the installed file.
    const version = (JSON.parse(readFileSync(join(root, 'node_modules', '@platformatic', 'kafka', 'package.json'), 'utf8')) as { version: string }).version;
    return { node: process.execPath, modulesDir: root, version };
  }
  const p = PACKAGES[name];
  const dir = join(cacheDir, name);
  const marker = join(dir, 'node_modules', ...p.pkg.split('/'), 'package.json');
  let installSeconds: number | undefined;
  if (!existsSync(marker)) {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: `bench-${name}`, private: true }));
    log(`installing ${p.pkg}@${p.version} into ${dir} (${p.note})`);
    const t0 = Date.now();
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', `${p.pkg}@${p.version}`, ...(p.extra ?? [])], {
      cwd: dir,
      stdio: 'inherit',
      env: { ...process.env, ...p.env },
    });
    installSeconds = (Date.now() - t0) / 1000;
    if (r.status !== 0) throw new Error(`npm install ${p.pkg} failed (exit ${r.status}) after ${installSeconds.toFixed(0)} s`);
  }
  return { node: process.execPath, modulesDir: dir, version: p.version, installSeconds, note: p.note };
}

interface ChildResult {
  [k: string]: unknown;
}

function runChild(inst: Installed, client: ClientName, mode: string, opts: object, onReady?: () => void): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(inst.node, [join(import.meta.dirname, 'child.mjs'), client, mode, JSON.stringify({ ...opts, modulesDir: inst.modulesDir })], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (onReady && out.includes('ready\n')) {
        const f = onReady;
        onReady = undefined;
        f();
      }
    });
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.on('exit', (code) => {
      const line = out.trim().split('\n').at(-1) ?? '';
      if (code === 0 && line.startsWith('{')) resolve(JSON.parse(line) as ChildResult);
      else reject(new Error(`${client} ${mode} exited ${code}: ${err || out.slice(-500)}`));
    });
  });
}

/** The node id leading partition 0, asked of every broker but the one at index `avoid`. */
async function leaderOf(kafka: LocalKafka, topic: string, avoid?: number): Promise<number> {
  const brokers = kafka.brokers.filter((_, i) => i !== avoid);
  const admin = new Admin({ clientId: 'bench-admin', bootstrapBrokers: brokers, requestTimeout: 1000, connectTimeout: 500, retries: 0 });
  try {
    const md = await admin.metadata({ topics: [topic], forceUpdate: true });
    return md.topics.get(topic)!.partitions[0].leader;
  } finally {
    await admin.close();
  }
}

/** Node ids are index + 1 in broker order (libs/local-kafka's layout). */
async function failover(
  kafka: LocalKafka,
  inst: Installed,
  client: ClientName,
  topic: string,
): Promise<{ electionMs: number; longestMs: number; errors: string[]; sends: number }> {
  let electionMs = NaN;
  let killedAt = 0;
  let killed = -1;
  let killer: Promise<void> = Promise.resolve();
  const result = await runChild(inst, client, 'failover', { brokers: kafka.brokers, topic, size: SIZE, durationMs: 20_000, intervalMs: 20 }, () => {
    killer = (async () => {
      await new Promise((r) => setTimeout(r, 5_000));
      const leader = await leaderOf(kafka, topic);
      killedAt = Date.now();
      killed = leader - 1;
      await kafka.stopBroker(killed, 'SIGKILL');
      for (;;) {
        const now = await leaderOf(kafka, topic, killed).catch(() => -1);
        if (now >= 0 && now !== leader) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      electionMs = Date.now() - killedAt;
      log(`${client}: leader ${leader} killed, new leader elected after ${electionMs} ms`);
    })();
  });
  await killer;
  const sends = result.sends as { at: number; ms: number; error?: string }[];
  if (killed >= 0) await kafka.startBroker(killed);
  return {
    electionMs,
    longestMs: Math.max(...sends.map((s) => s.ms)),
    errors: [...new Set(sends.filter((s) => s.error).map((s) => s.error!))],
    sends: sends.length,
  };
}

async function main(): Promise<void> {
  log(`kafka clients bench: ${RECORDS} records of ${SIZE} B, ${CONCURRENCY} sends in flight, acks=all, RF 3, min ISR 2; ${machineDescription()}`);
  const installed = new Map<ClientName, Installed>();
  for (const c of CLIENTS) installed.set(c, install(c));
  const dir = mkdtempSync(join(tmpdir(), 'strata-kafka-clients-'));
  const kafka = await startKafka({ dataDir: join(dir, 'kafka'), brokers: 3, log });
  const rows = new Map<ClientName, { produce: ChildResult[]; consume: ChildResult[]; load: string[] }>();
  try {
    let n = 0;
    for (let r = 0; r < ROUNDS; r++) {
      for (const c of CLIENTS) {
        const topic = `bench-${c}-${n++}`;
        await ensureTopic({ brokers: kafka.brokers, topic, partitions: 1, replicationFactor: 3, minInsyncReplicas: 2 });
        const inst = installed.get(c)!;
        const produce = await runChild(inst, c, 'produce', { brokers: kafka.brokers, topic, records: RECORDS, size: SIZE, concurrency: CONCURRENCY });
        const consume = await runChild(inst, c, 'consume', { brokers: kafka.brokers, topic, records: RECORDS + 20 });
        const row = rows.get(c) ?? { produce: [], consume: [], load: [] };
        row.produce.push(produce);
        row.consume.push(consume);
        row.load.push(loadAverage());
        rows.set(c, row);
        log(`${c} round ${r + 1}: ${JSON.stringify(produce)} ${JSON.stringify(consume)}`);
      }
    }
    const fo = new Map<ClientName, Awaited<ReturnType<typeof failover>>>();
    for (const c of CLIENTS) {
      const topic = `bench-${c}-failover`;
      await ensureTopic({ brokers: kafka.brokers, topic, partitions: 1, replicationFactor: 3, minInsyncReplicas: 2 });
      fo.set(c, await failover(kafka, installed.get(c)!, c, topic));
    }

    const fmt = (xs: number[], d = 0) => xs.map((x) => x.toFixed(d)).join(' / ');
    const num = (rs: ChildResult[], k: string) => rs.map((x) => Number(x[k]));
    console.log(
      `\nKafka clients on Strata's write pattern: ${RECORDS} × ${SIZE} B records, ${CONCURRENCY} in flight, acks=all, 3 brokers RF 3 min ISR 2; per round (${ROUNDS})\n`,
    );
    console.log(
      '| client | version (Node) | install | produce records/s | produce records per CPU-s | p50 / p99 ms | consume records per CPU-s | leader SIGKILL: election / longest send | errors seen during failover |',
    );
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const c of CLIENTS) {
      const row = rows.get(c)!;
      const inst = installed.get(c)!;
      const f = fo.get(c)!;
      console.log(
        `| ${c} | ${inst.version} (${String(row.produce[0].node)}) | ${inst.installSeconds === undefined ? 'cached' : `${inst.installSeconds.toFixed(0)} s`} | ${fmt(num(row.produce, 'recordsPerSecond'))} | ${fmt(num(row.produce, 'recordsPerCpuSecond'))} | ${row.produce.map((p) => `${Number(p.p50ms).toFixed(1)} / ${Number(p.p99ms).toFixed(1)}`).join(', ')} | ${fmt(num(row.consume, 'recordsPerCpuSecond'))} | ${f.electionMs} / ${f.longestMs} ms (${f.sends} sends) | ${f.errors.length === 0 ? 'none' : f.errors.join('; ').slice(0, 200)} |`,
      );
    }
    console.log(`\nload: ${CLIENTS.map((c) => `${c} ${rows.get(c)!.load.join(', ')}`).join('; ')}`);
  } finally {
    await kafka.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
