// The promqltest notation of a native histogram, e.g.
// {{schema:1 sum:5 count:4 z_bucket:1 z_bucket_w:0.001 buckets:[1 2] offset:1
//   n_buckets:[1] n_offset:-1 custom_values:[1 5] counter_reset_hint:gauge}},
// parsed into a FloatHistogram as Prometheus' series-description parser builds it.

import { parseGoFloat } from '../go-compat.ts';
import type { CounterResetHint } from './float-histogram.ts';
import { FloatHistogram } from './float-histogram.ts';
import { CUSTOM_BUCKETS_SCHEMA } from './buckets.ts';

const HINTS: Record<string, CounterResetHint> = { unknown: 'unknown', reset: 'reset', not_reset: 'not_reset', gauge: 'gauge' };

export function parseHistogramNotation(text: string): FloatHistogram {
  const body = text.trim();
  if (!body.startsWith('{{') || !body.endsWith('}}')) throw new Error(`not a histogram: ${text}`);
  const fields = new Map<string, string | number[]>();
  const re = /\s*([a-z_]+)\s*:\s*(\[[^\]]*\]|[^\s\]]+)/gy;
  const inner = body.slice(2, -2);
  let pos = 0;
  for (;;) {
    re.lastIndex = pos;
    const m = re.exec(inner);
    if (!m) break;
    const [, key, raw] = m;
    if (fields.has(key)) throw new Error(`duplicate key "${key}" in histogram ${text}`);
    fields.set(key, raw.startsWith('[') ? numberList(raw, text) : raw);
    pos = re.lastIndex;
  }
  if (inner.slice(pos).trim() !== '') throw new Error(`cannot parse histogram ${text} at ${JSON.stringify(inner.slice(pos))}`);

  const h = new FloatHistogram();
  const num = (key: string): number | undefined => {
    const v = fields.get(key);
    if (v === undefined) return undefined;
    if (Array.isArray(v)) throw new Error(`"${key}" must be a number in histogram ${text}`);
    const n = parseGoFloat(v);
    if (n === undefined) throw new Error(`bad number for "${key}" in histogram ${text}: ${v}`);
    return n;
  };
  const list = (key: string): number[] | undefined => {
    const v = fields.get(key);
    if (v === undefined) return undefined;
    if (!Array.isArray(v)) throw new Error(`"${key}" must be a list in histogram ${text}`);
    return v;
  };
  for (const key of fields.keys()) {
    if (
      !['schema', 'sum', 'count', 'z_bucket', 'z_bucket_w', 'buckets', 'offset', 'n_buckets', 'n_offset', 'custom_values', 'counter_reset_hint'].includes(key)
    ) {
      throw new Error(`unknown key "${key}" in histogram ${text}`);
    }
  }
  h.schema = num('schema') ?? 0;
  h.sum = num('sum') ?? 0;
  h.count = num('count') ?? 0;
  h.zeroCount = num('z_bucket') ?? 0;
  h.zeroThreshold = num('z_bucket_w') ?? 0;
  const hint = fields.get('counter_reset_hint');
  if (hint !== undefined) {
    if (Array.isArray(hint) || !HINTS[hint]) throw new Error(`bad counter_reset_hint in histogram ${text}`);
    h.counterResetHint = HINTS[hint];
  }
  const cv = list('custom_values');
  if (cv) {
    h.customValues = cv;
    if (fields.get('schema') === undefined) h.schema = CUSTOM_BUCKETS_SCHEMA;
  }
  const pos_ = list('buckets');
  if (pos_ && pos_.length > 0) {
    h.positiveBuckets = pos_;
    h.positiveSpans = [{ offset: num('offset') ?? 0, length: pos_.length }];
  }
  const neg = list('n_buckets');
  if (neg && neg.length > 0) {
    h.negativeBuckets = neg;
    h.negativeSpans = [{ offset: num('n_offset') ?? 0, length: neg.length }];
  }
  return h;
}

function numberList(raw: string, text: string): number[] {
  const inner = raw.slice(1, -1).trim();
  if (inner === '') return [];
  return inner.split(/[\s,]+/).map((s) => {
    const n = parseGoFloat(s);
    if (n === undefined) throw new Error(`bad number ${JSON.stringify(s)} in histogram ${text}`);
    return n;
  });
}
