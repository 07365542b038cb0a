// Label sets as every part of Strata sees them: sorted by name, names unique.
// Nothing here may reorder or copy labels on a hot path without saying so.

export interface Label {
  name: string;
  value: string;
}

/** Sorted by name, names unique, no empty values. */
export type Labels = Label[];

/**
 * A series' labels still in the bytes they arrived in, so hot paths can hash
 * and compare them without making strings: label i's name is
 * bytes[ranges[k]..ranges[k+1]) and its value bytes[ranges[k+2]..ranges[k+3]),
 * k = (firstLabel + i) * 4. `labels` decodes them (once). bytes[rawStart..rawEnd)
 * are the series' label fields as encoded, tags included, when they lie next to
 * each other (rawStart -1 when not): equal bytes there mean equal labels.
 */
export interface EncodedLabels {
  readonly bytes: Uint8Array;
  readonly ranges: Int32Array;
  readonly firstLabel: number;
  readonly labelCount: number;
  readonly rawStart: number;
  readonly rawEnd: number;
  readonly labels: Labels;
}

export const METRIC_NAME = '__name__';

export function metricName(labels: Labels): string | undefined {
  for (const l of labels) if (l.name === METRIC_NAME) return l.value;
  return undefined;
}

export function labelValue(labels: Labels, name: string): string | undefined {
  for (const l of labels) if (l.name === name) return l.value;
  return undefined;
}

/** A stable string key for a label set; labels must already be sorted. */
export function labelsKey(labels: Labels): string {
  let key = '';
  for (const l of labels) key += l.name + '\xff' + l.value + '\xfe';
  return key;
}

export function sortLabels(labels: Labels): Labels {
  return labels.slice().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

export function labelsFromRecord(record: Record<string, string>): Labels {
  return sortLabels(Object.entries(record).map(([name, value]) => ({ name, value })));
}

export function labelsToRecord(labels: Labels): Record<string, string> {
  const out: Record<string, string> = {};
  for (const l of labels) out[l.name] = l.value;
  return out;
}

/**
 * Go's string comparison: by UTF-8 bytes, which for well-formed strings is
 * code-point order. It differs from JS `<` (UTF-16 units) only where a
 * supplementary character meets one in U+E000..U+FFFF.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 || y >= 0xd800) {
      // Surrogates (supplementary characters) sort after U+E000..U+FFFF in code-point order.
      x = x >= 0xe000 ? x - 0x800 : x >= 0xd800 ? x + 0x2000 : x;
      y = y >= 0xe000 ? y - 0x800 : y >= 0xd800 ? y + 0x2000 : y;
    }
    return x - y;
  }
  return a.length - b.length;
}

/** Prometheus' labels.Compare: names then values, byte-wise, pair by pair; the shorter set first on a tie. */
export function compareLabels(a: Labels, b: Labels): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    if (a[i].name !== b[i].name) return compareUtf8(a[i].name, b[i].name);
    if (a[i].value !== b[i].value) return compareUtf8(a[i].value, b[i].value);
  }
  return a.length - b.length;
}
