// The pod runner: a rendered kustomize overlay run as a kubelet would, in Linux namespaces (runner.ts).
export { PodRunner, EvictionRefused } from './runner.ts';
export { renderOverlay } from './manifests.ts';
