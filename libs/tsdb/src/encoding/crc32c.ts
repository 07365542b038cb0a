// CRC-32C (Castagnoli), the checksum of every TSDB index section, chunk and
// tombstones file. Slice-by-8 tables; result is an unsigned 32-bit number.

const POLY = 0x82f63b78;
const T = new Int32Array(8 * 256);

for (let i = 0; i < 256; i++) {
  let c = i;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
  T[i] = c;
}
for (let i = 0; i < 256; i++) {
  for (let s = 1; s < 8; s++) {
    const prev = T[(s - 1) * 256 + i];
    T[s * 256 + i] = (prev >>> 8) ^ T[prev & 0xff];
  }
}

/** Continues a CRC-32C over bytes[start, end); pass the previous result as `crc` to chain. */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length, crc = 0): number {
  let c = ~crc;
  let i = start;
  while (i + 8 <= end) {
    const a = c ^ (bytes[i] | (bytes[i + 1] << 8) | (bytes[i + 2] << 16) | (bytes[i + 3] << 24));
    c =
      T[7 * 256 + (a & 0xff)] ^
      T[6 * 256 + ((a >>> 8) & 0xff)] ^
      T[5 * 256 + ((a >>> 16) & 0xff)] ^
      T[4 * 256 + (a >>> 24)] ^
      T[3 * 256 + bytes[i + 4]] ^
      T[2 * 256 + bytes[i + 5]] ^
      T[256 + bytes[i + 6]] ^
      T[bytes[i + 7]];
    i += 8;
  }
  while (i < end) {
    c = (c >>> 8) ^ T[(c ^ bytes[i]) & 0xff];
    i++;
  }
  return ~c >>> 0;
}
