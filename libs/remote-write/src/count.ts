// Counts a request's series without decoding them: one pass over the top-level
// fields and no allocation per series, so a limit on series per request holds
// before the parser builds an object for each (a body of 2-byte empty series
// would otherwise cost ~150 bytes of heap per byte received).

import type { RemoteWriteVersion } from './content-type.ts';
import { TAG_WRITE_REQUEST_TIMESERIES } from './messages.ts';
import { TAG_V2_REQUEST_TIMESERIES } from './v2-messages.ts';
import { ProtoReader } from './wire.ts';

/** TimeSeries messages in a decompressed 1.0 WriteRequest or 2.0 Request. Throws RemoteWriteError 'bad-protobuf'. */
export function countSeries(buf: Uint8Array, version: RemoteWriteVersion): number {
  const r = new ProtoReader(buf);
  const end = buf.length;
  const want = version === 'v2' ? TAG_V2_REQUEST_TIMESERIES : TAG_WRITE_REQUEST_TIMESERIES;
  const msg = version === 'v2' ? 'Request' : 'WriteRequest';
  let n = 0;
  while (r.pos < end) {
    const tag = r.tag(end, msg);
    if (tag === want) n++;
    r.skip(tag, end, msg);
  }
  return n;
}
