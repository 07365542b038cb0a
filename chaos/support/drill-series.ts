// The synthetic series a drill writes and reads back: names, groups (the unit of a query)
// and the value of every sample, unique per (series, tick) so a misplaced sample is caught.

import type { Label } from '@strata/model';

const DRILL_METRIC = 'strata_drill_samples';
export const DRILL_TENANT = 'strata-drill';

export class DrillSeries {
  private readonly labelSets: Label[][];
  private readonly byGroup: number[][];

  readonly drillId: string;
  readonly count: number;
  readonly groups: number;

  constructor(drillId: string, count: number, groups: number) {
    this.drillId = drillId;
    this.count = count;
    this.groups = groups;
    this.byGroup = Array.from({ length: groups }, () => []);
    this.labelSets = Array.from({ length: count }, (_, i) => {
      this.byGroup[i % groups].push(i);
      // Sorted by name, as remote write requires.
      return [
        { name: '__name__', value: DRILL_METRIC },
        { name: 'drill', value: drillId },
        { name: 'group', value: groupName(i % groups) },
        { name: 'series', value: seriesName(i) },
      ];
    });
  }

  labels(series: number): Label[] {
    return this.labelSets[series];
  }

  seriesOfGroup(group: number): readonly number[] {
    return this.byGroup[group];
  }

  selector(group: number): string {
    return `${DRILL_METRIC}{drill="${this.drillId}",group="${groupName(group)}"}`;
  }

  /** The series index of a query result's label set, or undefined if it is not one of ours. */
  indexOf(metric: Record<string, string>): number | undefined {
    if (metric.drill !== this.drillId) return undefined;
    const m = /^s(\d+)$/.exec(metric.series ?? '');
    const i = m ? Number(m[1]) : NaN;
    return Number.isInteger(i) && i < this.count ? i : undefined;
  }

  /** Exactly representable, unique per (series, tick); the .25 keeps it from being an integer. */
  value(series: number, tick: number): number {
    return tick * 100_000 + series + 0.25;
  }
}

function groupName(g: number): string {
  return `g${String(g).padStart(3, '0')}`;
}

function seriesName(i: number): string {
  return `s${String(i).padStart(5, '0')}`;
}
