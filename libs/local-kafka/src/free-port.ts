// Finds free TCP ports on 127.0.0.1 for the broker and controller listeners.
// Loopback only: a local test broker must never listen on a public interface.
import { createServer, type Server } from 'node:net';

function listen(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => resolve(server));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

function portOf(server: Server): number {
  const addr = server.address();
  if (addr === null || typeof addr === 'string') throw new Error('server has no TCP address');
  return addr.port;
}

/** `n` distinct free ports, preferring `wanted` ones that are still free (a restarted cluster keeps its addresses). */
export async function freePorts(n: number, wanted: number[] = []): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const w = wanted[i];
      let server: Server | undefined;
      if (w !== undefined && w > 0) server = await listen(w).catch(() => undefined);
      servers.push(server ?? (await listen(0)));
    }
    return servers.map(portOf);
  } finally {
    await Promise.all(servers.map(close));
  }
}
