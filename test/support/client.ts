// What a user does from outside: push remote-write bodies and call the
// Prometheus API over HTTP. Used by e2e tests only.

import { compressBody, encodeWriteRequest, type SeriesInput } from '@strata/remote-write';

/**
 * fetch, sent again when the connection closed before any answer came: a kept-alive socket that
 * the server (or a port-forward relay) closed just as it was reused. Any HTTP client, and
 * Prometheus' remote write, retries that; the requests here are idempotent (a resent push is a
 * duplicate the ingesters drop). Each failed try drops its socket, but after pods restart the pool
 * may hold several stale ones: up to CLOSED_RETRIES more tries.
 */
export async function fetchRetryingClosed(url: string, init: RequestInit): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fetch(url, init);
    } catch (err) {
      if ((err as { cause?: { code?: string } }).cause?.code !== 'UND_ERR_SOCKET' || attempt === CLOSED_RETRIES) throw err;
    }
  }
}

const CLOSED_RETRIES = 4;

export interface PushResponse {
  status: number;
  body: string;
}

export async function push(url: string, timeseries: SeriesInput[], headers: Record<string, string> = {}): Promise<PushResponse> {
  return pushRaw(url, compressBody(encodeWriteRequest({ timeseries })), headers);
}

export async function pushRaw(url: string, body: Uint8Array, headers: Record<string, string> = {}): Promise<PushResponse> {
  const res = await fetchRetryingClosed(`${url}/api/v1/push`, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/x-protobuf',
      'content-encoding': 'snappy',
      'x-prometheus-remote-write-version': '0.1.0',
      ...headers,
    },
    signal: AbortSignal.timeout(30_000),
  });
  return { status: res.status, body: await res.text() };
}

export interface ApiResponse<T = unknown> {
  httpStatus: number;
  status: 'success' | 'error';
  data: T;
  errorType?: string;
  error?: string;
}

export async function api<T = unknown>(
  url: string,
  path: string,
  params: Record<string, string | string[]>,
  init: { method?: 'GET' | 'POST'; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const item of Array.isArray(v) ? v : [v]) qs.append(k, item);
  const method = init.method ?? 'GET';
  const res = await fetchRetryingClosed(method === 'GET' ? `${url}${path}?${qs}` : `${url}${path}`, {
    method,
    headers: { ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...init.headers },
    body: method === 'POST' ? qs.toString() : undefined,
    signal: AbortSignal.timeout(60_000),
  });
  const json = (await res.json()) as Omit<ApiResponse<T>, 'httpStatus'>;
  return { httpStatus: res.status, ...json };
}

export interface MatrixSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

export interface VectorSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** n series × samples each, one sample every intervalMs from startMs, value = f(series, sample). */
export function generateSeries(
  metric: string,
  n: number,
  samples: number,
  startMs: number,
  intervalMs: number,
  value: (series: number, sample: number) => number = (s, i) => s * 1000 + i,
): SeriesInput[] {
  return Array.from({ length: n }, (_, s) => ({
    labels: [
      { name: '__name__', value: metric },
      { name: 'instance', value: `host-${s}` },
      { name: 'job', value: 'e2e' },
    ],
    samples: Array.from({ length: samples }, (_, i) => ({ value: value(s, i), timestamp: startMs + i * intervalMs })),
  }));
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      lastErr = err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}${lastErr ? `: ${(lastErr as Error).message}` : ''}`);
}
