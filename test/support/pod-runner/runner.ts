// A kubelet and the few controllers a rendered overlay needs, on this machine, without a cluster:
// StatefulSets (stable names, Parallel or OrderedReady, volumeClaimTemplates as per-pod directories
// that outlive the pod), Deployments (with an HPA's minReplicas), Jobs; init containers; probes;
// container restarts with the kubelet's back-off; preStop and terminationGracePeriodSeconds; the
// eviction API's PodDisruptionBudget check; Services as ClusterIPs proxied to ready endpoints and
// names in every pod's /etc/hosts. Each pod gets its own network namespace (network.ts), each
// container its own mount and UTS namespace with a root made of the image stand-in (images.ts) and
// its volumes, and runs as its runAsUser/runAsGroup (setpriv). The test reaches Services and pods
// through forward() (kubectl port-forward: a loopback port relayed into the pod network).
// Everything is torn down by pid and by namespace name in stop().
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join, posix } from 'node:path';
import { parseByteSize } from '@strata/service';
import { refuseHiddenBinds } from './binds.ts';
import { Images, type ImageRun } from './images.ts';
import {
  matches,
  scaled,
  type Container,
  type EnvVar,
  type HpaSpec,
  type K8sObject,
  type PdbSpec,
  type PodSpec,
  type PodTemplate,
  type Probe,
  type ServiceSpec,
  type WorkloadSpec,
} from './manifests.ts';
import { PodNetwork } from './network.ts';

const BACKOFF_START_MS = 10_000; // the kubelet's first crash-loop back-off
const BACKOFF_MAX_MS = 300_000;
const CLUSTER_DOMAIN = 'cluster.local';

export interface PodRunnerOptions {
  objects: K8sObject[];
  /** Scratch space: pod roots, volumes, logs (logs/<pod>_<container>.log). */
  dir: string;
  repoRoot: string;
  log?: (line: string) => void;
}

export interface ContainerUsage {
  pod: string;
  container: string;
  rssMiB: number;
  cpuSeconds: number;
}

export class EvictionRefused extends Error {}

type ExitInfo = { code: number | null; signal: NodeJS.Signals | null };

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ containers

class ContainerRun {
  child: ChildProcess | undefined;
  exit: Promise<ExitInfo> = Promise.resolve({ code: 0, signal: null });
  started = false;
  ready = false;
  restarts = 0;
  lastExit: ExitInfo | undefined;
  /** Set while the kubelet itself is stopping this run (liveness failure, pod deletion). */
  killing: Promise<void> | undefined;

  readonly spec: Container;

  constructor(spec: Container) {
    this.spec = spec;
  }

  get pid(): number | undefined {
    return this.child?.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }
}

// ------------------------------------------------------------------ pods

export class Pod {
  readonly containers: ContainerRun[];
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Terminated' = 'Pending';
  terminating = false;
  netns = '';
  private stopped = false;
  private initRun: ContainerRun | undefined;
  private done: Promise<void> = Promise.resolve();
  readonly hostsFile: string;

  private readonly runner: PodRunner;
  readonly name: string;
  readonly owner: Workload;
  readonly ip: string;
  readonly labels: Record<string, string>;
  readonly spec: PodSpec;
  readonly claims: Map<string, string>;

  constructor(
    runner: PodRunner,
    name: string,
    owner: Workload,
    ip: string,
    labels: Record<string, string>,
    spec: PodSpec,
    /** volume name -> host directory of a claim (volumeClaimTemplates, persistentVolumeClaim). */
    claims: Map<string, string>,
  ) {
    this.runner = runner;
    this.name = name;
    this.owner = owner;
    this.ip = ip;
    this.labels = labels;
    this.spec = spec;
    this.claims = claims;
    this.containers = spec.containers.map((c) => new ContainerRun(c));
    this.hostsFile = join(this.dir, 'hosts');
  }

  get dir(): string {
    return join(this.runner.dir, 'pods', this.name);
  }

  get ready(): boolean {
    return this.phase === 'Running' && !this.terminating && this.containers.every((c) => c.ready);
  }

  get restarts(): number {
    return this.containers.reduce((a, c) => a + c.restarts, 0);
  }

  /** The pid of a running container (the first one unless named). */
  pid(container?: string): number | undefined {
    return (container === undefined ? this.containers[0] : this.containers.find((c) => c.spec.name === container))?.pid;
  }

  get hostname(): string {
    return this.spec.hostname ?? this.name;
  }

  get fqdn(): string | undefined {
    return this.spec.subdomain ? `${this.hostname}.${this.spec.subdomain}.${this.runner.namespace}.svc.${CLUSTER_DOMAIN}` : undefined;
  }

  /** Creates the sandbox and volumes and runs the pod until it is deleted (or, for a Job, completes). */
  start(): void {
    this.done = this.run().catch((err: Error) => {
      this.runner.log(`pod ${this.name}: ${err.stack ?? err.message}`);
      this.phase = 'Failed';
    });
  }

  private async run(): Promise<void> {
    rmSync(this.dir, { recursive: true, force: true });
    mkdirSync(this.dir, { recursive: true });
    this.netns = await this.runner.network.addPod(this.name, this.ip);
    this.runner.writeHosts(this);
    this.makeVolumes();
    const policy = this.spec.restartPolicy ?? 'Always';
    for (const init of this.spec.initContainers ?? []) {
      const run = new ContainerRun(init);
      this.initRun = run;
      for (let backoff = BACKOFF_START_MS; ; backoff = Math.min(backoff * 2, BACKOFF_MAX_MS)) {
        if (this.stopped) return;
        const exit = await this.startContainer(run);
        if (exit.code === 0) break;
        if (policy === 'Never' || this.stopped) {
          this.phase = this.stopped ? 'Terminated' : 'Failed';
          return;
        }
        this.runner.log(`pod ${this.name}: init container ${init.name} exited ${exit.code ?? exit.signal}; back-off ${backoff}ms`);
        await this.sleepUnlessStopped(backoff);
      }
    }
    this.initRun = undefined;
    if (this.stopped) return;
    this.phase = 'Running';
    await Promise.all(this.containers.map((c) => this.supervise(c, policy)));
    if (!this.stopped) this.phase = this.containers.every((c) => c.lastExit?.code === 0) ? 'Succeeded' : 'Failed';
    this.runner.changed();
  }

  private async sleepUnlessStopped(ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (!this.stopped && Date.now() < until) await sleep(Math.min(250, until - Date.now()));
  }

  /** Runs a container, restarting it as restartPolicy says, with probes, until the pod stops. */
  private async supervise(c: ContainerRun, policy: string): Promise<void> {
    let backoff = BACKOFF_START_MS;
    for (;;) {
      const startedAt = Date.now();
      const exited = this.startContainer(c);
      const probing = this.probe(c);
      const exit = await exited;
      await probing;
      c.ready = false;
      c.started = false;
      this.runner.changed();
      if (this.stopped) return;
      if (policy === 'Never' || (policy === 'OnFailure' && exit.code === 0)) return;
      // The kubelet resets the back-off after 10 minutes of running.
      if (Date.now() - startedAt > 600_000) backoff = BACKOFF_START_MS;
      this.runner.log(`pod ${this.name}: container ${c.spec.name} exited (${exit.code ?? exit.signal}); restart in ${backoff}ms`);
      await this.sleepUnlessStopped(backoff);
      if (this.stopped) return;
      c.restarts++;
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  // -------------------------------------------------------------- probes

  private async probe(c: ContainerRun): Promise<void> {
    const { startupProbe, readinessProbe, livenessProbe } = c.spec;
    const alive = (): boolean => c.pid !== undefined && !this.stopped && c.killing === undefined;
    if (startupProbe) {
      const ok = await this.probeLoop(c, startupProbe, alive, 'startup');
      if (!ok) return;
    }
    c.started = true;
    if (!readinessProbe) {
      c.ready = alive();
      this.runner.changed();
    }
    await Promise.all([
      readinessProbe ? this.probeLoop(c, readinessProbe, alive, 'readiness') : undefined,
      livenessProbe ? this.probeLoop(c, livenessProbe, alive, 'liveness') : undefined,
    ]);
  }

  /** Polls a probe as configured. startup: resolves true on the first success. liveness/startup:
   * failureThreshold failures in a row kill the container (it is restarted by supervise). */
  private async probeLoop(c: ContainerRun, p: Probe, alive: () => boolean, kind: 'startup' | 'readiness' | 'liveness'): Promise<boolean> {
    const period = (p.periodSeconds ?? 10) * 1000;
    const failureThreshold = p.failureThreshold ?? 3;
    const successThreshold = p.successThreshold ?? 1;
    let failures = 0;
    let successes = 0;
    await this.sleepWhile(alive, (p.initialDelaySeconds ?? 0) * 1000);
    while (alive()) {
      const ok = await this.runProbe(c, p);
      if (!alive()) break;
      if (ok) {
        failures = 0;
        successes++;
        if (kind === 'startup') return true;
        if (kind === 'readiness' && successes >= successThreshold && !c.ready) {
          c.ready = true;
          this.runner.changed();
        }
      } else {
        successes = 0;
        failures++;
        if (kind === 'readiness' && failures >= failureThreshold && c.ready) {
          c.ready = false;
          this.runner.changed();
        }
        if (kind !== 'readiness' && failures >= failureThreshold) {
          this.runner.log(`pod ${this.name}: ${kind} probe of ${c.spec.name} failed ${failures} times; killing it`);
          void this.killContainer(c);
          return false;
        }
      }
      await this.sleepWhile(alive, period);
    }
    return false;
  }

  private async sleepWhile(alive: () => boolean, ms: number): Promise<void> {
    const until = Date.now() + ms;
    while (alive() && Date.now() < until) await sleep(Math.min(200, until - Date.now()));
  }

  private port(c: Container, port: string | number): number {
    if (typeof port === 'number') return port;
    const found = c.ports?.find((p) => p.name === port);
    if (!found) throw new Error(`pod ${this.name}: container ${c.name} has no port named ${port}`);
    return found.containerPort;
  }

  private async runProbe(c: ContainerRun, p: Probe): Promise<boolean> {
    const timeoutMs = (p.timeoutSeconds ?? 1) * 1000;
    try {
      if (p.httpGet) {
        const status = await this.runner.httpGet(`${p.httpGet.host ?? this.ip}:${this.port(c.spec, p.httpGet.port)}`, p.httpGet.path ?? '/', timeoutMs);
        return status >= 200 && status < 400;
      }
      if (p.tcpSocket) {
        const s = await this.runner.connect(`${this.ip}:${this.port(c.spec, p.tcpSocket.port)}`, timeoutMs);
        s.destroy();
        return true;
      }
      if (p.exec) return (await this.exec(c, p.exec.command, timeoutMs)) === 0;
    } catch {
      return false;
    }
    return false;
  }

  // -------------------------------------------------------------- processes

  private volumeDir(name: string): string {
    return this.claims.get(name) ?? join(this.dir, 'volumes', name);
  }

  private makeVolumes(): void {
    const fsGroup = this.spec.securityContext?.fsGroup;
    for (const v of this.spec.volumes ?? []) {
      const dir = this.volumeDir(v.name);
      mkdirSync(dir, { recursive: true });
      if (v.emptyDir) chmodSync(dir, 0o777);
      const files = v.configMap
        ? this.runner.configData('ConfigMap', v.configMap.name, v.configMap.items)
        : v.secret
          ? this.runner.configData('Secret', v.secret.secretName, v.secret.items)
          : undefined;
      for (const [path, text] of Object.entries(files ?? {})) {
        mkdirSync(join(dir, posix.dirname(path)), { recursive: true });
        writeFileSync(join(dir, path), text, { mode: 0o644 });
      }
    }
    for (const dir of this.claims.values()) {
      mkdirSync(dir, { recursive: true });
      // A fresh volume is root's; fsGroup makes it the pod's group's, setgid, as the kubelet does.
      if (fsGroup !== undefined) {
        chownSync(dir, 0, fsGroup);
        chmodSync(dir, 0o2775);
      }
    }
  }

  private env(c: Container, image: ImageRun): Record<string, string> {
    const env: Record<string, string> = { ...image.env, HOSTNAME: this.hostname };
    if (this.spec.enableServiceLinks !== false) Object.assign(env, this.runner.serviceLinks());
    for (const f of c.envFrom ?? []) {
      const data = f.secretRef
        ? this.runner.configData('Secret', f.secretRef.name)
        : f.configMapRef
          ? this.runner.configData('ConfigMap', f.configMapRef.name)
          : {};
      for (const [k, v] of Object.entries(data)) env[`${f.prefix ?? ''}${k}`] = v;
    }
    for (const e of c.env ?? []) env[e.name] = this.envValue(e, env, c);
    return env;
  }

  private envValue(e: EnvVar, env: Record<string, string>, c: Container): string {
    if (e.value !== undefined) return expand(e.value, env);
    const from = e.valueFrom;
    if (from?.fieldRef) {
      const path = from.fieldRef.fieldPath;
      const label = /^metadata\.labels\['(.+)'\]$/.exec(path);
      if (label) return this.labels[label[1]] ?? '';
      const fields: Record<string, string> = {
        'metadata.name': this.name,
        'metadata.namespace': this.runner.namespace,
        'status.podIP': this.ip,
        'spec.nodeName': 'pod-runner',
      };
      const v = fields[path];
      if (v === undefined) throw new Error(`pod ${this.name}: fieldRef ${path} is not supported`);
      return v;
    }
    if (from?.resourceFieldRef) {
      // The kubelet's quantity in bytes (divisor 1); only the memory limit is used by the manifests.
      const { resource } = from.resourceFieldRef;
      const limit = resource === 'limits.memory' ? c.resources?.limits?.memory : undefined;
      if (limit === undefined) throw new Error(`pod ${this.name}: resourceFieldRef ${resource} is not supported or the container sets no such limit`);
      return String(parseByteSize(limit));
    }
    if (from?.secretKeyRef) return this.runner.configKey('Secret', from.secretKeyRef.name, from.secretKeyRef.key);
    if (from?.configMapKeyRef) return this.runner.configKey('ConfigMap', from.configMapKeyRef.name, from.configMapKeyRef.key);
    return '';
  }

  private securityOf(c: Container, image: ImageRun): { uid: number; gid: number; readOnlyRoot: boolean } {
    const pod = this.spec.securityContext ?? {};
    const own = c.securityContext ?? {};
    const uid = own.runAsUser ?? pod.runAsUser ?? image.user;
    return { uid, gid: own.runAsGroup ?? pod.runAsGroup ?? uid, readOnlyRoot: own.readOnlyRootFilesystem === true };
  }

  /** The container's root: the image stand-in's binds, its volumes, the pod's /etc/hosts. */
  private rootfs(c: Container, image: ImageRun, readOnlyRoot: boolean): { root: string; script: string[] } {
    const root = join(this.dir, 'containers', c.name, 'root');
    rmSync(join(this.dir, 'containers', c.name), { recursive: true, force: true });
    for (const d of ['usr', 'etc', '.host-etc', 'proc', 'dev', 'tmp', image.workdir.slice(1)]) mkdirSync(join(root, d), { recursive: true });
    for (const l of ['bin', 'lib', 'lib64', 'sbin']) symlinkSync(`usr/${l}`, join(root, l));
    // A writable root keeps a writable /tmp (the image's); a read-only one only has what volumes give.
    chmodSync(join(root, 'tmp'), readOnlyRoot ? 0o755 : 0o1777);
    const q = shellQuote;
    const script = [
      'set -e',
      `mount --bind ${q(root)} ${q(root)}`,
      `mount --rbind /usr ${q(root)}/usr`,
      `mount -o remount,bind,ro ${q(root)}/usr`,
      `mount --rbind /etc ${q(root)}/.host-etc`,
      `mount -o remount,bind,ro ${q(root)}/.host-etc`,
      `mount --bind ${q(this.hostsFile)} ${q(root)}/etc/hosts`,
      `mount -t proc proc ${q(root)}/proc`,
      `mount --rbind /dev ${q(root)}/dev`,
    ];
    const bind = (host: string, path: string, readOnly: boolean): void => {
      if (statSync(host).isFile()) {
        mkdirSync(join(root, posix.dirname(path)), { recursive: true });
        writeFileSync(join(root, path), '');
      } else {
        mkdirSync(join(root, path), { recursive: true });
      }
      script.push(`mount --bind ${q(host)} ${q(join(root, path))}`);
      if (readOnly) script.push(`mount -o remount,bind,ro ${q(join(root, path))}`);
    };
    for (const b of image.binds) bind(b.host, b.path, b.readOnly);
    for (const m of c.volumeMounts ?? []) {
      const v = (this.spec.volumes ?? []).find((x) => x.name === m.name);
      const claim = this.claims.get(m.name);
      if (!v && !claim) throw new Error(`pod ${this.name}: container ${c.name} mounts unknown volume ${m.name}`);
      const host = m.subPath ? join(this.volumeDir(m.name), m.subPath) : this.volumeDir(m.name);
      mkdirSync(host, { recursive: true });
      bind(host, m.mountPath, m.readOnly === true || v?.configMap !== undefined || v?.secret !== undefined);
    }
    // The host's /etc, entry by entry (links into /.host-etc), around what the image and volumes put there.
    writeFileSync(join(root, 'etc', 'hosts'), '');
    for (const name of readdirSync('/etc')) {
      if (!existsSync(join(root, 'etc', name))) symlinkSync(`/.host-etc/${name}`, join(root, 'etc', name));
    }
    if (readOnlyRoot) script.push(`mount -o remount,bind,ro ${q(root)}`);
    script.push(`hostname ${q(this.hostname)}`);
    return { root, script };
  }

  /** Starts one run of a container; resolves when it exits. */
  private startContainer(c: ContainerRun): Promise<ExitInfo> {
    const image = this.runner.images.resolve(c.spec.image);
    const env = this.env(c.spec, image);
    const argv = [...(c.spec.command ?? image.entrypoint), ...(c.spec.args ?? (c.spec.command ? [] : image.cmd))].map((a) => expand(a, env));
    const sec = this.securityOf(c.spec, image);
    const { root, script } = this.rootfs(c.spec, image, sec.readOnlyRoot);
    script.push(
      `exec chroot ${shellQuote(root)} setpriv --reuid=${sec.uid} --regid=${sec.gid} --clear-groups --pdeathsig=KILL env -i -C ${shellQuote(image.workdir)} "$@"`,
    );
    const envArgs = Object.entries(env).map(([k, v]) => `${k}=${v}`);
    const logFile = join(this.runner.dir, 'logs', `${this.name}_${c.spec.name}.log`);
    const fd = openSync(logFile, 'a');
    let child: ChildProcess;
    try {
      child = spawn(
        '/usr/bin/nsenter',
        [`--net=/run/netns/${this.netns}`, 'unshare', '--mount', '--uts', '--propagation', 'private', 'sh', '-c', script.join('\n'), 'sh', ...envArgs, ...argv],
        {
          stdio: ['ignore', fd, fd],
          env: {},
        },
      );
    } finally {
      closeSync(fd);
    }
    c.child = child;
    c.killing = undefined;
    this.runner.track(child);
    c.exit = new Promise((resolve) => {
      child.once('error', () => resolve({ code: -1, signal: null }));
      child.once('exit', (code, signal) => {
        this.runner.untrack(child);
        c.lastExit = { code, signal };
        resolve(c.lastExit);
      });
    });
    this.runner.log(`pod ${this.name}: container ${c.spec.name} pid ${child.pid} (uid ${sec.uid}): ${argv.join(' ').slice(0, 160)}`);
    return c.exit;
  }

  /** Runs a command inside a running container's namespaces, root and user (preStop, exec probes). */
  private async exec(c: ContainerRun, command: string[], timeoutMs: number): Promise<number | null> {
    const pid = c.pid;
    if (pid === undefined) return null;
    const image = this.runner.images.resolve(c.spec.image);
    const sec = this.securityOf(c.spec, image);
    const envArgs = Object.entries(this.env(c.spec, image)).map(([k, v]) => `${k}=${v}`);
    const child = spawn(
      '/usr/bin/nsenter',
      [
        '-t',
        String(pid),
        '-m',
        '-u',
        '-n',
        '-r',
        '-w',
        'setpriv',
        `--reuid=${sec.uid}`,
        `--regid=${sec.gid}`,
        '--clear-groups',
        'env',
        '-i',
        ...envArgs,
        ...command,
      ],
      { stdio: 'ignore', env: {} },
    );
    this.runner.track(child);
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const code = await new Promise<number | null>((resolve) => {
      child.once('error', () => resolve(null));
      child.once('exit', (x) => resolve(x));
    });
    clearTimeout(timer);
    this.runner.untrack(child);
    return code;
  }

  /** The kubelet's container stop: preStop (within the grace period), SIGTERM, SIGKILL at the deadline. */
  killContainer(c: ContainerRun, graceSeconds?: number): Promise<void> {
    c.killing ??= (async () => {
      const pid = c.pid;
      if (pid === undefined) return;
      const grace = (graceSeconds ?? this.spec.terminationGracePeriodSeconds ?? 30) * 1000;
      const deadline = Date.now() + grace;
      const preStop = c.spec.lifecycle?.preStop;
      if (preStop?.exec) {
        const code = await this.exec(c, preStop.exec.command, grace);
        this.runner.log(`pod ${this.name}: preStop of ${c.spec.name} exited ${code}`);
      } else if (preStop?.httpGet) {
        await this.runner.httpGet(`${this.ip}:${this.port(c.spec, preStop.httpGet.port)}`, preStop.httpGet.path ?? '/', grace).catch(() => undefined);
      } else if (preStop?.sleep) {
        await sleep(Math.min(preStop.sleep.seconds * 1000, grace));
      }
      signal(c.pid, 'SIGTERM');
      const exited = await Promise.race([c.exit.then(() => true), sleep(Math.max(0, deadline - Date.now())).then(() => false)]);
      if (!exited) {
        this.runner.log(`pod ${this.name}: ${c.spec.name} outlived its grace period; SIGKILL`);
        signal(c.pid, 'SIGKILL');
      }
      await c.exit;
    })();
    return c.killing;
  }

  /** Deletes the pod as the API server and kubelet do: not ready at once, containers stopped, sandbox removed. */
  async delete(graceSeconds?: number): Promise<void> {
    if (this.stopped) return this.done;
    this.terminating = true;
    this.stopped = true;
    this.runner.changed();
    await Promise.all([...this.containers, ...(this.initRun ? [this.initRun] : [])].map((c) => this.killContainer(c, graceSeconds)));
    await this.done;
    this.phase = 'Terminated';
    await this.runner.network.removeNs(this.netns);
  }

  /** Synchronous SIGKILL of everything (process-exit hook). */
  killNow(): void {
    for (const c of this.containers) signal(c.pid, 'SIGKILL');
  }
}

function signal(pid: number | undefined, sig: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The kubelet's $(VAR) expansion in env values, command and args ($$ escapes). */
function expand(s: string, env: Record<string, string>): string {
  return s.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name: string | undefined) =>
    m === '$$' ? '$' : name !== undefined && name in env ? env[name] : m,
  );
}

// ------------------------------------------------------------------ workloads

class Workload {
  readonly pods = new Map<string, Pod>();
  desired: number;
  private seq = 0;

  readonly kind: 'StatefulSet' | 'Deployment' | 'Job';
  readonly name: string;
  readonly spec: WorkloadSpec;

  constructor(kind: 'StatefulSet' | 'Deployment' | 'Job', name: string, spec: WorkloadSpec) {
    this.kind = kind;
    this.name = name;
    this.spec = spec;
    this.desired = kind === 'Job' ? 1 : (spec.replicas ?? 1);
  }

  get template(): PodTemplate {
    return this.spec.template;
  }

  /** Pod names this workload wants, in order. */
  podName(ordinal: number): string {
    if (this.kind === 'StatefulSet') return `${this.name}-${ordinal}`;
    const suffix = (this.seq++).toString(36).padStart(5, '0');
    return this.kind === 'Job' ? `${this.name}-${suffix}` : `${this.name}-5f7b9c-${suffix}`;
  }
}

// ------------------------------------------------------------------ the runner

export class PodRunner {
  readonly namespace: string;
  readonly dir: string;
  network!: PodNetwork;
  images!: Images;
  private readonly objects: K8sObject[];
  private readonly workloads: Workload[] = [];
  private readonly services = new Map<string, { spec: ServiceSpec; ip?: string }>();
  private readonly ips = new Map<string, string>();
  private readonly children = new Set<ChildProcess>();
  private readonly forwards: Server[] = [];
  private gateway: ChildProcess | undefined;
  private gatewaySocket = '';
  private stopping = false;
  private syncing: Promise<void> = Promise.resolve();
  private syncQueued = false;
  private readonly killAll = (): void => {
    for (const w of this.workloads) for (const p of w.pods.values()) p.killNow();
    for (const c of this.children) signal(c.pid, 'SIGKILL');
  };

  private readonly opts: PodRunnerOptions;

  private constructor(opts: PodRunnerOptions) {
    this.opts = opts;
    this.objects = opts.objects;
    this.dir = opts.dir;
    this.namespace = opts.objects.find((o) => o.metadata.namespace)?.metadata.namespace ?? 'default';
  }

  log(line: string): void {
    this.opts.log?.(line);
  }

  /** Creates the pod network and every workload of `objects`, like `kubectl apply` on an empty cluster. */
  static async start(opts: PodRunnerOptions): Promise<PodRunner> {
    const r = new PodRunner(opts);
    process.on('exit', r.killAll);
    try {
      await r.boot();
    } catch (err) {
      await r.stop();
      throw err;
    }
    return r;
  }

  private async boot(): Promise<void> {
    mkdirSync(join(this.dir, 'logs'), { recursive: true });
    this.images = await Images.prepare(this.opts.repoRoot, join(this.dir, 'images'));
    await PodNetwork.removeStale();
    this.network = await PodNetwork.create(`strata-pr${process.pid}`);
    await this.startGateway();
    for (const o of this.objects) {
      if (o.kind === 'Service') {
        const spec = o.spec as ServiceSpec;
        this.services.set(o.metadata.name, { spec, ip: spec.clusterIP === 'None' ? undefined : await this.network.allocateServiceIp() });
      }
    }
    for (const o of this.objects) {
      if (o.kind !== 'StatefulSet' && o.kind !== 'Deployment' && o.kind !== 'Job') continue;
      const w = new Workload(o.kind, o.metadata.name, o.spec as WorkloadSpec);
      const hpa = this.objects.find((h) => h.kind === 'HorizontalPodAutoscaler' && (h.spec as HpaSpec).scaleTargetRef.name === w.name);
      if (hpa) {
        const h = hpa.spec as HpaSpec;
        w.desired = Math.min(h.maxReplicas, Math.max(h.minReplicas ?? 1, w.desired));
      }
      this.refuseHiddenBinds(w);
      this.workloads.push(w);
    }
    // Names first (every pod's /etc/hosts lists every StatefulSet pod), then pods.
    for (const w of this.workloads) for (let i = 0; i < w.desired; i++) this.createPod(w, i, false);
    for (const w of this.workloads) void this.reconcileStart(w);
  }

  /** Before any pod starts (the error reaches the caller, not a pod log): no volume of `w`'s pods hides a bind of its images. */
  private refuseHiddenBinds(w: Workload): void {
    const spec = w.template.spec;
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
      refuseHiddenBinds(`${w.kind} ${w.name}: container ${c.name} (image ${c.image})`, this.images.resolve(c.image).binds, c.volumeMounts ?? []);
    }
  }

  private async reconcileStart(w: Workload): Promise<void> {
    const ordered = w.kind === 'StatefulSet' && (w.spec.podManagementPolicy ?? 'OrderedReady') === 'OrderedReady';
    for (const p of [...w.pods.values()]) {
      p.start();
      if (ordered) while (!p.ready && !this.stopping) await sleep(250);
    }
  }

  private createPod(w: Workload, ordinal: number, start: boolean): Pod {
    const name = w.podName(ordinal);
    let ip = this.ips.get(name);
    if (!ip) this.ips.set(name, (ip = this.network.allocatePodIp()));
    const spec: PodSpec = { ...w.template.spec };
    if (w.kind === 'StatefulSet') {
      spec.hostname = name;
      spec.subdomain = w.spec.serviceName;
    }
    if (w.kind === 'Job') spec.restartPolicy ??= 'OnFailure';
    const claims = new Map<string, string>();
    for (const t of w.spec.volumeClaimTemplates ?? []) claims.set(t.metadata.name, join(this.dir, 'pvc', `${t.metadata.name}-${name}`));
    for (const v of spec.volumes ?? []) if (v.persistentVolumeClaim) claims.set(v.name, join(this.dir, 'pvc', v.persistentVolumeClaim.claimName));
    const labels = { ...w.template.metadata.labels, ...(w.kind === 'StatefulSet' ? { 'statefulset.kubernetes.io/pod-name': name } : {}) };
    const pod = new Pod(this, name, w, ip, labels, spec, claims);
    w.pods.set(name, pod);
    if (start) pod.start();
    return pod;
  }

  // -------------------------------------------------------------- objects

  private object(kind: string, name: string): K8sObject {
    const o = this.objects.find((x) => x.kind === kind && x.metadata.name === name);
    if (!o) throw new Error(`no ${kind} ${name} in the manifests`);
    return o;
  }

  configData(kind: 'ConfigMap' | 'Secret', name: string, items?: { key: string; path: string }[]): Record<string, string> {
    const o = this.object(kind, name);
    const data: Record<string, string> = { ...(o.stringData ?? {}) };
    for (const [k, v] of Object.entries(o.data ?? {})) data[k] = kind === 'Secret' ? Buffer.from(v, 'base64').toString('utf8') : v;
    if (!items) return data;
    return Object.fromEntries(items.map((i) => [i.path, data[i.key] ?? '']));
  }

  configKey(kind: 'ConfigMap' | 'Secret', name: string, key: string): string {
    const v = this.configData(kind, name)[key];
    if (v === undefined) throw new Error(`${kind} ${name} has no key ${key}`);
    return v;
  }

  /** The variables the kubelet gives every pod for each Service (enableServiceLinks). */
  serviceLinks(): Record<string, string> {
    const env: Record<string, string> = {};
    for (const [name, s] of this.services) {
      if (!s.ip) continue;
      const n = name.toUpperCase().replace(/-/g, '_');
      const [first] = s.spec.ports;
      env[`${n}_SERVICE_HOST`] = s.ip;
      env[`${n}_SERVICE_PORT`] = String(first.port);
      env[`${n}_PORT`] = `tcp://${s.ip}:${first.port}`;
      for (const p of s.spec.ports) {
        const k = `${n}_PORT_${p.port}_TCP`;
        env[k] = `tcp://${s.ip}:${p.port}`;
        env[`${k}_PROTO`] = 'tcp';
        env[`${k}_PORT`] = String(p.port);
        env[`${k}_ADDR`] = s.ip;
        if (p.name) env[`${n}_SERVICE_PORT_${p.name.toUpperCase().replace(/-/g, '_')}`] = String(p.port);
      }
    }
    return env;
  }

  /** The pod's /etc/hosts: localhost, itself, every ClusterIP Service and every StatefulSet pod under its Service. */
  writeHosts(pod: Pod): void {
    const ns = this.namespace;
    const names = (base: string): string => [base, `${base}.${ns}`, `${base}.${ns}.svc`, `${base}.${ns}.svc.${CLUSTER_DOMAIN}`].join(' ');
    const lines = ['127.0.0.1\tlocalhost', '::1\tlocalhost ip6-localhost ip6-loopback', `${pod.ip}\t${pod.fqdn ? `${pod.fqdn} ` : ''}${pod.hostname}`];
    for (const [name, s] of this.services) if (s.ip) lines.push(`${s.ip}\t${names(name)}`);
    for (const w of this.workloads) {
      if (w.kind !== 'StatefulSet' || !w.spec.serviceName) continue;
      for (let i = 0; i < w.desired; i++) {
        const podName = `${w.name}-${i}`;
        const ip = this.ips.get(podName);
        if (ip) lines.push(`${ip}\t${names(`${podName}.${w.spec.serviceName}`)}`);
      }
    }
    // Headless Services resolve to their pods.
    for (const [name, s] of this.services) {
      if (s.ip || !s.spec.selector) continue;
      for (const w of this.workloads) {
        if (!matches(s.spec.selector, w.template.metadata.labels ?? {})) continue;
        for (const p of w.pods.values()) lines.push(`${p.ip}\t${names(name)}`);
      }
    }
    writeFileSync(pod.hostsFile, `${lines.join('\n')}\n`, { mode: 0o644 });
  }

  // -------------------------------------------------------------- the Service proxy

  private async startGateway(): Promise<void> {
    this.gatewaySocket = join(this.dir, 'gateway.sock');
    const logFd = openSync(join(this.dir, 'logs', 'gateway.log'), 'a');
    // Dies with this process (PR_SET_PDEATHSIG), as every container does.
    const child = spawn(
      '/usr/bin/nsenter',
      [
        `--net=/run/netns/${this.network.nodeNs}`,
        'setpriv',
        '--pdeathsig=KILL',
        process.execPath,
        '--import',
        'tsx',
        join(this.opts.repoRoot, 'test/support/pod-runner/gateway.ts'),
        this.gatewaySocket,
      ],
      {
        cwd: this.opts.repoRoot,
        stdio: ['ignore', 'pipe', logFd],
      },
    );
    closeSync(logFd);
    this.gateway = child;
    this.track(child);
    await new Promise<void>((resolve, reject) => {
      child.stdout?.once('data', () => resolve());
      child.once('exit', (code) => reject(new Error(`the pod network gateway exited (${code}); see ${this.dir}/logs/gateway.log`)));
    });
  }

  /** Endpoints changed (a pod's readiness, a pod gone): tell the Service proxy, coalescing bursts. */
  changed(): void {
    if (this.syncQueued || this.stopping) return;
    this.syncQueued = true;
    this.syncing = this.syncing.then(async () => {
      this.syncQueued = false;
      await this.control(`SERVICES ${JSON.stringify(this.serviceTable())}`).catch((err: Error) => this.log(`service proxy update failed: ${err.message}`));
    });
  }

  private serviceTable(): { ip: string; port: number; endpoints: string[] }[] {
    const out: { ip: string; port: number; endpoints: string[] }[] = [];
    for (const s of this.services.values()) {
      if (!s.ip || !s.spec.selector) continue;
      const pods = this.allPods().filter((p) => p.ready && matches(s.spec.selector, p.labels));
      for (const port of s.spec.ports) {
        const endpoints = pods.flatMap((p) => {
          const target = port.targetPort ?? port.port;
          const c = p.spec.containers.flatMap((x) => x.ports ?? []).find((x) => (typeof target === 'number' ? x.containerPort === target : x.name === target));
          const n = typeof target === 'number' ? target : c?.containerPort;
          return n === undefined ? [] : [`${p.ip}:${n}`];
        });
        out.push({ ip: s.ip, port: port.port, endpoints });
      }
    }
    return out;
  }

  private async control(line: string): Promise<void> {
    const s = await this.openGateway(line, 10_000);
    s.destroy();
  }

  /** A connection through the gateway, after its first line; `target` ip:port in the pod network. */
  connect(target: string, timeoutMs = 5000): Promise<Socket> {
    return this.openGateway(`CONNECT ${target}`, timeoutMs);
  }

  private openGateway(line: string, timeoutMs: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const s = createConnection(this.gatewaySocket);
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`${line.slice(0, 40)}: timed out`));
      }, timeoutMs);
      let buf = '';
      const onData = (chunk: Buffer): void => {
        buf += chunk.toString('latin1');
        const nl = buf.indexOf('\n');
        if (nl < 0) return;
        clearTimeout(timer);
        s.off('data', onData);
        s.pause();
        const reply = buf.slice(0, nl);
        if (reply !== 'OK') {
          s.destroy();
          reject(new Error(`${line.slice(0, 40)}: ${reply}`));
          return;
        }
        const rest = buf.slice(nl + 1);
        if (rest.length > 0) s.unshift(Buffer.from(rest, 'latin1'));
        resolve(s);
      };
      s.on('data', onData);
      s.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      s.once('connect', () => s.write(`${line}\n`));
    });
  }

  /** An HTTP GET the way a probe does it; resolves the status code. */
  async httpGet(target: string, path: string, timeoutMs: number): Promise<number> {
    const s = await this.connect(target, timeoutMs);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`GET ${target}${path}: timed out`));
      }, timeoutMs);
      let buf = '';
      s.on('data', (chunk: Buffer) => {
        buf += chunk.toString('latin1');
        const m = /^HTTP\/1\.[01] (\d{3})/.exec(buf);
        if (m) {
          clearTimeout(timer);
          s.destroy();
          resolve(Number(m[1]));
        }
      });
      s.on('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
      s.on('close', () => {
        clearTimeout(timer);
        reject(new Error(`GET ${target}${path}: closed`));
      });
      s.resume();
      s.write(`GET ${path} HTTP/1.1\r\nHost: ${target}\r\nUser-Agent: kube-probe/1.32\r\nConnection: close\r\n\r\n`);
    });
  }

  /** `kubectl port-forward`: a loopback URL relayed to a Service (by name) or pod (by name) port. */
  async forward(name: string, port: number): Promise<string> {
    const target = (): string => {
      const svc = this.services.get(name);
      if (svc?.ip) return `${svc.ip}:${port}`;
      const pod = this.pod(name);
      return `${pod.ip}:${port}`;
    };
    const server = createServer((client) => {
      client.pause();
      client.on('error', () => undefined);
      this.connect(target()).then(
        (up) => {
          up.on('error', () => client.destroy());
          client.on('close', () => up.destroy());
          up.on('close', () => client.destroy());
          client.pipe(up);
          up.pipe(client);
          up.resume();
          client.resume();
        },
        () => client.destroy(),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    this.forwards.push(server);
    const addr = server.address();
    return `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  }

  // -------------------------------------------------------------- what tests do

  allPods(): Pod[] {
    return this.workloads.flatMap((w) => [...w.pods.values()]);
  }

  pod(name: string): Pod {
    const p = this.allPods().find((x) => x.name === name);
    if (!p)
      throw new Error(
        `no pod ${name} (pods: ${this.allPods()
          .map((x) => x.name)
          .join(', ')})`,
      );
    return p;
  }

  /** Current pods of a workload. */
  podsOf(workload: string): Pod[] {
    const w = this.workloads.find((x) => x.name === workload);
    if (!w) throw new Error(`no workload ${workload}`);
    return [...w.pods.values()];
  }

  /** Waits until every pod of every (or the named) workload is ready, Jobs complete. */
  async waitReady(workloads?: string[], timeoutMs = 300_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const pending = this.workloads
        .filter((w) => workloads === undefined || workloads.includes(w.name))
        .flatMap((w) =>
          [...w.pods.values()].filter((p) => (w.kind === 'Job' ? p.phase !== 'Succeeded' : !p.ready) || w.pods.size < w.desired).map((p) => p.name),
        );
      if (pending.length === 0) return;
      const failed = this.allPods().filter((p) => p.phase === 'Failed');
      if (failed.length > 0) throw new Error(`pods failed: ${failed.map((p) => p.name).join(', ')} (logs in ${this.dir}/logs)`);
      if (Date.now() > deadline) throw new Error(`pods not ready after ${timeoutMs}ms: ${pending.join(', ')} (logs in ${this.dir}/logs)`);
      await sleep(250);
    }
  }

  /** `kubectl delete pod`: the pod stops (preStop, grace) and its controller creates it again (same name for a StatefulSet). */
  async deletePod(name: string, graceSeconds?: number): Promise<Pod> {
    const old = this.pod(name);
    const w = old.owner;
    await old.delete(graceSeconds);
    w.pods.delete(name);
    if (this.stopping || w.kind === 'Job') return old;
    const ordinal = w.kind === 'StatefulSet' ? Number(name.slice(w.name.length + 1)) : 0;
    const fresh = this.createPod(w, ordinal, false);
    for (const p of this.allPods()) if (p !== fresh && existsSync(p.hostsFile)) this.writeHosts(p);
    fresh.start();
    return fresh;
  }

  /** The eviction API: refused (EvictionRefused, HTTP 429 in a cluster) when a PodDisruptionBudget has no disruption left. */
  async evict(name: string): Promise<Pod> {
    const pod = this.pod(name);
    for (const pdb of this.objects.filter((o) => o.kind === 'PodDisruptionBudget')) {
      const spec = pdb.spec as PdbSpec;
      if (!matches(spec.selector, pod.labels)) continue;
      const covered = this.workloads.filter((w) => matches(spec.selector, w.template.metadata.labels ?? {}));
      const expected = covered.reduce((a, w) => a + w.desired, 0);
      const healthy = covered.flatMap((w) => [...w.pods.values()]).filter((p) => p.ready).length;
      const desiredHealthy =
        spec.maxUnavailable !== undefined ? expected - scaled(spec.maxUnavailable, expected, true) : scaled(spec.minAvailable ?? 0, expected, true);
      const allowed = healthy - desiredHealthy;
      // A ready pod's eviction uses up one disruption; an unready one may go while the budget holds.
      if (allowed < (pod.ready ? 1 : 0)) {
        throw new EvictionRefused(
          `Cannot evict pod ${name}: it would violate PodDisruptionBudget ${pdb.metadata.name} (${healthy} healthy, ${desiredHealthy} needed)`,
        );
      }
    }
    return this.deletePod(name);
  }

  /** Resident memory and CPU time of every running container's process (from /proc). */
  usage(): ContainerUsage[] {
    const tick = 100; // USER_HZ
    const out: ContainerUsage[] = [];
    for (const p of this.allPods()) {
      for (const c of p.containers) {
        const pid = c.pid;
        if (pid === undefined) continue;
        try {
          const status = readFileSync(`/proc/${pid}/status`, 'utf8');
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
          const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
          out.push({ pod: p.name, container: c.spec.name, rssMiB: rssKb / 1024, cpuSeconds: (Number(stat[11]) + Number(stat[12])) / tick });
        } catch {
          // exited meanwhile
        }
      }
    }
    return out;
  }

  track(child: ChildProcess): void {
    this.children.add(child);
  }

  untrack(child: ChildProcess): void {
    this.children.delete(child);
  }

  /** Deletes every pod (grace periods shortened to `graceSeconds`), stops the gateway, removes the namespaces. */
  async stop(graceSeconds = 10): Promise<void> {
    this.stopping = true;
    for (const f of this.forwards.splice(0)) f.close();
    await Promise.all(this.allPods().map((p) => p.delete(graceSeconds).catch(() => undefined)));
    signal(this.gateway?.pid, 'SIGTERM');
    for (const c of this.children) signal(c.pid, 'SIGKILL');
    await this.network?.destroy();
    process.off('exit', this.killAll);
  }
}
