// Renders every overlay under k8s/overlays with `kubectl kustomize` and checks the objects against
// the code they deploy: every container's -target and flags parse as the one binary parses them
// (apps/strata/src/config.ts), ports and probe paths are the apps', the two ingester zones are
// symmetric and cover exactly the topic's partitions, one PDB per zone, pinned images, resources.
// Needs kubectl only (no cluster): `kubectl annotate --local -o json` turns the YAML into JSON.
// Also keeps the Prometheus config that docs/operations.md calls tested valid (promtool).

import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Registry } from 'prom-client';
import { createHttpServer, createLogger, heapSizeMiB, parseByteSize, parseFlags, resolveModules } from '@strata/service';
import { parseInstanceId } from '@strata/ingester';
import { parseIngesterAddresses } from '@strata/querier';
import { KAFKA_VERSION } from '@strata/local-kafka';
import { MemoryKv, PartitionInstanceLifecycler, registerIngesterRingRoutes } from '@strata/ring';
import { runtimeConfigSchema } from '@strata/limits';
import { parse as parseYaml } from 'yaml';
import { dirname as posixDirname, basename as posixBasename } from 'node:path/posix';
import { parseConfig, strataConfigShape } from '../apps/strata/src/config.ts';
import { MODULES } from '../apps/strata/src/modules.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OVERLAYS_DIR = join(ROOT, 'k8s', 'overlays');
const KUBECTL = process.env.KUBECTL ?? 'kubectl';
const STRATA_IMAGE = 'strata';
const KAFKA_IMAGE = 'apache/kafka';
const ZONE_LABEL = 'topology.kubernetes.io/zone';

// ---------------------------------------------------------------- rendering

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  // Plain data: each check narrows what it reads.
  spec?: any;
}

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; secretKeyRef?: { name: string; key: string }; resourceFieldRef?: { resource: string } };
}

interface Probe {
  httpGet?: { path: string; port: string | number };
  tcpSocket?: { port: string | number };
}

interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: { secretRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: Probe;
  securityContext?: { readOnlyRootFilesystem?: boolean };
  livenessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
  lifecycle?: { preStop?: { exec?: { command: string[] }; httpGet?: { path: string; port: string | number } } };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[];
}

interface PodTemplate {
  metadata: { labels: Record<string, string> };
  spec: {
    containers: Container[];
    initContainers?: Container[];
    affinity?: Affinity;
    volumes?: { name: string; configMap?: { name: string }; emptyDir?: object; persistentVolumeClaim?: { claimName: string } }[];
    terminationGracePeriodSeconds?: number;
    securityContext?: { runAsUser?: number; fsGroup?: number };
    enableServiceLinks?: boolean;
  };
}

interface AffinityTerm {
  topologyKey: string;
  labelSelector: { matchLabels: Record<string, string> };
}

interface Affinity {
  podAntiAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: AffinityTerm[];
    preferredDuringSchedulingIgnoredDuringExecution?: { podAffinityTerm: AffinityTerm }[];
  };
  podAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: AffinityTerm[];
    preferredDuringSchedulingIgnoredDuringExecution?: { podAffinityTerm: AffinityTerm }[];
  };
}

function run(args: string[], input?: string): string {
  const r = spawnSync(KUBECTL, args, { cwd: ROOT, input, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.error) {
    throw new Error(`cannot run ${KUBECTL} (${r.error.message}); install kubectl (Debian: kubernetes-client, as .ci/run does)`);
  }
  if (r.status !== 0) throw new Error(`${KUBECTL} ${args.join(' ')} failed (exit ${r.status}):\n${r.stderr}`);
  return r.stdout;
}

/** `kubectl annotate --local -o json` prints one pretty-printed object after another. */
function splitJsonStream(text: string): unknown[] {
  const out: unknown[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{') {
      if (depth++ === 0) start = i;
    } else if (c === '}' && --depth === 0) out.push(JSON.parse(text.slice(start, i + 1)));
  }
  assert.equal(depth, 0, 'kubectl printed truncated JSON');
  return out;
}

function render(overlay: string): K8sObject[] {
  const yaml = run(['kustomize', join('k8s', 'overlays', overlay)]);
  // Removing an annotation nobody sets is a no-op that makes kubectl print the objects as JSON
  // without a cluster (`create --dry-run=client` wants the API server's discovery).
  const json = run(['annotate', '--local', '-f', '-', 'strata-manifest-test-', '-o', 'json'], yaml);
  return splitJsonStream(json) as K8sObject[];
}

// ---------------------------------------------------------------- the binary's own config

const STRATA_ENV = new Set(['STRATA_LOG_LEVEL', ...Object.keys(strataConfigShape).map((k) => 'STRATA_' + k.replace(/[.-]/g, '_').toUpperCase())]);

/** Kubernetes' $(VAR) expansion of args from the container's env ($$ escapes). */
function expand(arg: string, env: Record<string, string>): string {
  return arg.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (all, name: string | undefined) => (name === undefined ? '$' : (env[name] ?? all)));
}

/** Every rendered Secret's decoded data, by name (kustomize's generated names are content hashes). */
const secrets = new Map<string, Record<string, string>>();

function secretData(name: string): Record<string, string> {
  const data = secrets.get(name);
  assert.ok(data, `no Secret ${name} rendered`);
  return data;
}

/** The container's env as the kubelet would set it (envFrom Secrets, then env); metadata.name becomes `podName`. */
function containerEnv(c: Container, podName: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const f of c.envFrom ?? []) if (f.secretRef) Object.assign(env, secretData(f.secretRef.name));
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    else if (e.valueFrom?.fieldRef?.fieldPath === 'metadata.name') env[e.name] = podName;
    else if (e.valueFrom?.secretKeyRef) env[e.name] = secretData(e.valueFrom.secretKeyRef.name)[e.valueFrom.secretKeyRef.key];
    // The kubelet gives a quantity in bytes (divisor 1).
    else if (e.valueFrom?.resourceFieldRef?.resource === 'limits.memory') env[e.name] = String(parseByteSize(c.resources!.limits!.memory));
  }
  return env;
}

/** Parses a Strata container's args exactly as the binary does: unknown flag, bad value or unknown -target throws. */
function strataConfig(c: Container, podName: string): { app: string; config: Record<string, unknown> } {
  const env = containerEnv(c, podName);
  const args = (c.args ?? []).map((a) => expand(a, env));
  for (const a of args) assert.doesNotMatch(a, /\$\(/, `container ${c.name}: ${a} refers to a variable the container does not set`);
  assert.ok(
    args.some((a) => a.startsWith('-target=')),
    `container ${c.name}: name the module with -target= (the image runs the one binary)`,
  );
  try {
    const { config, targets } = parseConfig(parseFlags(args, env));
    resolveModules(MODULES, targets);
    assert.equal(targets.length, 1, `container ${c.name}: one module per workload`);
    return { app: targets[0], config };
  } catch (err) {
    throw new Error(`container ${c.name}: ${(err as Error).message}`);
  }
}

// ---------------------------------------------------------------- helpers over rendered objects

const WORKLOADS = new Set(['Deployment', 'StatefulSet', 'DaemonSet', 'Job']);

function workloads(objs: K8sObject[]): K8sObject[] {
  return objs.filter((o) => WORKLOADS.has(o.kind));
}

function template(o: K8sObject): PodTemplate {
  return o.spec.template as PodTemplate;
}

function allContainers(t: PodTemplate): Container[] {
  return [...(t.spec.initContainers ?? []), ...t.spec.containers];
}

function find(objs: K8sObject[], kind: string, name: string): K8sObject {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o, `no ${kind} named ${name}; have ${objs.map((x) => `${x.kind}/${x.metadata.name}`).join(', ')}`);
  return o;
}

function envOf(c: Container, name: string): string {
  const v = c.env?.find((e) => e.name === name)?.value;
  assert.ok(v !== undefined, `container ${c.name}: no env ${name}`);
  return v;
}

function matches(selector: Record<string, string>, labels: Record<string, string>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

function imageTag(image: string): string | undefined {
  const last = image.slice(image.lastIndexOf('/') + 1);
  return last.includes(':') ? last.slice(last.indexOf(':') + 1) : undefined;
}

function imageName(image: string): string {
  const slash = image.lastIndexOf('/');
  const colon = image.indexOf(':', slash + 1);
  return colon < 0 ? image : image.slice(0, colon);
}

function containerPort(c: Container, port: string | number): number | undefined {
  if (typeof port === 'number') return c.ports?.some((p) => p.containerPort === port) ? port : undefined;
  return c.ports?.find((p) => p.name === port)?.containerPort;
}

function strataContainers(objs: K8sObject[]): { owner: K8sObject; container: Container }[] {
  return workloads(objs).flatMap((o) =>
    template(o)
      .spec.containers.filter((c) => imageName(c.image) === STRATA_IMAGE)
      .map((container) => ({ owner: o, container })),
  );
}

/** The pod name a workload's first pod gets (a StatefulSet's pods are <name>-<ordinal>). */
function firstPodName(o: K8sObject): string {
  return o.kind === 'StatefulSet' ? `${o.metadata.name}-0` : `${o.metadata.name}-abcde`;
}

function topicJob(objs: K8sObject[]): Container {
  return template(find(objs, 'Job', 'kafka-create-topic')).spec.containers[0];
}

function kafkaBrokers(objs: K8sObject[]): { replicas: number; container: Container; serviceName: string } {
  const ss = find(objs, 'StatefulSet', 'kafka');
  return { replicas: ss.spec.replicas as number, container: template(ss).spec.containers[0], serviceName: ss.spec.serviceName as string };
}

// ---------------------------------------------------------------- the tests

const overlays = existsSync(OVERLAYS_DIR) ? readdirSync(OVERLAYS_DIR).sort() : [];
const rendered = new Map<string, K8sObject[]>();
const servedPaths = new Map<string, number>();

describe('k8s manifests', () => {
  before(async () => {
    // Probe paths are checked against the HTTP server every app builds (libs/service).
    const http = createHttpServer({
      logger: createLogger('k8s-manifests-test', 'silent'),
      registry: new Registry(),
      readiness: { notReadyReason: () => undefined },
    });
    for (const overlay of overlays) rendered.set(overlay, render(overlay));
    for (const objs of rendered.values()) {
      for (const o of objs) {
        if (o.kind !== 'Secret') continue;
        const data = (o as K8sObject & { data?: Record<string, string> }).data ?? {};
        secrets.set(o.metadata.name, Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')])));
      }
    }
    for (const objs of rendered.values()) {
      for (const w of workloads(objs)) {
        for (const c of template(w).spec.containers) {
          for (const p of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
            if (p?.httpGet && imageName(c.image) === STRATA_IMAGE && !servedPaths.has(p.httpGet.path)) {
              servedPaths.set(p.httpGet.path, (await http.inject({ method: 'GET', url: p.httpGet.path })).statusCode);
            }
          }
        }
      }
    }
    await http.close();
  });

  test('the overlays single and production exist and render', () => {
    assert.deepEqual(
      ['production', 'single'].filter((o) => !overlays.includes(o)),
      [],
      `k8s/overlays has ${overlays.join(', ')}`,
    );
    for (const [overlay, objs] of rendered) assert.ok(objs.length > 0, `${overlay} renders no objects`);
  });

  for (const overlay of overlays) {
    describe(`overlay ${overlay}`, () => {
      const objs = (): K8sObject[] => rendered.get(overlay)!;

      test('images are pinned: a tag on every image, never latest; Kafka matches the tested version', () => {
        const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
        for (const w of workloads(objs())) {
          for (const c of allContainers(template(w))) {
            const tag = imageTag(c.image);
            assert.ok(tag && tag !== 'latest', `${w.metadata.name}/${c.name}: image ${c.image} must carry a pinned tag`);
            if (imageName(c.image) === KAFKA_IMAGE) assert.equal(tag, KAFKA_VERSION, `${w.metadata.name}/${c.name}: Kafka version`);
            if (imageName(c.image) === STRATA_IMAGE) assert.equal(tag, version, `${w.metadata.name}/${c.name}: strata image tag = package.json version`);
          }
        }
      });

      test('every container and init container sets cpu and memory requests and a memory limit', () => {
        for (const w of workloads(objs())) {
          for (const c of allContainers(template(w))) {
            const where = `${w.kind}/${w.metadata.name} container ${c.name}`;
            assert.ok(c.resources?.requests?.cpu, `${where}: resources.requests.cpu`);
            assert.ok(c.resources?.requests?.memory, `${where}: resources.requests.memory`);
            assert.ok(c.resources?.limits?.memory, `${where}: resources.limits.memory`);
          }
        }
      });

      test("every Strata container's memory budget is its memory limit: the V8 heap and the instance limits are sized from it", () => {
        const found = strataContainers(objs());
        assert.ok(found.length > 0, 'no Strata container');
        for (const { owner: w, container: c } of found) {
          const where = `${w.kind}/${w.metadata.name} container ${c.name}`;
          const env = containerEnv(c, `${w.metadata.name}-0`);
          assert.equal(
            env.NODE_OPTIONS?.includes('max-old-space-size'),
            undefined,
            `${where}: the heap comes from the budget, not a fixed --max-old-space-size`,
          );
          const { budget } = parseConfig(
            parseFlags(
              (c.args ?? []).map((a) => expand(a, env)),
              env,
            ),
          );
          assert.deepEqual(
            budget,
            { bytes: parseByteSize(c.resources!.limits!.memory), source: 'flag' },
            `${where}: STRATA_SERVER_MEMORY_LIMIT from limits.memory`,
          );
          assert.equal(heapSizeMiB(budget), Math.floor((budget.bytes * 0.75) / 2 ** 20), `${where}: heap`);
        }
      });

      test('every Strata container flag exists in its app and parses; it listens on 0.0.0.0', () => {
        const found = strataContainers(objs());
        assert.ok(found.length > 0, 'no Strata container');
        for (const { owner, container } of found) {
          const { app, config } = strataConfig(container, firstPodName(owner));
          assert.equal(config['server.http-listen-address'], '0.0.0.0', `${app}: HTTP must listen beyond loopback in a pod`);
          if (app === 'ingester') assert.equal(config['server.grpc-listen-address'], '0.0.0.0', 'ingester gRPC address');
          for (const e of container.env ?? []) {
            if (e.name.startsWith('STRATA_')) assert.ok(STRATA_ENV.has(e.name), `${owner.metadata.name}: env ${e.name} is no flag of Strata`);
          }
        }
      });

      test('container ports and probe ports and paths are the ones the apps serve', () => {
        for (const { owner, container } of strataContainers(objs())) {
          const { app, config } = strataConfig(container, firstPodName(owner));
          const where = `${owner.metadata.name}/${container.name}`;
          assert.equal(containerPort(container, 'http'), config['server.http-listen-port'], `${where}: port "http" = -server.http-listen-port`);
          if (app === 'ingester') {
            assert.equal(containerPort(container, 'grpc'), config['server.grpc-listen-port'], `${where}: port "grpc" = -server.grpc-listen-port`);
          }
          assert.equal(container.readinessProbe?.httpGet?.path, '/ready', `${where}: readiness on /ready`);
          for (const p of [container.readinessProbe, container.livenessProbe, container.startupProbe]) {
            if (!p?.httpGet) continue;
            assert.equal(containerPort(container, p.httpGet.port), config['server.http-listen-port'], `${where}: probe port`);
            const status = servedPaths.get(p.httpGet.path);
            assert.ok(status !== undefined && status !== 404, `${where}: probe path ${p.httpGet.path} is not served (status ${status})`);
          }
        }
        for (const w of workloads(objs())) {
          for (const c of allContainers(template(w))) {
            for (const p of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
              const port = p?.httpGet?.port ?? p?.tcpSocket?.port;
              if (port !== undefined) assert.ok(containerPort(c, port) !== undefined, `${w.metadata.name}/${c.name}: probe port ${port} is no container port`);
            }
          }
        }
      });

      test('every Service selects pods and targets ports they expose', () => {
        for (const svc of objs().filter((o) => o.kind === 'Service')) {
          const pods = workloads(objs()).filter((w) => matches(svc.spec.selector, template(w).metadata.labels));
          assert.ok(pods.length > 0, `Service ${svc.metadata.name} selects no pods`);
          for (const port of svc.spec.ports as { port: number; targetPort?: string | number }[]) {
            for (const w of pods) {
              const ok = template(w).spec.containers.some((c) => containerPort(c, port.targetPort ?? port.port) !== undefined);
              assert.ok(ok, `Service ${svc.metadata.name} port ${port.port}: ${w.metadata.name} exposes no ${port.targetPort}`);
            }
          }
        }
      });

      test('Kafka addresses, topic and record size agree between the apps, the topic job and the brokers', () => {
        const job = topicJob(objs());
        const topic = envOf(job, 'TOPIC');
        const kafka = kafkaBrokers(objs());
        const brokerMax = Number(envOf(kafka.container, 'KAFKA_MESSAGE_MAX_BYTES'));
        assert.ok(Number(envOf(job, 'MAX_MESSAGE_BYTES')) <= brokerMax, "the topic's max.message.bytes fits the broker's");
        const services = new Map(
          objs()
            .filter((o) => o.kind === 'Service')
            .map((s) => [s.metadata.name, s]),
        );
        const checkAddress = (where: string, list: string) => {
          for (const address of list.split(',')) {
            const [host, port] = address.trim().split(':');
            const svc = services.get(host.split('.').pop()!) ?? services.get(host);
            assert.ok(svc, `${where}: ${address} names no Service`);
            assert.ok(
              (svc.spec.ports as { port: number }[]).some((p) => p.port === Number(port)),
              `${where}: Service ${host} has no port ${port}`,
            );
            assert.ok(matches(svc.spec.selector, template(find(objs(), 'StatefulSet', 'kafka')).metadata.labels), `${where}: ${host} is not Kafka`);
          }
        };
        checkAddress('kafka-create-topic', envOf(job, 'KAFKA_BOOTSTRAP'));
        for (const { owner, container } of strataContainers(objs())) {
          const { app, config } = strataConfig(container, firstPodName(owner));
          if (app === 'compactor') continue; // the only module without Kafka
          const where = `${owner.metadata.name} (${app})`;
          checkAddress(where, config['ingest-storage.kafka.address'] as string);
          assert.equal(config['ingest-storage.kafka.topic'], topic, `${where}: topic`);
          if (app === 'distributor' || app === 'all') {
            // A record holds at most one request's series; leave room for its framing.
            const max = config['distributor.max-recv-msg-size'] as number;
            assert.ok(max + (64 << 10) <= brokerMax, `${where}: -distributor.max-recv-msg-size ${max} must stay below message.max.bytes ${brokerMax}`);
          }
          for (const init of template(owner).spec.initContainers ?? []) {
            if (init.name !== 'wait-for-topic') continue;
            assert.equal(envOf(init, 'TOPIC'), topic, `${where}: wait-for-topic waits for the app's topic`);
            assert.equal(envOf(init, 'KAFKA_BOOTSTRAP'), config['ingest-storage.kafka.address'], `${where}: wait-for-topic asks the app's brokers`);
          }
        }
      });

      test('every Kafka address and Redis endpoint in a flag names a Service port backed by a pod', () => {
        const services = new Map(
          objs()
            .filter((o) => o.kind === 'Service')
            .map((s) => [s.metadata.name, s]),
        );
        let checked = 0;
        for (const { owner, container } of strataContainers(objs())) {
          const { app, config } = strataConfig(container, firstPodName(owner));
          for (const [flag, value] of Object.entries(config)) {
            // The compactor reads the bucket only; its Kafka and Redis flags keep their unused defaults.
            if (app === 'compactor') continue;
            // The bucket is outside the overlay (bucket.env): AWS S3 or a server the operator runs.
            if (flag === 'blocks-storage.s3.endpoint') continue;
            if (!/(kafka\.address|\.endpoint)$/.test(flag) || typeof value !== 'string' || value === '') continue;
            for (const address of value.split(',')) {
              const where = `${owner.metadata.name} (${app}) -${flag}=${address}`;
              const [host, port] = address.trim().split(':');
              // A Service name, or <pod>.<headless service>.
              const svc = services.get(host) ?? services.get(host.split('.')[1] ?? '');
              assert.ok(svc, `${where}: names no Service`);
              const sp = (svc.spec.ports as { port: number; targetPort?: string | number }[]).find((p) => p.port === Number(port));
              assert.ok(sp, `${where}: Service ${svc.metadata.name} has no port ${port}`);
              const backing = workloads(objs()).filter((w) => matches(svc.spec.selector, template(w).metadata.labels));
              assert.ok(
                backing.some((w) => template(w).spec.containers.some((c) => containerPort(c, sp.targetPort ?? sp.port) !== undefined)),
                `${where}: no pod behind Service ${svc.metadata.name} exposes ${sp.targetPort ?? sp.port}`,
              );
              checked++;
            }
          }
        }
        assert.ok(checked > 0, 'no address flag checked');
      });

      test('Kafka runs in KRaft mode with a voter per node and replication it can honour', () => {
        const kafka = kafkaBrokers(objs());
        const env = (n: string) => envOf(kafka.container, n);
        assert.equal(env('KAFKA_PROCESS_ROLES'), 'broker,controller');
        const voters = env('KAFKA_CONTROLLER_QUORUM_VOTERS').split(',');
        assert.deepEqual(
          voters,
          Array.from({ length: kafka.replicas }, (_, i) => `${i}@kafka-${i}.${kafka.serviceName}:9093`),
          'one controller voter per pod, node.id = ordinal',
        );
        const job = topicJob(objs());
        const rf = Number(envOf(job, 'REPLICATION_FACTOR'));
        const minIsr = Number(envOf(job, 'MIN_INSYNC_REPLICAS'));
        assert.ok(rf <= kafka.replicas, `replication factor ${rf} > ${kafka.replicas} brokers`);
        assert.ok(minIsr <= rf, `min.insync.replicas ${minIsr} > replication factor ${rf}`);
        assert.equal(env('KAFKA_DEFAULT_REPLICATION_FACTOR'), String(rf));
        assert.equal(env('KAFKA_MIN_INSYNC_REPLICAS'), String(minIsr));
        assert.equal(env('KAFKA_AUTO_CREATE_TOPICS_ENABLE'), 'false');
        assert.ok(Number(env('KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR')) <= kafka.replicas, 'offsets topic RF fits the brokers');
      });

      test('liveness and startup probes of Strata containers are /healthz: never a path that waits on Kafka, Redis or the bucket', () => {
        for (const { owner, container } of strataContainers(objs())) {
          const where = `${owner.metadata.name}/${container.name}`;
          assert.ok(container.livenessProbe?.httpGet, `${where}: an HTTP liveness probe`);
          // A slow start (a starved node, a long replay) must not be killed in a loop: liveness waits for startup.
          assert.ok(container.startupProbe, `${where}: a startup probe gates liveness`);
          assert.equal((container.livenessProbe as { initialDelaySeconds?: number }).initialDelaySeconds, undefined, `${where}: no initialDelaySeconds guess`);
          for (const p of [container.livenessProbe, container.startupProbe]) {
            if (p?.httpGet) assert.equal(p.httpGet.path, '/healthz', `${where}: /metrics asks Kafka for the lag, /ready the ring`);
          }
        }
      });

      test("what a Strata container writes is on a volume (the image's /app is read-only and root's)", () => {
        for (const { owner, container } of strataContainers(objs())) {
          const { app, config } = strataConfig(container, firstPodName(owner));
          const where = `${owner.metadata.name} (${app})`;
          assert.equal(container.securityContext?.readOnlyRootFilesystem, true, `${where}: readOnlyRootFilesystem`);
          const mounts = container.volumeMounts ?? [];
          const onVolume = (path: string): boolean => mounts.some((m) => path === m.mountPath || path.startsWith(`${m.mountPath}/`));
          assert.ok(onVolume('/tmp'), `${where}: /tmp (tsx's cache) is a volume`);
          const written: string[] = [];
          if (app === 'ingester' || app === 'all') written.push(config['blocks-storage.tsdb.dir'] as string);
          if (app === 'compactor' || app === 'all') written.push(config['compactor.data-dir'] as string);
          if (config['blocks-storage.backend'] === 'filesystem' && app !== 'distributor') written.push(config['blocks-storage.filesystem.dir'] as string);
          for (const path of written) assert.ok(onVolume(path), `${where}: ${path} is on no volume`);
        }
      });

      test("no workload an HPA scales sets replicas (each apply would reset the HPA's count)", () => {
        for (const hpa of objs().filter((o) => o.kind === 'HorizontalPodAutoscaler')) {
          const target = find(objs(), hpa.spec.scaleTargetRef.kind, hpa.spec.scaleTargetRef.name);
          assert.equal(target.spec.replicas, undefined, `${target.kind}/${target.metadata.name} sets replicas`);
        }
      });

      test('namespaced objects live in one namespace', () => {
        const namespaces = new Set(
          objs()
            .filter((o) => o.kind !== 'Namespace')
            .map((o) => o.metadata.namespace),
        );
        assert.equal(namespaces.size, 1, `namespaces: ${[...namespaces].join(', ')}`);
      });
    });
  }

  describe('production: zones, partitions, querier', () => {
    const objs = (): K8sObject[] => rendered.get('production')!;
    const zoneSets = (): Map<string, K8sObject> =>
      new Map(
        objs()
          .filter((o) => o.kind === 'StatefulSet' && template(o).metadata.labels['app.kubernetes.io/component'] === 'ingester')
          .map((o) => [/^ingester-zone-([a-z0-9]+)$/.exec(o.metadata.name)?.[1] ?? `?${o.metadata.name}`, o]),
      );

    test('distributor, querier, two ingester zones, Kafka with RF 3 and min.insync.replicas 2', () => {
      find(objs(), 'Deployment', 'distributor');
      find(objs(), 'Deployment', 'querier');
      assert.deepEqual([...zoneSets().keys()].sort(), ['a', 'b'], 'ingester StatefulSets are named ingester-zone-<zone>');
      const kafka = kafkaBrokers(objs());
      assert.equal(kafka.replicas, 3);
      assert.equal(envOf(topicJob(objs()), 'REPLICATION_FACTOR'), '3');
      assert.equal(envOf(topicJob(objs()), 'MIN_INSYNC_REPLICAS'), '2');
      assert.ok(
        objs().some(
          (o) => o.kind === 'PodDisruptionBudget' && matches(o.spec.selector.matchLabels, template(find(objs(), 'StatefulSet', 'kafka')).metadata.labels),
        ),
        'a PDB covers Kafka',
      );
    });

    test('the distributor scales with an HPA on CPU', () => {
      const hpa = objs().find((o) => o.kind === 'HorizontalPodAutoscaler' && o.spec.scaleTargetRef.name === 'distributor');
      assert.ok(hpa, 'an HPA targets the distributor');
      assert.equal(hpa.spec.scaleTargetRef.kind, 'Deployment');
      assert.ok(hpa.spec.minReplicas >= 2, 'at least two distributors');
    });

    test('the zones are symmetric: same replicas and spec except the zone', () => {
      const sets = zoneSets();
      const [a, b] = [sets.get('a')!, sets.get('b')!];
      assert.equal(a.spec.replicas, b.spec.replicas, 'replicas per zone');
      const normalise = (o: K8sObject, self: string, other: string): unknown =>
        JSON.parse(JSON.stringify(o), (_k, v: unknown) => {
          if (typeof v !== 'string') return v;
          if (v === self) return '<zone>';
          if (v === other) return '<other-zone>';
          return v.replaceAll(`zone-${self}`, 'zone-<zone>').replaceAll(`zone-${other}`, 'zone-<other-zone>');
        });
      assert.deepEqual(normalise(a, 'a', 'b'), normalise(b, 'b', 'a'));
    });

    test("ingesters fetch from their zone's replica: client-rack is the zone, brokers pick replicas by rack (KIP-392)", () => {
      const kafka = template(find(objs(), 'StatefulSet', 'kafka')).spec.containers[0];
      assert.equal(envOf(kafka, 'KAFKA_REPLICA_SELECTOR_CLASS'), 'org.apache.kafka.common.replica.RackAwareReplicaSelector');
      const racks = envOf(kafka, 'KAFKA_RACKS').split(' ');
      for (const [zone, ss] of zoneSets()) {
        const { config } = strataConfig(template(ss).spec.containers[0], `${ss.metadata.name}-0`);
        assert.equal(config['ingest-storage.kafka.client-rack'], `zone-${zone}`);
        assert.ok(racks.includes(`zone-${zone}`), `no broker in rack zone-${zone} (${racks.join(', ')})`);
      }
    });

    test('pod names are instance ids: pod <n> of zone <z> is ingester-zone-<z>-<n> and owns partition <n>', () => {
      for (const [zone, ss] of zoneSets()) {
        for (let n = 0; n < ss.spec.replicas; n++) {
          const pod = `${ss.metadata.name}-${n}`;
          const { config } = strataConfig(template(ss).spec.containers[0], pod);
          const id = parseInstanceId(config['ingester.ring.instance-id'] as string);
          assert.deepEqual(id, { id: pod, zone, partition: n });
        }
      }
    });

    test('each zone runs one ingester per topic partition', () => {
      const partitions = Number(envOf(topicJob(objs()), 'PARTITIONS'));
      for (const [zone, ss] of zoneSets()) {
        // More ingesters than partitions: the extra ones find no partition and exit.
        assert.ok(ss.spec.replicas <= partitions, `zone ${zone}: ${ss.spec.replicas} ingesters > ${partitions} partitions`);
        // Fewer: the distributor writes to every partition, so some would never be read.
        assert.ok(ss.spec.replicas >= partitions, `zone ${zone}: ${ss.spec.replicas} ingesters < ${partitions} partitions`);
      }
    });

    test('zone placement: the zones avoid each other by topology.kubernetes.io/zone; restarts go zone by zone', () => {
      const sets = zoneSets();
      for (const [zone, ss] of sets) {
        const other = [...sets.keys()].find((z) => z !== zone)!;
        const otherLabels = template(sets.get(other)!).metadata.labels;
        const ownLabels = template(ss).metadata.labels;
        const anti = template(ss).spec.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? [];
        assert.ok(
          anti.some(
            (t) => t.topologyKey === ZONE_LABEL && matches(t.labelSelector.matchLabels, otherLabels) && !matches(t.labelSelector.matchLabels, ownLabels),
          ),
          `zone ${zone}: required anti-affinity on ${ZONE_LABEL} against zone ${other}`,
        );
        assert.equal(ss.spec.updateStrategy?.type, 'OnDelete', `zone ${zone}: RollingUpdate would restart partition n in both zones at once`);
      }
    });

    test('one PodDisruptionBudget over both zones with maxUnavailable 1: no partition loses both copies to a voluntary disruption', () => {
      const pdbs = objs().filter((o) => o.kind === 'PodDisruptionBudget');
      const sets = [...zoneSets().values()];
      const covering = pdbs.filter((p) => sets.some((ss) => matches(p.spec.selector.matchLabels, template(ss).metadata.labels)));
      assert.equal(covering.length, 1, `PDBs covering ingesters: ${covering.map((p) => p.metadata.name).join(', ')}`);
      for (const ss of sets) assert.ok(matches(covering[0].spec.selector.matchLabels, template(ss).metadata.labels), `the PDB covers ${ss.metadata.name}`);
      assert.equal(covering[0].spec.maxUnavailable, 1, 'one ingester (of either zone) down at a time');
    });

    test('ingesters keep their blocks on a volumeClaimTemplate, writable through fsGroup', () => {
      for (const [zone, ss] of zoneSets()) {
        const c = template(ss).spec.containers[0];
        const { config } = strataConfig(c, `${ss.metadata.name}-0`);
        const claims = ((ss.spec.volumeClaimTemplates as { metadata: { name: string } }[] | undefined) ?? []).map((t) => t.metadata.name);
        const mount = c.volumeMounts?.find((m) => (config['blocks-storage.tsdb.dir'] as string).startsWith(`${m.mountPath}/`));
        assert.ok(
          mount && claims.includes(mount.name),
          `zone ${zone}: ${config['blocks-storage.tsdb.dir']} is on a volumeClaimTemplate (${claims.join(', ')})`,
        );
        assert.equal(
          template(ss).spec.securityContext?.fsGroup,
          template(ss).spec.securityContext?.runAsUser === undefined ? undefined : 1000,
          `zone ${zone}: fsGroup makes the volume writable`,
        );
      }
    });

    test('ingesters, queriers, the compactor and rulers share one S3 bucket from the Secret', () => {
      const seen = new Map<string, string>();
      for (const { owner, container } of strataContainers(objs())) {
        const { app, config } = strataConfig(container, firstPodName(owner));
        if (app === 'distributor') continue;
        assert.equal(config['blocks-storage.backend'], 's3', `${owner.metadata.name}: -blocks-storage.backend=s3`);
        const bucket = ['endpoint', 'bucket-name', 'region', 'access-key-id', 'insecure'].map((k) => String(config[`blocks-storage.s3.${k}`])).join(' ');
        seen.set(app, bucket);
        assert.ok(
          container.envFrom?.some((f) => f.secretRef),
          `${owner.metadata.name}: bucket settings from a Secret`,
        );
      }
      assert.deepEqual([...seen.keys()].sort(), ['compactor', 'ingester', 'querier', 'ruler']);
      assert.equal(new Set(seen.values()).size, 1, `one bucket: ${[...seen].join('; ')}`);
    });

    test('a compactor: one replica, Recreate, scratch space on a volume', () => {
      const compactor = find(objs(), 'Deployment', 'compactor');
      assert.equal(compactor.spec.replicas, 1, 'two compactors would compact the same tenants');
      assert.equal(compactor.spec.strategy?.type, 'Recreate');
      assert.equal(strataConfig(template(compactor).spec.containers[0], 'compactor-abcde').app, 'compactor');
    });

    test('Kafka: broker.rack per broker, brokers spread one per zone, no service links turned into broker properties', () => {
      const ss = find(objs(), 'StatefulSet', 'kafka');
      const c = template(ss).spec.containers[0];
      assert.match((c.args ?? []).join('\n'), /export KAFKA_BROKER_RACK=/);
      const racks = envOf(c, 'KAFKA_RACKS').split(' ');
      assert.equal(new Set(racks).size, ss.spec.replicas, 'a rack per broker');
      assert.equal(template(ss).spec.enableServiceLinks, false, 'KAFKA_PORT and friends would become broker properties');
      const spread = ss.spec.template.spec.topologySpreadConstraints as { topologyKey: string; whenUnsatisfiable: string; maxSkew: number }[];
      assert.ok(
        spread.some((t) => t.topologyKey === ZONE_LABEL && t.whenUnsatisfiable === 'DoNotSchedule' && t.maxSkew === 1),
        'one broker per zone',
      );
    });

    test('the querier names every ingester pod at its stable DNS name and gRPC port', () => {
      const sets = zoneSets();
      const querier = template(find(objs(), 'Deployment', 'querier')).spec.containers[0];
      const { config } = strataConfig(querier, 'querier-0');
      const want = new Map<string, string>();
      for (const ss of sets.values()) {
        const svc = find(objs(), 'Service', ss.spec.serviceName as string);
        assert.equal(svc.spec.clusterIP, 'None', `${svc.metadata.name} is headless (pod DNS names)`);
        assert.ok(matches(svc.spec.selector, template(ss).metadata.labels), `${svc.metadata.name} selects ${ss.metadata.name}`);
        const ingester = template(ss).spec.containers[0];
        const grpcPort = strataConfig(ingester, `${ss.metadata.name}-0`).config['server.grpc-listen-port'];
        for (let n = 0; n < ss.spec.replicas; n++) want.set(`${ss.metadata.name}-${n}`, `${ss.metadata.name}-${n}.${svc.metadata.name}:${grpcPort}`);
      }
      const got = new Map(parseIngesterAddresses(config['querier.ingester-addresses'] as string).map((a) => [a.id, a.address]));
      assert.deepEqual(got, want);
      assert.ok(sets.has(config['querier.prefer-availability-zone'] as string), 'the preferred zone exists');
    });
    test('every distributor, ingester and querier shares the partition ring in a Redis that never evicts', () => {
      const endpoints = new Set<string>();
      for (const { owner, container } of strataContainers(objs())) {
        const { app, config } = strataConfig(container, firstPodName(owner));
        if (app === 'compactor') continue; // no ring: one compactor, the bucket only
        assert.equal(config['ring.store'], 'redis', `${owner.metadata.name} (${app}): -ring.store=redis`);
        endpoints.add(config['ring.redis.endpoint'] as string);
        if (config['query-frontend.results-cache.redis.endpoint'] !== '') {
          assert.notEqual(
            config['ring.redis.endpoint'],
            config['query-frontend.results-cache.redis.endpoint'],
            'the ring is not in the evicting results cache',
          );
        }
      }
      assert.equal(endpoints.size, 1, `one ring KV for all: ${[...endpoints].join(', ')}`);
      const [host] = [...endpoints][0].split(':');
      const svc = find(objs(), 'Service', host);
      const kv = workloads(objs()).find((w) => matches(svc.spec.selector, template(w).metadata.labels))!;
      const args = template(kv).spec.containers[0].args ?? [];
      assert.equal(
        args[args.indexOf('--maxmemory-policy') + 1],
        'noeviction',
        `${kv.metadata.name}: an evicted ring key would leave distributors without a ring`,
      );
    });

    test('distributors and ingesters read per-tenant limits from the runtime overrides ConfigMap', () => {
      let checked = 0;
      for (const { owner, container } of strataContainers(objs())) {
        const { app, config } = strataConfig(container, firstPodName(owner));
        if (app !== 'distributor' && app !== 'ingester') continue;
        const where = `${owner.metadata.name} (${app})`;
        const file = config['runtime-config.file'] as string;
        assert.ok(file !== '', `${where}: -runtime-config.file`);
        const mount = container.volumeMounts?.find((m) => m.mountPath === posixDirname(file));
        assert.ok(mount, `${where}: nothing mounted at ${posixDirname(file)}`);
        const volume = template(owner).spec.volumes?.find((v) => v.name === mount.name);
        assert.ok(volume?.configMap, `${where}: volume ${mount.name} is no ConfigMap`);
        const cm = find(objs(), 'ConfigMap', volume.configMap.name) as K8sObject & { data?: Record<string, string> };
        const text = cm.data?.[posixBasename(file)];
        assert.ok(text !== undefined, `ConfigMap ${cm.metadata.name} has no key ${posixBasename(file)}`);
        const parsed = runtimeConfigSchema.safeParse(parseYaml(text));
        assert.ok(parsed.success, `ConfigMap ${cm.metadata.name}: ${parsed.success ? '' : parsed.error.message}`);
        checked++;
      }
      const apps = strataContainers(objs()).map(({ owner, container }) => strataConfig(container, firstPodName(owner)));
      assert.equal(checked, apps.filter((a) => a.app === 'distributor' || a.app === 'ingester').length, 'every distributor and ingester has it');
    });

    test('two rulers: -target=ruler sharding groups in the ring KV by pod name, output to the distributor Service, one shared bucket', () => {
      const ruler = find(objs(), 'Deployment', 'ruler');
      assert.equal(ruler.spec.replicas, 2, "two rulers: a dead one's groups move to the other");
      const c = template(ruler).spec.containers[0];
      const pods = ['ruler-abcde', 'ruler-fghij'].map((pod) => strataConfig(c, pod));
      for (const { app } of pods) assert.equal(app, 'ruler');
      const [a, b] = pods.map((p) => p.config);
      assert.notEqual(a['ruler.ring.instance-id'], b['ruler.ring.instance-id'], 'each pod its own ruler-ring entry (the pod name)');
      assert.equal(a['ring.store'], 'redis', 'the ruler ring is in the shared ring KV');
      assert.ok(
        (a['ruler.ring.heartbeat-timeout'] as number) > 2 * (a['ruler.ring.heartbeat-period'] as number),
        'a missed heartbeat or two does not move groups',
      );
      // Rule output through the distributors: a Service port backed by the distributor pods.
      const push = new URL(a['ruler.push-url'] as string);
      assert.equal(push.pathname, '/api/v1/push');
      const svc = find(objs(), 'Service', push.hostname);
      const port = svc.spec.ports.find((p: { port: number }) => p.port === Number(push.port));
      assert.ok(port, `Service ${push.hostname} has port ${push.port}`);
      const distributor = find(objs(), 'Deployment', 'distributor');
      assert.ok(matches(svc.spec.selector, template(distributor).metadata.labels), `Service ${push.hostname} selects the distributors`);
      assert.equal(
        strataConfig(template(distributor).spec.containers[0], 'distributor-abcde').config['server.http-listen-port'],
        containerPort(template(distributor).spec.containers[0], port.targetPort as string),
        "the push URL reaches the distributor's HTTP port",
      );
      // Rule groups live in the bucket: every ruler must read the same one (no per-pod filesystem).
      assert.equal(a['blocks-storage.backend'], 's3', 'rulers share an S3 bucket for the rule store');
      assert.ok(a['blocks-storage.s3.bucket-name'] !== '', 'the bucket is named');
      // The in-process querier finds every ingester, like the querier Deployment.
      const querier = strataConfig(template(find(objs(), 'Deployment', 'querier')).spec.containers[0], 'querier-abcde').config;
      assert.equal(a['querier.ingester-addresses'], querier['querier.ingester-addresses'], "the ruler's querier names the same ingesters as the queriers");
      assert.ok(
        objs().some((o) => o.kind === 'PodDisruptionBudget' && matches(o.spec.selector.matchLabels, template(ruler).metadata.labels)),
        'a PDB covers the rulers',
      );
    });

    test('ingesters leave the ring before they stop: preStop POSTs /ingester/prepare-shutdown on their HTTP port, a route they serve', async () => {
      // The route as apps/ingester registers it (libs/ring), answering a POST.
      const http = createHttpServer({
        logger: createLogger('k8s-manifests-test', 'silent'),
        registry: new Registry(),
        readiness: { notReadyReason: () => undefined },
      });
      const lifecycler = new PartitionInstanceLifecycler({
        kv: new MemoryKv(),
        instanceId: 'ingester-zone-a-0',
        zone: 'a',
        partition: 0,
        address: () => '127.0.0.1:9095',
        heartbeatPeriodMs: 60_000,
        heartbeatTimeoutMs: 60_000,
        minOwnersCount: 1,
        minOwnersDurationMs: 0,
        deleteInactivePartitionAfterMs: 0,
        pollIntervalMs: 3_600_000,
        logger: createLogger('k8s-manifests-test', 'silent'),
      });
      registerIngesterRingRoutes(http, { lifecycler, logger: createLogger('k8s-manifests-test', 'silent') });
      await lifecycler.start();
      try {
        for (const [zone, ss] of zoneSets()) {
          const c = template(ss).spec.containers[0];
          const command = c.lifecycle?.preStop?.exec?.command ?? [];
          assert.equal(command[0], 'node', `zone ${zone}: preStop runs node (the image has no curl)`);
          const script = command.slice(1).join(' ');
          const m = /fetch\('http:\/\/127\.0\.0\.1:(\d+)(\/[^']*)', \{ method: 'POST'/.exec(script);
          assert.ok(m, `zone ${zone}: preStop POSTs to the pod's own HTTP port: ${script}`);
          assert.match(script, /process\.exit\(r\.ok \? 0 : 1\)/, `zone ${zone}: a failed call fails the hook (it is logged as an event)`);
          const { config } = strataConfig(c, `${ss.metadata.name}-0`);
          assert.equal(Number(m[1]), config['server.http-listen-port'], `zone ${zone}: preStop port`);
          assert.equal(m[2], '/ingester/prepare-shutdown');
          assert.equal((await http.inject({ method: 'POST', url: m[2] })).statusCode, 204, `POST ${m[2]} is served`);
          assert.equal((await http.inject({ method: 'GET', url: m[2] })).body, 'set\n');
          assert.ok((template(ss).spec.terminationGracePeriodSeconds ?? 30) > 10, "the grace period outlasts the hook's 10s timeout");
        }
      } finally {
        await lifecycler.stop();
        await http.close();
      }
    });
  });

  describe('single: one process', () => {
    const objs = (): K8sObject[] => rendered.get('single')!;

    test('one single-process Strata on a one-partition topic', () => {
      const strata = find(objs(), 'Deployment', 'strata');
      assert.equal(strata.spec.replicas, 1);
      assert.equal(strata.spec.strategy?.type, 'Recreate', 'two copies would compete for partition 0');
      assert.equal(strataConfig(template(strata).spec.containers[0], 'strata-0').app, 'all');
      // -target=all runs the ruler too (its ring: this process alone).
      assert.ok(resolveModules(MODULES, ['all']).includes('ruler'), '-target=all includes the ruler');
      // apps/strata consumes partition 0 only (as ingester-zone-a-0).
      assert.equal(envOf(topicJob(objs()), 'PARTITIONS'), '1');
      assert.ok(!objs().some((o) => o.metadata.name.startsWith('ingester-zone-')), 'no separate ingesters');
    });
  });

  test('docs/operations.md: the tested Prometheus remote_write config passes promtool check config', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
    const block = /```yaml\n(# strata: tested remote_write\n[\s\S]*?)```/.exec(doc)?.[1];
    assert.ok(block, 'docs/operations.md has no ```yaml block starting with "# strata: tested remote_write"');
    const dir = mkdtempSync(join(tmpdir(), 'strata-promtool-'));
    try {
      writeFileSync(join(dir, 'prometheus.yml'), block);
      const r = spawnSync('promtool', ['check', 'config', join(dir, 'prometheus.yml')], { encoding: 'utf8' });
      if (r.error) assert.fail(`promtool not found (${r.error.message}): install Debian package "prometheus" (.ci/run does)`);
      assert.equal(r.status, 0, `promtool check config:\n${r.stdout}${r.stderr}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
