// The scheduler protocol's messages as grpc-js hands them over (proto/scheduler.proto, field
// names kept), the three services' constructors, and HTTP requests and answers as messages.

import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const PROTO_PATH = fileURLToPath(new URL('../proto/scheduler.proto', import.meta.url));

export interface WireHeader {
  key: string;
  values: string[];
}

export interface WireHttpRequest {
  method: string;
  url: string;
  headers: WireHeader[];
  body: Buffer;
}

export interface WireHttpResponse {
  code: number;
  headers: WireHeader[];
  body: Buffer;
}

type FrontendToSchedulerType = 'INIT' | 'ENQUEUE' | 'CANCEL';
type SchedulerToFrontendStatus = 'OK' | 'TOO_MANY_REQUESTS_PER_TENANT' | 'ERROR' | 'SHUTTING_DOWN';

export interface FrontendToScheduler {
  type: FrontendToSchedulerType;
  frontend_address: string;
  query_id: number;
  user_id: string;
  http_request?: WireHttpRequest | null;
  stats_enabled: boolean;
  max_queriers: number;
}

export interface SchedulerToFrontend {
  status: SchedulerToFrontendStatus;
  error: string;
  query_id: number;
}

export interface QuerierToScheduler {
  querier_id: string;
}

export interface SchedulerToQuerier {
  query_id: number;
  http_request: WireHttpRequest;
  frontend_address: string;
  user_id: string;
  stats_enabled: boolean;
  queue_time_ms: number;
}

export interface QueryResultRequest {
  query_id: number;
  http_response: WireHttpResponse;
  querier_id: string;
  queue_time_ms: number;
}

interface SchedulerPackage {
  SchedulerForFrontend: grpc.ServiceClientConstructor;
  SchedulerForQuerier: grpc.ServiceClientConstructor;
  FrontendForQuerier: grpc.ServiceClientConstructor;
}

let loaded: SchedulerPackage | undefined;

/** The three services of proto/scheduler.proto, loaded once. */
export function schedulerServices(): SchedulerPackage {
  if (loaded === undefined) {
    const def = protoLoader.loadSync(PROTO_PATH, { keepCase: true, longs: Number, enums: String, defaults: true });
    const pkg = grpc.loadPackageDefinition(def) as unknown as { strata: { scheduler: { v1: SchedulerPackage } } };
    loaded = pkg.strata.scheduler.v1;
  }
  return loaded;
}

/** Answers as large as a query's may be. */
const MAX_MESSAGE_BYTES = 256 << 20;
export const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
};

/** HTTP headers as a message: one entry per name, its values in order. */
export function headersToWire(headers: Record<string, string | string[] | number | undefined>): WireHeader[] {
  const out: WireHeader[] = [];
  for (const [key, v] of Object.entries(headers)) {
    if (v === undefined) continue;
    out.push({ key, values: Array.isArray(v) ? v : [String(v)] });
  }
  return out;
}

export function headersFromWire(headers: readonly WireHeader[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const h of headers) out[h.key.toLowerCase()] = h.values.join(', ');
  return out;
}
