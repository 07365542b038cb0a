// Small timing helpers shared by the drill parts.

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function seconds(ms: number): number {
  return Math.round(ms / 10) / 100;
}
