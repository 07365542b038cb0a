// Prometheus' stale marker is one particular NaN; it must reach the head with
// its exact bits, so it is only ever compared as bits, never as a JS number.

/** The bits of Prometheus' stale-marker NaN (`value.StaleNaN`). */
export const STALE_NAN_BITS = 0x7ff0000000000002n;

/** True if `values[i]` holds exactly the stale-marker bits (not just any NaN). */
export function isStaleNaN(values: Float64Array, i: number): boolean {
  const v = values[i];
  if (v === v) return false; // not NaN: the common case, no allocation
  return new BigUint64Array(values.buffer, values.byteOffset + i * 8, 1)[0] === STALE_NAN_BITS;
}
