export const FAKE_GCS_SERVER_VERSION: string;
export const FAKE_GCS_SERVER: string;
export function fetchFakeGcsServer(): void;
