// The range query's graph: one uPlot line per series on the step grid, gaps as gaps.

import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom.ts';

export interface RangeSeries {
  metric: Record<string, string>;
  values?: [number, string][];
}

const PALETTE = ['#3366cc', '#dc3912', '#ff9900', '#109618', '#990099', '#0099c6', '#dd4477', '#66aa00', '#b82e2e', '#316395'];
const MAX_SERIES = 200;

export function seriesName(metric: Record<string, string>): string {
  const { __name__: name, ...rest } = metric;
  const labels = Object.entries(rest).map(([k, v]) => `${k}=${JSON.stringify(v)}`);
  return `${name ?? ''}{${labels.join(', ')}}`;
}

export function drawGraph(holder: HTMLElement, result: RangeSeries[], grid: { start: number; end: number; step: number }): void {
  if (result.length === 0) {
    holder.append(h('p', { class: 'muted' }, 'Empty query result.'));
    return;
  }
  const shown = result.slice(0, MAX_SERIES);
  const n = Math.floor((grid.end - grid.start) / grid.step) + 1;
  const xs = Array.from({ length: n }, (_, i) => grid.start + i * grid.step);
  const ys = shown.map((s) => {
    const col: (number | null)[] = new Array<number | null>(n).fill(null);
    for (const [t, v] of s.values ?? []) {
      const i = Math.round((t - grid.start) / grid.step);
      if (i >= 0 && i < n) col[i] = Number(v);
    }
    return col;
  });
  const width = Math.max(300, holder.clientWidth || 900);
  const opts: uPlot.Options = {
    width,
    height: 360,
    series: [
      {},
      ...shown.map((s, i) => ({ label: seriesName(s.metric), stroke: PALETTE[i % PALETTE.length], width: 1.5, spanGaps: false, points: { show: false } })),
    ],
    axes: [{}, { size: 70 }],
    scales: { x: { time: true } },
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
  };
  const plot = new uPlot(opts, [xs, ...ys], holder);
  if (result.length > MAX_SERIES) holder.prepend(h('div', { class: 'warning' }, `showing ${MAX_SERIES} of ${result.length} series`));
  const resize = () => plot.setSize({ width: Math.max(300, holder.clientWidth), height: 360 });
  window.addEventListener('resize', resize);
  new MutationObserver((_m, obs) => {
    if (!holder.isConnected) {
      window.removeEventListener('resize', resize);
      plot.destroy();
      obs.disconnect();
    }
  }).observe(document.body, { childList: true, subtree: true });
}
