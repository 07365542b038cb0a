// ULIDs name blocks: 48-bit ms time + 80 random bits in Crockford base32, so
// block names sort by creation time. Monotonic within a millisecond.

import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const MAX_TIME = 2 ** 48 - 1;

export interface UlidGeneratorDeps {
  now?: () => number;
  /** Fills the array with random bytes. */
  random?: (bytes: Uint8Array) => void;
}

/** Returns a generator whose ULIDs strictly increase, also within one millisecond. */
export function createUlidGenerator(deps: UlidGeneratorDeps = {}): () => string {
  const now = deps.now ?? Date.now;
  const random = deps.random ?? ((b: Uint8Array) => void randomFillSync(b));
  let lastTime = -1;
  const rand = new Uint8Array(10);
  return () => {
    let t = Math.floor(now());
    if (!(t >= 0 && t <= MAX_TIME)) throw new RangeError(`ULID time ${t} is outside 0..2^48-1`);
    if (t <= lastTime) {
      // Same (or an earlier) millisecond: keep the time, bump the randomness.
      t = lastTime;
      let i = 9;
      while (i >= 0 && rand[i] === 0xff) rand[i--] = 0;
      if (i < 0) throw new RangeError('ULID randomness overflow within one millisecond');
      rand[i]++;
    } else {
      random(rand);
      lastTime = t;
    }
    return encodeUlid(t, rand);
  };
}

export function encodeUlid(time: number, randomness: Uint8Array): string {
  let s = '';
  let t = time;
  const timeChars = new Array<string>(10);
  for (let i = 9; i >= 0; i--) {
    timeChars[i] = ALPHABET[t % 32];
    t = Math.floor(t / 32);
  }
  s = timeChars.join('');
  // 80 bits -> 16 chars of 5 bits, most significant first.
  let acc = 0;
  let bits = 0;
  for (let i = 0; i < 10; i++) {
    acc = (acc << 8) | randomness[i];
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      s += ALPHABET[(acc >>> bits) & 31];
    }
    acc &= (1 << bits) - 1;
  }
  return s;
}

const ULID_RE = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

export function isUlid(s: string): boolean {
  return ULID_RE.test(s);
}

/** The millisecond timestamp encoded in a ULID. */
export function ulidTime(s: string): number {
  if (!isUlid(s)) throw new RangeError(`not a ULID: ${s}`);
  let t = 0;
  for (let i = 0; i < 10; i++) t = t * 32 + ALPHABET.indexOf(s[i]);
  return t;
}
