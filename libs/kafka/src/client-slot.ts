// Holds one ready @platformatic/kafka client (producer, admin or fetcher), made ready on first use
// (the client connects lazily; `ready` asks it for metadata). A client that failed or timed out is
// thrown away whole and replaced on next use, starting again at the seed brokers in their
// current order (a client keeps trying the bootstrap broker it started with).
import { withDeadline } from './deadline.ts';

interface Closable {
  close(): Promise<void>;
}

export interface ClientSlotOptions<C extends Closable> {
  create: () => C;
  /** What makes a new client ready, e.g. a metadata request (it connects on first use). */
  ready: (client: C) => Promise<unknown>;
  /** For messages: 'producer', 'admin client'. */
  what: string;
}

const CLOSE_WAIT_MS = 5000;

export class ClientSlot<C extends Closable> {
  private current: { client: C; ready: Promise<C> } | undefined;

  private readonly opts: ClientSlotOptions<C>;

  constructor(opts: ClientSlotOptions<C>) {
    this.opts = opts;
  }

  /** The ready client, making a new one if needed, within `timeoutMs`. */
  async get(timeoutMs: number): Promise<C> {
    if (this.current === undefined) {
      const client = this.opts.create();
      const ready = this.opts.ready(client).then(() => client);
      this.current = { client, ready };
      ready.catch(() => this.discard(client));
    }
    const { client, ready } = this.current;
    try {
      return await withDeadline(ready, timeoutMs, `connecting the Kafka ${this.opts.what}`);
    } catch (err) {
      this.discard(client);
      throw err;
    }
  }

  /** Drops `client` if it is still the current one; it is closed once its first request settled. */
  discard(client: C): void {
    if (this.current?.client !== client) return;
    const { ready } = this.current;
    this.current = undefined;
    void ready
      .catch(() => undefined)
      .then(() => client.close())
      .catch(() => undefined);
  }

  async close(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    if (current === undefined) return;
    await withDeadline(current.ready, CLOSE_WAIT_MS, 'connect before close').catch(() => undefined);
    await withDeadline(current.client.close(), CLOSE_WAIT_MS, 'close').catch(() => undefined);
  }
}
