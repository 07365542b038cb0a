// Runs inside the pod network's node namespace: the runner's way in (probes, port-forwards) and the
// Service proxy (kube-proxy's userspace mode: each ClusterIP:port accepts TCP and relays it to one of
// the Service's ready endpoints, round robin, trying the next one if a connect fails).
// Control: a unix socket (argv[2]) that crosses network namespaces; each connection starts with one line:
//   CONNECT <ip>:<port>   -> "OK\n" then raw bytes both ways, or "ERR <why>\n"
//   SERVICES <json>       -> the whole table [{ ip, port, endpoints: ["ip:port"] }], answered "OK\n"
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { rmSync } from 'node:fs';

interface ServiceEntry {
  ip: string;
  port: number;
  endpoints: string[];
}

const socketPath = process.argv[2];
if (!socketPath) throw new Error('usage: gateway.ts <control socket>');

const listeners = new Map<string, { server: Server; entry: ServiceEntry; next: number }>();

function connectTo(target: string, timeoutMs = 3000): Promise<Socket> {
  const i = target.lastIndexOf(':');
  return new Promise((resolve, reject) => {
    const s = createConnection({ host: target.slice(0, i), port: Number(target.slice(i + 1)) });
    const timer = setTimeout(() => s.destroy(new Error(`connect ${target} timed out`)), timeoutMs);
    s.once('connect', () => {
      clearTimeout(timer);
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

function pipe(a: Socket, b: Socket): void {
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
  a.pipe(b);
  b.pipe(a);
}

async function proxy(key: string, client: Socket): Promise<void> {
  client.pause();
  client.on('error', () => undefined);
  const l = listeners.get(key);
  const eps = l?.entry.endpoints ?? [];
  for (let tries = 0; l && tries < eps.length; tries++) {
    const ep = eps[l.next++ % eps.length];
    try {
      const upstream = await connectTo(ep);
      pipe(client, upstream);
      client.resume();
      return;
    } catch {
      // the next endpoint
    }
  }
  client.destroy();
}

async function setServices(entries: ServiceEntry[]): Promise<void> {
  const want = new Map(entries.map((e) => [`${e.ip}:${e.port}`, e]));
  for (const [key, l] of listeners) {
    if (!want.has(key)) {
      l.server.close();
      listeners.delete(key);
    }
  }
  for (const [key, entry] of want) {
    const have = listeners.get(key);
    if (have) {
      have.entry = entry;
      continue;
    }
    const server = createServer((c) => void proxy(key, c));
    listeners.set(key, { server, entry, next: 0 });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(entry.port, entry.ip, () => resolve());
    });
  }
}

function control(c: Socket): void {
  let buf = '';
  c.on('error', () => undefined);
  const onData = (chunk: Buffer): void => {
    buf += chunk.toString('latin1');
    const nl = buf.indexOf('\n');
    if (nl < 0) return;
    c.off('data', onData);
    c.pause();
    const line = buf.slice(0, nl);
    const rest = Buffer.from(buf.slice(nl + 1), 'latin1');
    const sp = line.indexOf(' ');
    const [verb, arg] = [line.slice(0, sp), line.slice(sp + 1)];
    if (verb === 'CONNECT') {
      connectTo(arg).then(
        (upstream) => {
          if (rest.length > 0) upstream.write(rest);
          c.write('OK\n');
          pipe(c, upstream);
          c.resume();
        },
        (err: Error) => c.end(`ERR ${err.message}\n`),
      );
    } else if (verb === 'SERVICES') {
      setServices(JSON.parse(arg) as ServiceEntry[]).then(
        () => c.end('OK\n'),
        (err: Error) => c.end(`ERR ${err.message}\n`),
      );
    } else {
      c.end(`ERR unknown verb ${verb}\n`);
    }
  };
  c.on('data', onData);
}

rmSync(socketPath, { force: true });
const ctl = createServer(control);
ctl.listen(socketPath, () => process.stdout.write('gateway ready\n'));
process.on('SIGTERM', () => process.exit(0));
