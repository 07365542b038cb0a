// POST /api/v1/read: Prometheus remote read over the querier's storage. Samples
// as one snappy ReadResponse, or streamed XOR chunks when the client accepts them.

import { Readable } from 'node:stream';
import { Counter, type Registry } from 'prom-client';
import type { Series } from '@strata/model';
import type { ExtraRoute, RawReply, RequestContext } from './api.ts';
import { badData } from './errors.ts';
import {
  SAMPLES_CONTENT_TYPE,
  STREAMED_CONTENT_TYPE,
  decodeReadRequest,
  encodeChunkedFrames,
  encodeReadResponse,
  negotiateResponseType,
} from './remote-read.ts';

export interface RemoteReadOptions {
  /** Largest decompressed request accepted. */
  maxRequestBytes?: number;
  registry?: Registry;
}

export function remoteReadRoutes(opts: RemoteReadOptions = {}): ExtraRoute[] {
  const maxBytes = opts.maxRequestBytes ?? 16 << 20;
  const answers = new Counter({
    name: 'strata_querier_remote_read_responses_total',
    help: 'Remote read requests answered, by response type (SAMPLES or STREAMED_XOR_CHUNKS).',
    labelNames: ['type'],
    registers: opts.registry ? [opts.registry] : [],
  });
  const handler = async ({ body, tenant, querier, signal }: RequestContext): Promise<RawReply> => {
    if (!body) throw badData('remote read wants a snappy-compressed protobuf ReadRequest body (Content-Type: application/x-protobuf)');
    const req = decodeReadRequest(body, maxBytes);
    const select = (i: number): Promise<Series[]> => {
      const q = req.queries[i];
      return querier.select({ tenant, matchers: q.matchers, mint: q.startMs, maxt: q.endMs, signal, hints: q.hints });
    };
    const type = negotiateResponseType(req.acceptedResponseTypes);
    answers.inc({ type });
    if (type === 'SAMPLES') {
      const results: Series[][] = [];
      for (let i = 0; i < req.queries.length; i++) results.push(await select(i));
      return {
        raw: true,
        status: 200,
        headers: { 'content-type': SAMPLES_CONTENT_TYPE, 'content-encoding': 'snappy' },
        body: encodeReadResponse(results),
      };
    }
    // The first query is read before answering, so a bad one still gets an error status.
    const first = req.queries.length > 0 ? await select(0) : [];
    async function* frames() {
      for (let i = 0; i < req.queries.length; i++) yield* encodeChunkedFrames(i, i === 0 ? first : await select(i));
    }
    return { raw: true, status: 200, headers: { 'content-type': STREAMED_CONTENT_TYPE }, body: Readable.from(frames()) };
  };
  return [{ endpoint: 'read', path: '/read', methods: ['POST'], handler }];
}
