// Parameter parsing with Prometheus' rules: times as unix seconds or RFC 3339,
// durations as Prometheus durations or float seconds.

import type { Matcher } from '@strata/model';
import { parseSelector } from '@strata/promql';
import { parseDuration } from '@strata/service';
import { badData } from './errors.ts';

// Prometheus' min/max times for "no bound" (what its API prints back, too).
export const MIN_TIME = -9223309901257974;
export const MAX_TIME = 9223309901257974;

export function parseTime(value: string | null, name: string, fallback: number): number {
  if (value === null || value === '') return fallback;
  if (/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(value)) {
    return Math.round(Number(value) * 1000);
  }
  const ms = Date.parse(value);
  if (!Number.isNaN(ms) && /^\d{4}-\d\d-\d\dT/.test(value)) return ms;
  throw badData(`invalid parameter "${name}": cannot parse "${value}" to a valid timestamp`);
}

/** A duration parameter (Prometheus duration or float seconds) that must be positive. */
export function parseDurationParam(value: string, name: string): number {
  const ms = parseStep(value, name);
  if (!(ms > 0)) throw badData(`invalid parameter "${name}": cannot parse "${value}" to a valid duration`);
  return ms;
}

export function parseStep(value: string | null, name: string): number {
  if (value === null || value === '') throw badData(`invalid parameter "${name}": cannot parse "" to a valid duration`);
  let ms: number;
  if (/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(value)) ms = Math.round(Number(value) * 1000);
  else {
    try {
      ms = parseDuration(value);
    } catch {
      throw badData(`invalid parameter "${name}": cannot parse "${value}" to a valid duration`);
    }
  }
  return ms;
}

export function required(p: URLSearchParams, name: string): string {
  const v = p.get(name);
  if (v === null || v === '') throw badData(`invalid parameter "${name}": missing ${name}`);
  return v;
}

export function range(p: URLSearchParams): { mint: number; maxt: number } {
  const mint = parseTime(p.get('start'), 'start', MIN_TIME);
  const maxt = parseTime(p.get('end'), 'end', MAX_TIME);
  if (maxt < mint) throw badData('invalid parameter "end": end timestamp must not be before start time');
  return { mint, maxt };
}

export function matchParams(p: URLSearchParams, requireOne: boolean): Matcher[][] {
  const raw = p.getAll('match[]');
  if (raw.length === 0 && requireOne) throw badData('no match[] parameter provided');
  return raw.map((s) => {
    try {
      return parseSelector(s);
    } catch (err) {
      throw badData(`invalid parameter "match[]": ${(err as Error).message}`);
    }
  });
}

/**
 * A label name from a URL path as Prometheus 3 reads it: `U__` starts a name in
 * its value-encoding escape (`_2e_` is U+002E, `__` is `_`), so that
 * `/api/v1/label/U__service_2e_name/values` asks for `service.name`. A name
 * without the prefix, or one whose escapes do not decode, is taken as it is.
 */
export function unescapeLabelName(name: string): string {
  if (!name.startsWith('U__')) return name;
  const s = name.slice(3);
  let out = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '_') {
      out += s[i];
      continue;
    }
    if (s[i + 1] === '_') {
      out += '_';
      i++;
      continue;
    }
    const end = s.indexOf('_', i + 1);
    const hex = end < 0 ? '' : s.slice(i + 1, end);
    const code = /^[0-9a-fA-F]{1,6}$/.test(hex) ? parseInt(hex, 16) : NaN;
    if (!(code <= 0x10ffff) || (code >= 0xd800 && code <= 0xdfff)) return name;
    out += String.fromCodePoint(code);
    i = end;
  }
  return out;
}
