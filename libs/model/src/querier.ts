// The one seam every reader implements: the head, an ingester client, a block
// reader and the merged querier all answer the same questions.

import type { Labels } from './labels.ts';
import type { Matcher } from './matchers.ts';

/** One series' samples in time order; timestamps in milliseconds. */
export interface Series {
  labels: Labels;
  timestamps: Float64Array;
  values: Float64Array;
}

export interface SelectParams {
  tenant: string;
  matchers: Matcher[];
  /** Inclusive bounds in milliseconds. */
  mint: number;
  maxt: number;
}

export interface LabelValuesParams extends SelectParams {
  name: string;
}

export interface Querier {
  select(params: SelectParams): Promise<Series[]>;
  /** Label names of series matching the matchers (all series when matchers are empty). */
  labelNames(params: SelectParams): Promise<string[]>;
  labelValues(params: LabelValuesParams): Promise<string[]>;
}
