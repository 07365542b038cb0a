export const PROMETHEUS3_VERSION: string;
export const PROMETHEUS3_DIR: string;
export function fetchPrometheus3(): void;
