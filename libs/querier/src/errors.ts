// API errors in Prometheus' vocabulary: errorType plus the HTTP status it maps to.

export type ErrorType = 'bad_data' | 'execution' | 'timeout' | 'canceled' | 'internal' | 'unavailable' | 'not_found';

const STATUS: Record<ErrorType, number> = {
  bad_data: 400,
  execution: 422,
  timeout: 503,
  canceled: 499,
  internal: 500,
  unavailable: 503,
  not_found: 404,
};

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly errorType: ErrorType,
    message: string,
    status?: number,
  ) {
    super(message);
    this.status = status ?? STATUS[errorType];
  }
}

export const badData = (message: string) => new ApiError('bad_data', message);
