// Natural ordering of label values, as github.com/facette/natsort orders them
// for sort_by_label(): runs of digits compare as integers, other runs as strings
// (byte-wise, as Go compares strings).

import { compareUtf8 } from '@strata/model';

const CHUNK = /(\d+|\D+)/g;

/** True when a precedes b in natural order (natsort.Compare). */
export function naturalLess(a: string, b: string): boolean {
  const ca = a.match(CHUNK) ?? [];
  const cb = b.match(CHUNK) ?? [];
  for (let i = 0; i < ca.length; i++) {
    if (i >= cb.length) return false;
    const ai = goAtoi(ca[i]);
    const bi = goAtoi(cb[i]);
    if (ai !== undefined && bi !== undefined) {
      if (ai === bi) {
        if (i === ca.length - 1) return true;
        if (i === cb.length - 1) return false;
        continue;
      }
      return ai < bi;
    }
    if (ca[i] === cb[i]) {
      if (i === ca.length - 1) return true;
      if (i === cb.length - 1) return false;
      continue;
    }
    return compareUtf8(ca[i], cb[i]) < 0;
  }
  return false;
}

/** strconv.Atoi on a run of ASCII digits; undefined when it is not one or overflows int64. */
function goAtoi(s: string): bigint | undefined {
  if (!/^\d+$/.test(s)) return undefined;
  const n = BigInt(s);
  return n > 9223372036854775807n ? undefined : n;
}
