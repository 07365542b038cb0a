// The drill's HTTP calls: one remote-write push and one Prometheus API query, each with a
// deadline, classified the way a sender acts on them (retry or not). Never throws for a
// network or server failure: the caller records the reason.

export type PushOutcome =
  { kind: 'acked'; status: number } | { kind: 'retry'; reason: string; body?: string } | { kind: 'rejected'; reason: string; body: string };

export async function pushOnce(url: string, body: Uint8Array, tenant: string, timeoutMs: number): Promise<PushOutcome> {
  try {
    const res = await fetch(`${url}/api/v1/push`, {
      method: 'POST',
      body,
      headers: {
        'content-type': 'application/x-protobuf',
        'content-encoding': 'snappy',
        'x-prometheus-remote-write-version': '0.1.0',
        'x-scope-orgid': tenant,
      },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    if (res.status >= 200 && res.status < 300) return { kind: 'acked', status: res.status };
    // Prometheus' queue manager: 5xx and 429 are retried with backoff, any other answer drops the batch.
    if (res.status >= 500 || res.status === 429) return { kind: 'retry', reason: `http-${res.status}`, body: text.trim().slice(0, 500) };
    return { kind: 'rejected', reason: `http-${res.status}`, body: text.trim().slice(0, 300) };
  } catch (err) {
    return { kind: 'retry', reason: networkReason(err) };
  }
}

export interface MatrixSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

export type QueryOutcome = { ok: true; resultType: string; result: MatrixSeries[] } | { ok: false; reason: string };

/** GET /prometheus/api/v1/query (instant query) as the drill tenant. */
export function instantQuery(url: string, tenant: string, query: string, timeSeconds: number, timeoutMs: number): Promise<QueryOutcome> {
  return get(url, '/prometheus/api/v1/query', { query, time: String(timeSeconds) }, tenant, timeoutMs);
}

/** GET /prometheus/api/v1/query_range (what Grafana sends; the path the results cache serves). */
export function rangeQuery(
  url: string,
  tenant: string,
  query: string,
  range: { startSeconds: number; endSeconds: number; stepSeconds: number },
  timeoutMs: number,
): Promise<QueryOutcome> {
  const params = { query, start: String(range.startSeconds), end: String(range.endSeconds), step: String(range.stepSeconds) };
  return get(url, '/prometheus/api/v1/query_range', params, tenant, timeoutMs);
}

async function get(url: string, path: string, params: Record<string, string>, tenant: string, timeoutMs: number): Promise<QueryOutcome> {
  const qs = new URLSearchParams(params);
  try {
    const res = await fetch(`${url}${path}?${qs}`, {
      headers: { 'x-scope-orgid': tenant },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    if (res.status !== 200) return { ok: false, reason: `http-${res.status}: ${text.trim().slice(0, 300)}` };
    const json = JSON.parse(text) as { status: string; data: { resultType: string; result: MatrixSeries[] } };
    if (json.status !== 'success') return { ok: false, reason: `status ${json.status}` };
    return { ok: true, resultType: json.data.resultType, result: json.data.result };
  } catch (err) {
    return { ok: false, reason: networkReason(err) };
  }
}

function networkReason(err: unknown): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
  return e.cause?.code ?? e.cause?.message ?? e.message ?? String(err);
}
