export const TELEMETRYGEN_VERSION: string;
export const TELEMETRYGEN: string;
export function fetchTelemetrygen(): void;
