// OTLP AnyValue -> the string a Prometheus label carries, as pdata's
// Value.AsString() prints it: strings as is, ints in decimal, doubles as ES6
// (and Go's encoding/json) print them, bytes in base64, arrays and maps as JSON
// (map keys sorted, <>& escaped as Go does).

/** A decoded AnyValue; `null` is an AnyValue with no value set. */
export type RawValue = string | boolean | bigint | number | Uint8Array | RawValue[] | RawMap | null;

export class RawMap {
  readonly entries: [string, RawValue][];

  constructor(entries: [string, RawValue][]) {
    this.entries = entries;
  }
}

/** Deeper nesting than this is an attack, not an attribute. */
export const MAX_VALUE_DEPTH = 32;

export function valueAsString(v: RawValue): string {
  if (v === null) return '';
  switch (typeof v) {
    case 'string':
      return v;
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'number':
      return formatDouble(v);
  }
  if (v instanceof Uint8Array) return Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64');
  return goJson(v);
}

function formatDouble(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  return String(v);
}

function goJson(v: RawValue): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return goQuote(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'bigint':
      return v.toString();
    case 'number':
      return Number.isFinite(v) ? String(v) : 'null';
  }
  if (v instanceof Uint8Array) return goQuote(Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString('base64'));
  if (Array.isArray(v)) return '[' + v.map(goJson).join(',') + ']';
  const entries = [...v.entries].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return '{' + entries.map(([k, x]) => goQuote(k) + ':' + goJson(x)).join(',') + '}';
}

function goQuote(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0'));
}
