// The head's series in the order format-3 records send them. A sender sends its series in
// much the same order every time, so the series that followed the previous one last time
// is tried first, by comparing the record's symbol ids with the ids its row was learned with:
// no hashing, no map probe, and none of the series' own objects read. Rows lie in the order
// they were learned, so a series met right after the one before it in the table costs
// little: its ids are next to those just read. When senders change their order the table
// starts over and is relearned in the new one (SendingOrder says when).

import { SendingOrder, grown } from '@strata/model';

/** What a row points at: the series, which remembers its row (-1: none). */
export interface RowSeries {
  row: number;
}

export class SeriesRows<T extends RowSeries> {
  private series: T[] = [];
  /** Row r's symbol ids are ids[start[r] .. start[r + 1]). */
  private start = new Int32Array(1025);
  private ids = new Int32Array(16 * 1024);
  /** Per row: 1 + the row that followed it last time (0: none yet). */
  private next = new Int32Array(1024);
  private count = 0;
  private previous = -1;
  /** When to start over to follow the senders' order (and how often it did). */
  readonly order = new SendingOrder();

  /** Before a record's series; `limit` bounds the rows (the table starts over past it). */
  begin(limit: number): void {
    this.previous = -1;
    if (this.count > limit || this.order.relearnNow(this.count)) this.startOver();
  }

  /** Forgets every row (the ids changed meaning, or series were dropped). */
  startOver(): void {
    for (let r = 0; r < this.count; r++) this.series[r].row = -1;
    this.series.length = 0;
    this.count = 0;
    this.previous = -1;
    this.order.restart();
  }

  /** The series that followed the previous one last time, if its row's ids are ids[refs[from..to)]. */
  guess(ids: Int32Array, refs: Uint32Array, from: number, to: number): T | undefined {
    const p = this.previous;
    if (p < 0) return undefined;
    const g = this.next[p] - 1;
    if (g < 0) return undefined;
    const s = this.start[g];
    if (this.start[g + 1] - s !== to - from) return undefined;
    const own = this.ids;
    for (let k = from; k < to; k++) if (own[s + k - from] !== ids[refs[k]]) return undefined;
    this.order.meet(g, p);
    this.previous = g;
    return this.series[g];
  }

  /** `series`, found otherwise after guess() missed: follows the previous one from now on, learned with ids[refs[from..to)] if it has no row. */
  found(series: T, ids: Int32Array, refs: Uint32Array, from: number, to: number): void {
    let r = series.row;
    if (r < 0) {
      r = this.add(series, ids, refs, from, to);
    } else if (this.previous >= 0) {
      this.order.meet(r, this.previous);
    }
    if (this.previous >= 0) this.next[this.previous] = r + 1;
    this.previous = r;
  }

  private add(series: T, ids: Int32Array, refs: Uint32Array, from: number, to: number): number {
    const r = this.count++;
    if (r + 1 >= this.start.length) this.start = grown(this.start, r + 2);
    if (r >= this.next.length) this.next = grown(this.next, r + 1);
    const at = this.start[r];
    const end = at + to - from;
    if (end > this.ids.length) this.ids = grown(this.ids, end);
    for (let k = from; k < to; k++) this.ids[at + k - from] = ids[refs[k]];
    this.start[r + 1] = end;
    this.next[r] = 0;
    this.series[r] = series;
    series.row = r;
    return r;
  }
}
