// Tables that keep series in the order they first met them (the distributor's known series,
// a head's rows) are cheap to walk while senders keep that order: the next series is next in
// memory. A sender that changes its order (Prometheus resharding, a restart) meets every
// series somewhere else, a cache miss each. SendingOrder watches a table's rounds (as many
// series met as the table holds) and says when to start it over, so it is relearned in the
// senders' order; when the next round is just as scattered (an order that changes every
// time), it waits 1, 2, 4 … rounds before it says so again.

/** Rounds skipped at most between two relearnings while each one leaves the order scattered. */
const MAX_RELEARN_BACKOFF = 64;

export class SendingOrder {
  /** Known entries met this round right after another of the same batch, and those of them not stored right after it. */
  private met = 0;
  private scattered = 0;
  /** Scattered rounds to let pass before the next relearning, and the wait after the next one. */
  private wait = 0;
  private backoff = 1;
  /** Times the table was told to start over. */
  relearnings = 0;

  /** Entry `id` of the table was met right after entry `previous` (both known, in one batch). */
  meet(id: number, previous: number): void {
    this.met++;
    if (id !== previous + 1) this.scattered++;
  }

  /** Before a batch, with the entries the table holds: whether to start it over now (most of a round was met out of table order). */
  relearnNow(entries: number): boolean {
    if (this.met < entries || this.met === 0) return false;
    const scattered = this.scattered * 2 > this.met;
    this.met = this.scattered = 0;
    if (!scattered) {
      this.wait = 0;
      this.backoff = 1;
      return false;
    }
    if (this.wait > 0) {
      this.wait--;
      return false;
    }
    this.wait = this.backoff;
    this.backoff = Math.min(MAX_RELEARN_BACKOFF, 2 * this.backoff);
    this.relearnings++;
    return true;
  }

  /** The table started over (for any reason): a new round begins. */
  restart(): void {
    this.met = this.scattered = 0;
  }
}
