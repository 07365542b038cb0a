// Runs a WindowEncoder on its own thread so encoding the next window never
// blocks the sender's event loop (and so never shows up as push latency).

import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { WindowEncoder, transferables, type EncodedWindow, type EncoderOptions, type WindowSpec } from './encode.ts';

interface Reply {
  id: number;
  window?: EncodedWindow;
  error?: string;
}

if (!isMainThread && parentPort && (workerData as { benchEncoder?: boolean } | null)?.benchEncoder) {
  const port = parentPort;
  const encoder = new WindowEncoder((workerData as { opts: EncoderOptions }).opts);
  port.on('message', (msg: { id: number; spec: WindowSpec }) => {
    try {
      const window = encoder.encode(msg.spec);
      port.postMessage({ id: msg.id, window } satisfies Reply, transferables(window));
    } catch (err) {
      port.postMessage({ id: msg.id, error: (err as Error).stack ?? String(err) } satisfies Reply);
    }
  });
}

/** The main thread's handle on the encoder thread; windows are encoded in the order asked. */
export class EncoderThread {
  private readonly worker: Worker;
  private nextId = 0;
  private readonly waiting = new Map<number, { resolve: (w: EncodedWindow) => void; reject: (e: Error) => void }>();

  constructor(opts: EncoderOptions) {
    // Loader hooks from `--import tsx` do not reach worker threads on Node 20: register tsx in the worker first.
    const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(import.meta.url)}); })`;
    this.worker = new Worker(boot, { eval: true, workerData: { benchEncoder: true, opts } });
    this.worker.on('message', (r: Reply) => {
      const w = this.waiting.get(r.id);
      if (!w) return;
      this.waiting.delete(r.id);
      if (r.window) w.resolve(r.window);
      else w.reject(new Error(`encoder thread: ${r.error}`));
    });
    this.worker.on('error', (err: Error) => this.failAll(err));
    this.worker.on('exit', (code) => this.failAll(new Error(`encoder thread exited with code ${code}`)));
  }

  encode(spec: WindowSpec): Promise<EncodedWindow> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.worker.postMessage({ id, spec });
    });
  }

  /** CPU time of the encoder thread is part of the generator's process CPU. */
  async close(): Promise<void> {
    this.worker.removeAllListeners('exit');
    await this.worker.terminate();
  }

  private failAll(err: Error): void {
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }
}
