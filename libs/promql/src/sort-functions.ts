// sort(), sort_desc(), sort_by_label() and sort_by_label_desc() as Prometheus
// orders them (promql/functions.go): Go's sort.Sort over the reversed value
// heaps, and slices.SortFunc over natural label order then the whole label
// set. Both are unstable pdqsorts, so ties (and NaN, whose Less is
// inconsistent) come out in Go's order only when the same swaps are made.

import { compareLabels } from '@strata/model';
import { goReverse, goSort, reverseValueLess, valueLess, type GoSortable } from './go-sort.ts';
import { getLabel } from './labels.ts';
import { naturalLess } from './natsort.ts';
import type { EvalSample, EvalVector } from './values.ts';

/**
 * sort() ascending: sort.Reverse of vectorByReverseValueHeap, so NaN sorts last;
 * sort_desc() descending: sort.Reverse of vectorByValueHeap, NaN last too.
 */
export function sortByValue(floats: EvalVector, desc: boolean): EvalVector {
  const order = new ValueOrder(floats, desc ? valueLess : reverseValueLess);
  goSort(goReverse(order), floats.length);
  return Array.from(order.index, (i) => floats[i]);
}

/** The samples' values and their positions, swapped together (typed arrays: sort() may see every series). */
class ValueOrder implements GoSortable {
  readonly index: Int32Array;
  private readonly values: Float64Array;
  private readonly lessValue: (a: number, b: number) => boolean;

  constructor(samples: EvalVector, lessValue: (a: number, b: number) => boolean) {
    this.values = Float64Array.from(samples, (s) => s.f);
    this.index = Int32Array.from(samples, (_, i) => i);
    this.lessValue = lessValue;
  }

  less(i: number, j: number): boolean {
    return this.lessValue(this.values[i], this.values[j]);
  }

  swap(i: number, j: number): void {
    const { values, index } = this;
    const v = values[i];
    values[i] = values[j];
    values[j] = v;
    const k = index[i];
    index[i] = index[j];
    index[j] = k;
  }
}

/** sort_by_label(_desc): natural order of the given labels, then the whole label set (reversed for _desc). */
export function sortByLabel(vec: EvalVector, names: string[], desc: boolean): EvalVector {
  const out = vec.slice();
  const cmp = (a: EvalSample, b: EvalSample): number => {
    for (const name of names) {
      const va = getLabel(a.metric, name);
      const vb = getLabel(b.metric, name);
      if (va === vb) continue;
      // natsort.Compare can call two different values each less than the other ("01", "1"): keep its answer as is.
      return naturalLess(va, vb) === desc ? 1 : -1;
    }
    return desc ? -compareLabels(a.metric, b.metric) : compareLabels(a.metric, b.metric);
  };
  const sortable: GoSortable = {
    less: (i, j) => cmp(out[i], out[j]) < 0,
    swap: (i, j) => {
      const t = out[i];
      out[i] = out[j];
      out[j] = t;
    },
  };
  goSort(sortable, out.length);
  return out;
}
