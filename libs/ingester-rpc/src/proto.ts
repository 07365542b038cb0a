// Loads the ingester service definition and converts between wire and model types.

import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { Labels, Matcher, MatchType, SelectParams, Series } from '@strata/model';

const PROTO_PATH = fileURLToPath(new URL('../proto/ingester.proto', import.meta.url));

export function loadIngesterService(): grpc.ServiceClientConstructor {
  const def = protoLoader.loadSync(PROTO_PATH, { keepCase: true, longs: Number, enums: String, defaults: true });
  const pkg = grpc.loadPackageDefinition(def) as unknown as {
    strata: { ingester: { v1: { Ingester: grpc.ServiceClientConstructor } } };
  };
  return pkg.strata.ingester.v1.Ingester;
}

export interface WireMatcher {
  type: 'EQUAL' | 'NOT_EQUAL' | 'REGEX_MATCH' | 'REGEX_NO_MATCH';
  name: string;
  value: string;
}

export interface WireQuery {
  tenant: string;
  start_timestamp_ms: number;
  end_timestamp_ms: number;
  matchers: WireMatcher[];
}

export interface WireSeries {
  labels: Labels;
  timestamps: Uint8Array;
  values: Uint8Array;
}

const TO_WIRE: Record<MatchType, WireMatcher['type']> = {
  '=': 'EQUAL',
  '!=': 'NOT_EQUAL',
  '=~': 'REGEX_MATCH',
  '!~': 'REGEX_NO_MATCH',
};
const FROM_WIRE: Record<WireMatcher['type'], MatchType> = {
  EQUAL: '=',
  NOT_EQUAL: '!=',
  REGEX_MATCH: '=~',
  REGEX_NO_MATCH: '!~',
};

export function queryToWire(p: SelectParams): WireQuery {
  return {
    tenant: p.tenant,
    start_timestamp_ms: p.mint,
    end_timestamp_ms: p.maxt,
    matchers: p.matchers.map((m) => ({ type: TO_WIRE[m.type], name: m.name, value: m.value })),
  };
}

export function queryFromWire(q: WireQuery): SelectParams {
  return {
    tenant: q.tenant,
    mint: Number(q.start_timestamp_ms),
    maxt: Number(q.end_timestamp_ms),
    matchers: q.matchers.map((m): Matcher => ({ type: FROM_WIRE[m.type], name: m.name, value: m.value })),
  };
}

export function seriesToWire(s: Series): WireSeries {
  return {
    labels: s.labels,
    timestamps: new Uint8Array(s.timestamps.buffer, s.timestamps.byteOffset, s.timestamps.byteLength),
    values: new Uint8Array(s.values.buffer, s.values.byteOffset, s.values.byteLength),
  };
}

export function seriesFromWire(w: WireSeries): Series {
  return {
    labels: w.labels.map((l) => ({ name: l.name, value: l.value })),
    timestamps: float64s(w.timestamps),
    values: float64s(w.values),
  };
}

/** Copies bytes into a fresh (aligned) Float64Array without touching the bits. */
function float64s(bytes: Uint8Array): Float64Array {
  const out = new Float64Array(bytes.byteLength >>> 3);
  new Uint8Array(out.buffer).set(bytes.subarray(0, out.byteLength));
  return out;
}
