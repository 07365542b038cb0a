// A tenant's exemplars in one circular buffer of fixed capacity (Prometheus'
// CircularExemplarStorage): the oldest exemplar is overwritten first. Each
// series remembers the slot of its newest exemplar so an exemplar older than
// it is rejected and an identical one is a no-op (idempotent replay).

import type { Labels } from '@strata/model';

export interface ExemplarInput {
  labels: Labels;
  value: number;
  /** Milliseconds. */
  timestamp: number;
}

export interface Exemplar {
  labels: Labels;
  value: number;
  timestamp: number;
}

/** Something exemplars hang off: the head's series object. */
export interface ExemplarOwner {
  exemplarSlot: number;
}

export type ExemplarAppend = 'added' | 'duplicate' | 'out-of-order' | 'invalid' | 'disabled';

/** Prometheus' limit on the combined length of an exemplar's label names and values (runes). */
const MAX_EXEMPLAR_LABELS_LENGTH = 128;

export class ExemplarStorage<S extends ExemplarOwner = ExemplarOwner> {
  private readonly ts: Float64Array;
  private readonly vals: Float64Array;
  private readonly owners: (S | null)[];
  private readonly labels: (Labels | null)[];
  private next = 0;
  private size = 0;

  readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = capacity;
    this.ts = new Float64Array(capacity);
    this.vals = new Float64Array(capacity);
    this.owners = new Array<S | null>(capacity).fill(null);
    this.labels = new Array<Labels | null>(capacity).fill(null);
  }

  get length(): number {
    return this.size;
  }

  add(owner: S, e: ExemplarInput): ExemplarAppend {
    if (this.capacity === 0) return 'disabled';
    let len = 0;
    for (const l of e.labels) len += [...l.name].length + [...l.value].length;
    if (len > MAX_EXEMPLAR_LABELS_LENGTH || !Number.isFinite(e.timestamp)) return 'invalid';
    const last = owner.exemplarSlot;
    if (last >= 0 && this.owners[last] === owner) {
      const lt = this.ts[last];
      if (e.timestamp < lt) return 'out-of-order';
      if (e.timestamp === lt && Object.is(this.vals[last], e.value) && sameLabels(this.labels[last] as Labels, e.labels)) return 'duplicate';
    }
    const slot = this.next;
    this.ts[slot] = e.timestamp;
    this.vals[slot] = e.value;
    this.owners[slot] = owner;
    this.labels[slot] = e.labels;
    owner.exemplarSlot = slot;
    this.next = (slot + 1) % this.capacity;
    if (this.size < this.capacity) this.size++;
    return 'added';
  }

  /** Exemplars of the given owners with start <= t <= end, oldest first, grouped by owner. */
  select(owners: ReadonlySet<S>, start: number, end: number): Map<S, Exemplar[]> {
    const out = new Map<S, Exemplar[]>();
    const first = (this.next - this.size + this.capacity) % Math.max(1, this.capacity);
    for (let k = 0; k < this.size; k++) {
      const i = (first + k) % this.capacity;
      const o = this.owners[i];
      if (o === null || !owners.has(o)) continue;
      const t = this.ts[i];
      if (t < start || t > end) continue;
      let list = out.get(o);
      if (!list) out.set(o, (list = []));
      list.push({ labels: this.labels[i] as Labels, value: this.vals[i], timestamp: t });
    }
    return out;
  }
}

function sameLabels(a: Labels, b: Labels): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i].name !== b[i].name || a[i].value !== b[i].value) return false;
  return true;
}
