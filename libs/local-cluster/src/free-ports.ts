// Free loopback ports for test processes (never a public interface).

import { createServer, type Server } from 'node:net';

export async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      servers.push(
        await new Promise<Server>((resolve, reject) => {
          const s = createServer();
          s.once('error', reject);
          s.listen({ host: '127.0.0.1', port: 0, exclusive: true }, () => resolve(s));
        }),
      );
    }
    return servers.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}
