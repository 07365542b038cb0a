// Public surface of @strata/ui: the operator's web UI and the data it renders.
export { registerUi } from './ui.ts';
export type { UiOptions } from './ui.ts';
export type { StatusPage, StatusSection, StatusValue, UiLink, UiInfo, StatusAnswer } from './types.ts';
export { DIST_DIR, UI_ROOT, listFiles, readManifest, sha256, sourcesDigest } from './manifest.ts';
export type { UiManifest } from './manifest.ts';
