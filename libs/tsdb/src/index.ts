export { Head, emptyAppendStats } from './head.ts';
export type { AppendStats } from './head.ts';
export { TenantHeads } from './tenant-heads.ts';
