// The error registry of the PromQL engine: every error a query can end in, each
// a StrataError of the kind the API edge maps to Prometheus' errorType and status
// (bad-input → bad_data, unprocessable → execution, timeout, canceled). No
// transport vocabulary here; nothing else in this lib may throw a bare Error at a caller.

import { StrataError } from '@strata/errors';

export abstract class PromQLError extends StrataError {}

/** A 0-based offset range into the query string (UTF-16 code units). */
export interface PositionRange {
  start: number;
  end: number;
}

/**
 * The query does not parse or does not type-check. The message is Prometheus'
 * (`1:14: parse error: unexpected "}" in label matching, expected string`):
 * line and column are 1-based, the column counted in bytes as Go does.
 */
export class PromQLParseError extends PromQLError {
  /** The message without the `line:col: parse error: ` prefix. */
  readonly detail: string;
  readonly positionRange: PositionRange;
  readonly line: number;
  readonly column: number;
  readonly query: string;

  constructor(query: string, positionRange: PositionRange, detail: string) {
    const { line, column } = goLineColumn(query, positionRange.start);
    super('promql-parse', 'bad-input', `${query === '' ? 'unknown position' : `${line}:${column}`}: parse error: ${detail}`);
    this.name = 'PromQLParseError';
    this.detail = detail;
    this.positionRange = positionRange;
    this.line = line;
    this.column = column;
    this.query = query;
  }
}

/** A request parameter other than the expression is unusable (bad step, end before start, wrong result type). */
export class PromQLBadDataError extends PromQLError {
  constructor(message: string) {
    super('promql-bad-data', 'bad-input', message);
    this.name = 'PromQLBadDataError';
  }
}

/** The query parsed but failed while evaluating (too many samples, duplicate label sets, bad arguments). */
export class PromQLExecutionError extends PromQLError {
  constructor(message: string) {
    super('promql-execution', 'unprocessable', message);
    this.name = 'PromQLExecutionError';
  }
}

/** The query ran past its deadline (kind timeout) or the caller aborted it (kind canceled). */
export class PromQLTimeoutError extends PromQLError {
  readonly reason: 'timeout' | 'canceled';

  constructor(reason: 'timeout' | 'canceled', where: string) {
    super(
      reason === 'timeout' ? 'promql-timeout' : 'promql-canceled',
      reason,
      reason === 'timeout' ? `query timed out in ${where}` : `query was canceled in ${where}`,
    );
    this.name = 'PromQLTimeoutError';
    this.reason = reason;
  }
}

/** Line and byte column of a UTF-16 offset, as Prometheus' PositionRange.StartPosInput computes them. */
function goLineColumn(query: string, offset: number): { line: number; column: number } {
  const before = query.slice(0, Math.max(0, Math.min(offset, query.length)));
  const lastBreak = before.lastIndexOf('\n');
  const line = before.split('\n').length;
  const column = Buffer.byteLength(before.slice(lastBreak + 1)) + 1;
  return { line, column };
}
