// OTLP/HTTP framing: which encoding a request uses (Content-Type), undoing its
// Content-Encoding within a size bound, and the response bodies the spec asks for
// (an ExportMetricsServiceResponse on success, a google.rpc.Status on failure).
// Must never inflate a body past the limit before refusing it.

import { gunzipSync, zstdDecompressSync } from 'node:zlib';
import { ProtoWriter, WIRE_VARINT } from '@strata/remote-write';
import { decodeExportRequestJson } from './decode-json.ts';
import { decodeExportRequest } from './decode-proto.ts';
import { OtlpError } from './errors.ts';
import type { ExportMetricsRequest } from './model.ts';

export type OtlpFormat = 'protobuf' | 'json';

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

/** The request's encoding from its Content-Type; anything else is unsupported-media-type. */
export function otlpFormat(contentType: string | undefined): OtlpFormat {
  const media = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (media === PROTOBUF) return 'protobuf';
  if (media === JSON_TYPE) return 'json';
  throw new OtlpError(
    'unsupported-media-type',
    `unsupported content type ${JSON.stringify(contentType ?? '')} for OTLP metrics; send ${PROTOBUF} (or ${JSON_TYPE})`,
  );
}

/** The body with its Content-Encoding (gzip or none) undone, refusing more than `maxBytes` once inflated. */
export function decodeContentEncoding(body: Buffer, contentEncoding: string | undefined, maxBytes: number): Buffer {
  const enc = (contentEncoding ?? '').trim().toLowerCase();
  if (enc === '' || enc === 'identity') return body;
  // gzip as Prometheus' OTLP receiver takes it; zstd as Mimir's (and the collector's otlphttp exporter with compression: zstd).
  if (enc !== 'gzip' && enc !== 'zstd') {
    throw new OtlpError(
      'unsupported-content-encoding',
      `unsupported content encoding ${JSON.stringify(contentEncoding)} for OTLP metrics; send gzip, zstd or no Content-Encoding`,
    );
  }
  try {
    return enc === 'gzip' ? gunzipSync(body, { maxOutputLength: maxBytes }) : zstdDecompressSync(body, { maxOutputLength: maxBytes });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) {
      throw new OtlpError(
        'too-large',
        `decompressed OTLP body is above the limit of ${maxBytes} bytes; send smaller batches (the collector's batch processor send_batch_max_size)`,
      );
    }
    throw new OtlpError(enc === 'gzip' ? 'bad-gzip' : 'bad-zstd', `${enc}: ${(e.message ?? String(err)).replace(/\s+/g, ' ')}`);
  }
}

/** Decodes a (decompressed) body in the given format. Throws OtlpError (bad-input) on malformed input. */
export function decodeExportRequestBody(body: Buffer, format: OtlpFormat): ExportMetricsRequest {
  return format === 'json' ? decodeExportRequestJson(body) : decodeExportRequest(body);
}

/** The Content-Type of responses in `format`. */
export function otlpContentType(format: OtlpFormat): string {
  return format === 'json' ? JSON_TYPE : PROTOBUF;
}

/**
 * An ExportMetricsServiceResponse: empty on full success; with partial_success
 * (rejected_data_points = 1, error_message = 2) when given.
 */
export function encodeExportResponse(format: OtlpFormat, partial?: { rejectedDataPoints: number; errorMessage: string }): Buffer {
  if (format === 'json') {
    return Buffer.from(
      JSON.stringify(
        partial === undefined ? {} : { partialSuccess: { rejectedDataPoints: String(partial.rejectedDataPoints), errorMessage: partial.errorMessage } },
      ),
    );
  }
  if (partial === undefined) return Buffer.alloc(0);
  const w = new ProtoWriter(64 + partial.errorMessage.length * 3);
  const s = w.begin(1);
  w.tag(1, WIRE_VARINT);
  w.int64(partial.rejectedDataPoints);
  w.string(2, partial.errorMessage);
  w.end(s);
  return Buffer.from(w.finish());
}

/**
 * A google.rpc.Status (code = 1, message = 2), the body OTLP/HTTP gives every
 * failed request; `code` is the gRPC status code the edge picked for the error's kind.
 */
export function encodeStatus(format: OtlpFormat, code: number, message: string): Buffer {
  if (format === 'json') return Buffer.from(JSON.stringify({ code, message }));
  const w = new ProtoWriter(16 + message.length * 3);
  w.tag(1, WIRE_VARINT);
  w.uvarint(code);
  w.string(2, message);
  return Buffer.from(w.finish());
}
