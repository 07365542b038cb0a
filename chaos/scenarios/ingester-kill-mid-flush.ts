// An ingester is killed (kill -9) in the middle of /ingester/flush: right after it cut a block
// locally, while the upload and the offset commit are still ahead. The bucket must never hold a
// partial block, and the restarted ingester must replay whatever it had not shipped.

import { openSync, readSync, closeSync, statSync } from 'node:fs';
import type { AppProcess } from '@strata/local-cluster';
import { features } from '../support/product-features.ts';
import { NotApplicableError, type Scenario } from './scenario.ts';

const TARGET = 'ingester-zone-a-0';
/** Zone b's ingester of the same partition flushes fully first: a real flush under load, and its timing. */
const REFERENCE = 'ingester-zone-b-0';
const MARKERS = { cut: /cut block /, shipped: /shipped block /, committed: /committed offset / };

export const ingesterKillMidFlush: Scenario = {
  name: 'ingester-kill-mid-flush',
  description: `flush ${REFERENCE} fully, then kill -9 ${TARGET} right after its flush cut a block (before upload and commit); restart after --fault-seconds`,
  availabilityTarget: 0.999,
  notApplicable() {
    if (features.ingesterFlush().length > 0) return undefined;
    return 'the ingester has no /ingester/flush endpoint yet (block cutting and upload are not built), so there is no flush to interrupt';
  },
  async run(ctx) {
    const reference = ctx.cluster.process(REFERENCE);
    const began = Date.now();
    const refStatus = await flush(reference);
    if (refStatus === 'HTTP 404') throw new NotApplicableError(`${REFERENCE} answers 404 on /ingester/flush`);
    ctx.event(`${REFERENCE}: full flush answered ${refStatus} after ${Date.now() - began}ms`);

    const target = ctx.cluster.process(TARGET);
    const log = new LogTail(target.opts.logFile);
    let answered: string | undefined;
    const flushing = flush(target).then((s) => (answered = s));
    ctx.event(`POST ${TARGET}/ingester/flush?wait=true`);
    const deadline = Date.now() + 120_000;
    while (answered === undefined && !MARKERS.cut.test(log.read()) && Date.now() < deadline) await ctx.sleep(2);
    const pid = target.pid;
    await target.kill('SIGKILL');
    await flushing;
    const seen = log.read();
    const count = (re: RegExp): number => seen.split('\n').filter((line) => re.test(line)).length;
    const progress = `${count(MARKERS.cut)} block(s) cut, ${count(MARKERS.shipped)} shipped, ${count(MARKERS.committed)} offset commit(s) logged`;
    ctx.event(
      answered?.startsWith('HTTP ')
        ? `kill -9 ${TARGET} (pid ${pid}) came after the flush answered ${answered}: not mid-flush (${progress})`
        : `kill -9 ${TARGET} (pid ${pid}) mid-flush: ${progress}; the request ended with "${answered}"`,
    );
    await ctx.sleep(ctx.faultSeconds * 1000);
    ctx.markHeal();
    target.start();
    ctx.event(`restarted ${TARGET} (pid ${target.pid})`);
  },
};

async function flush(p: AppProcess): Promise<string> {
  try {
    const res = await fetch(`${p.url}/ingester/flush?wait=true`, { method: 'POST', signal: AbortSignal.timeout(300_000) });
    const body = (await res.text()).trim();
    return `HTTP ${res.status}${body ? `: ${body.slice(0, 200)}` : ''}`;
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return e.cause?.code ?? e.message;
  }
}

/** What a log file gained since construction (the ingester appends JSON lines to it). */
class LogTail {
  private readonly from: number;

  private readonly file: string;

  constructor(file: string) {
    this.file = file;
    this.from = statSync(file).size;
  }

  read(): string {
    const size = statSync(this.file).size;
    if (size <= this.from) return '';
    const buf = Buffer.alloc(size - this.from);
    const fd = openSync(this.file, 'r');
    try {
      readSync(fd, buf, 0, buf.length, this.from);
    } finally {
      closeSync(fd);
    }
    return buf.toString('utf8');
  }
}
