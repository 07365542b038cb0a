// Reads a /metrics page (Prometheus text format) for assertions: the sum of every sample of a
// name whose labels include the given ones, or undefined when no such sample exists.

export interface MetricsPage {
  text: string;
  /** Sum over matching samples; undefined when none match. */
  sum(name: string, labels?: Record<string, string>): number | undefined;
  /** Whether the page declares the metric family (# TYPE line), samples or not. */
  declares(name: string): boolean;
}

export async function scrape(url: string): Promise<MetricsPage> {
  const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) });
  if (res.status !== 200) throw new Error(`${url}/metrics answered ${res.status}`);
  return parseMetrics(await res.text());
}

function parseMetrics(text: string): MetricsPage {
  const samples: { name: string; labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (!m) throw new Error(`unparseable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return {
    text,
    sum(name, want = {}) {
      const hits = samples.filter((s) => s.name === name && Object.entries(want).every(([k, v]) => s.labels[k] === v));
      return hits.length === 0 ? undefined : hits.reduce((a, s) => a + s.value, 0);
    },
    declares(name) {
      return new RegExp(`^# TYPE ${name} `, 'm').test(text);
    },
  };
}
