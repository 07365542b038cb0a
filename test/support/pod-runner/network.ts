// The pods' network: one network namespace per pod, each with a veth pair whose other end hangs on
// a bridge inside the runner's own "node" namespace (the kubelet's host, where the Service proxy
// runs). Pod addresses 10.244.<n>/16, Service ClusterIPs 10.96.<n>/32 on the node namespace's
// loopback. Nothing is created in the host's network namespace: no interface, route or address.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

async function ip(...args: string[]): Promise<void> {
  try {
    await run('ip', args);
  } catch (err) {
    throw new Error(`ip ${args.join(' ')}: ${(err as { stderr?: string }).stderr ?? (err as Error).message}`, { cause: err });
  }
}

export class PodNetwork {
  readonly nodeNs: string;
  private readonly namespaces: string[] = [];
  private nextPod = 2;
  private nextService = 1;
  private nextVeth = 0;
  private nextNs = 1;

  readonly prefix: string;

  private constructor(prefix: string) {
    this.prefix = prefix;
    this.nodeNs = `${prefix}-node`;
  }

  /** Deletes the namespaces of runners that died without cleaning up (strata-pr<pid>-*, that pid gone). */
  static async removeStale(): Promise<void> {
    const { stdout } = await run('ip', ['netns', 'list']);
    for (const line of stdout.split('\n')) {
      const m = /^(strata-pr(\d+)-\S+)/.exec(line);
      if (!m || existsSync(`/proc/${m[2]}`)) continue;
      await ip('netns', 'del', m[1]).catch(() => undefined);
    }
  }

  /** `prefix` names every namespace this network creates (`ip netns list` shows them). */
  static async create(prefix: string): Promise<PodNetwork> {
    const net = new PodNetwork(prefix);
    await net.addNs(net.nodeNs);
    const n = net.nodeNs;
    await ip('-n', n, 'link', 'set', 'lo', 'up');
    await ip('-n', n, 'link', 'add', 'br0', 'type', 'bridge');
    await ip('-n', n, 'addr', 'add', '10.244.0.1/16', 'dev', 'br0');
    await ip('-n', n, 'link', 'set', 'br0', 'up');
    return net;
  }

  private async addNs(name: string): Promise<void> {
    await ip('netns', 'add', name);
    this.namespaces.push(name);
  }

  /** The next free pod address (kept by the caller for the pod's name, so a recreated pod keeps it). */
  allocatePodIp(): string {
    const n = this.nextPod++;
    return `10.244.${Math.floor(n / 250)}.${(n % 250) + 1}`;
  }

  /** A Service ClusterIP, bound on the node namespace's loopback (where the Service proxy listens). */
  async allocateServiceIp(): Promise<string> {
    const n = this.nextService++;
    const addr = `10.96.${Math.floor(n / 250)}.${(n % 250) + 1}`;
    await ip('-n', this.nodeNs, 'addr', 'add', `${addr}/32`, 'dev', 'lo');
    return addr;
  }

  /** A pod's namespace with `addr` on eth0 and the node namespace as its default route. */
  async addPod(name: string, addr: string): Promise<string> {
    const ns = `${this.prefix}-${this.nextNs++}`;
    await this.addNs(ns);
    const veth = `vp${this.nextVeth++}`;
    await ip('-n', ns, 'link', 'set', 'lo', 'up');
    await ip('-n', this.nodeNs, 'link', 'add', veth, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
    await ip('-n', this.nodeNs, 'link', 'set', veth, 'master', 'br0', 'up');
    await ip('-n', ns, 'addr', 'add', `${addr}/16`, 'dev', 'eth0');
    await ip('-n', ns, 'link', 'set', 'eth0', 'up');
    await ip('-n', ns, 'route', 'add', 'default', 'via', '10.244.0.1');
    return ns;
  }

  async removeNs(ns: string): Promise<void> {
    const i = this.namespaces.indexOf(ns);
    if (i < 0) return;
    this.namespaces.splice(i, 1);
    await ip('netns', 'del', ns).catch(() => undefined);
  }

  /** Deletes every namespace it created, by name (veths go with them). */
  async destroy(): Promise<void> {
    for (const ns of this.namespaces.splice(0).reverse()) await ip('netns', 'del', ns).catch(() => undefined);
  }
}
