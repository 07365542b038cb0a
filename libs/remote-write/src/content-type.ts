// Which remote write protocol a request speaks, from its headers. This is the seam
// for remote write 2.0: the HTTP layer picks the decoder from the returned version.

import { RemoteWriteError } from './errors.ts';

export type RemoteWriteVersion = 'v1' | 'v2';

const PROTOBUF = 'application/x-protobuf';
const PROTO_V1 = 'prometheus.WriteRequest';
const PROTO_V2 = 'io.prometheus.write.v2.Request';

/**
 * Parses `Content-Type` (and, when given, checks `Content-Encoding` with
 * checkContentEncoding). Missing, or application/x-protobuf without a `proto`
 * parameter, is 1.0 (as Prometheus' receiver does); anything else not listed is unsupported-media-type.
 */
export function parseContentType(contentType: string | undefined, contentEncoding?: string): RemoteWriteVersion {
  if (contentEncoding !== undefined) checkContentEncoding(contentEncoding);
  if (contentType === undefined || contentType.trim() === '') return 'v1';
  const parts = contentType.split(';');
  const mediaType = parts[0].trim().toLowerCase();
  if (mediaType !== PROTOBUF) {
    throw new RemoteWriteError('unsupported-media-type', `unsupported content type ${JSON.stringify(contentType)}; remote write needs ${PROTOBUF}`);
  }
  for (let i = 1; i < parts.length; i++) {
    const p = parts[i].trim();
    if (p === '') continue;
    const eq = p.indexOf('=');
    if (eq <= 0) {
      throw new RemoteWriteError(
        'unsupported-media-type',
        `malformed parameter ${JSON.stringify(p)} in content type ${JSON.stringify(contentType)}; parameters are key=value`,
      );
    }
    if (p.slice(0, eq).trim().toLowerCase() !== 'proto') continue;
    let value = p.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (value === PROTO_V1) return 'v1';
    if (value === PROTO_V2) return 'v2';
    throw new RemoteWriteError(
      'unsupported-media-type',
      `unsupported remote write message ${JSON.stringify(value)}; send proto=${PROTO_V1} or proto=${PROTO_V2}`,
    );
  }
  return 'v1';
}

/** Accepts `Content-Encoding: snappy` or none (old 1.0 senders omit it; the body is snappy regardless). */
export function checkContentEncoding(contentEncoding: string | undefined): void {
  if (contentEncoding === undefined) return;
  const enc = contentEncoding.trim().toLowerCase();
  if (enc === '' || enc === 'snappy') return;
  throw new RemoteWriteError(
    'unsupported-content-encoding',
    `unsupported content encoding ${JSON.stringify(contentEncoding)}; remote write bodies are snappy block-compressed (Content-Encoding: snappy)`,
  );
}
