// Holds one connected kafkajs client (producer or admin), connecting it on first use. A client
// that failed or timed out is thrown away whole and replaced on next use: kafkajs clients can
// stay wedged on dead connections after a broker restart.
import { withDeadline } from './deadline.ts';

interface Connectable {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
}

const CLOSE_WAIT_MS = 5000;

export class ClientSlot<C extends Connectable> {
  private current: { client: C; ready: Promise<C> } | undefined;

  private readonly create: () => C;
  private readonly what: string;

  constructor(
    create: () => C,
    what: string,
  ) {
    this.create = create;
    this.what = what;
  }

  /** The connected client, connecting a new one if needed, within `timeoutMs`. */
  async get(timeoutMs: number): Promise<C> {
    if (this.current === undefined) {
      const client = this.create();
      const ready = client.connect().then(() => client);
      this.current = { client, ready };
      ready.catch(() => this.discard(client));
    }
    const { client, ready } = this.current;
    try {
      return await withDeadline(ready, timeoutMs, `connecting the Kafka ${this.what}`);
    } catch (err) {
      this.discard(client);
      throw err;
    }
  }

  /** Drops `client` if it is still the current one; it is disconnected once its connect settled. */
  discard(client: C): void {
    if (this.current?.client !== client) return;
    const { ready } = this.current;
    this.current = undefined;
    void ready
      .catch(() => undefined)
      .then(() => client.disconnect())
      .catch(() => undefined);
  }

  async close(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    if (current === undefined) return;
    await withDeadline(current.ready, CLOSE_WAIT_MS, 'connect before close').catch(() => undefined);
    await withDeadline(current.client.disconnect(), CLOSE_WAIT_MS, 'disconnect').catch(() => undefined);
  }
}
