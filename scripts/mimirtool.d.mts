export const MIMIR_VERSION: string;
export const MIMIRTOOL: string;
export function fetchMimirtool(): void;
