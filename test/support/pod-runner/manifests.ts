// The rendered manifests the pod runner reads: `kubectl kustomize <overlay>` parsed into the few
// fields a kubelet and the controllers act on. Plain data; unknown fields are ignored.
import { spawnSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';

interface ObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    fieldRef?: { fieldPath: string };
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    resourceFieldRef?: { resource: string };
  };
}

export interface Probe {
  httpGet?: { path?: string; port: string | number; host?: string };
  tcpSocket?: { port: string | number };
  exec?: { command: string[] };
  initialDelaySeconds?: number;
  periodSeconds?: number;
  timeoutSeconds?: number;
  failureThreshold?: number;
  successThreshold?: number;
}

interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  fsGroup?: number;
  readOnlyRootFilesystem?: boolean;
}

export interface Container {
  name: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  envFrom?: { prefix?: string; secretRef?: { name: string }; configMapRef?: { name: string } }[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] }; httpGet?: { path?: string; port: string | number }; sleep?: { seconds: number } } };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; subPath?: string }[];
  securityContext?: SecurityContext;
  resources?: { requests?: Record<string, string>; limits?: Record<string, string> };
}

interface Volume {
  name: string;
  emptyDir?: object;
  configMap?: { name: string; items?: { key: string; path: string }[] };
  secret?: { secretName: string; items?: { key: string; path: string }[] };
  persistentVolumeClaim?: { claimName: string };
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  securityContext?: SecurityContext;
  terminationGracePeriodSeconds?: number;
  restartPolicy?: 'Always' | 'OnFailure' | 'Never';
  enableServiceLinks?: boolean;
  hostname?: string;
  subdomain?: string;
}

export interface PodTemplate {
  metadata: { labels?: Record<string, string> };
  spec: PodSpec;
}

export interface LabelSelector {
  matchLabels?: Record<string, string>;
}

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  // Narrowed by kind through the accessors below.
  spec?: unknown;
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

export interface WorkloadSpec {
  replicas?: number;
  serviceName?: string;
  podManagementPolicy?: 'OrderedReady' | 'Parallel';
  selector: LabelSelector;
  template: PodTemplate;
  volumeClaimTemplates?: { metadata: { name: string } }[];
  backoffLimit?: number;
}

export interface ServiceSpec {
  clusterIP?: string;
  publishNotReadyAddresses?: boolean;
  selector?: Record<string, string>;
  ports: { name?: string; port: number; targetPort?: string | number }[];
}

export interface PdbSpec {
  maxUnavailable?: number | string;
  minAvailable?: number | string;
  selector: LabelSelector;
}

export interface HpaSpec {
  scaleTargetRef: { kind: string; name: string };
  minReplicas?: number;
  maxReplicas: number;
}

/** `kubectl kustomize <dir>`: every object of the overlay, in order. */
export function renderOverlay(dir: string, kubectl = process.env.KUBECTL ?? 'kubectl'): K8sObject[] {
  const r = spawnSync(kubectl, ['kustomize', dir], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`kubectl kustomize ${dir} failed (${r.status}): ${r.stderr}`);
  return parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as K8sObject | null)
    .filter((o): o is K8sObject => o !== null && typeof o === 'object');
}

export function matches(selector: LabelSelector | Record<string, string> | undefined, labels: Record<string, string>): boolean {
  const want = (selector && 'matchLabels' in selector ? selector.matchLabels : selector) as Record<string, string> | undefined;
  if (!want) return false;
  return Object.entries(want).every(([k, v]) => labels[k] === v);
}

/** A percentage ("50%") or count of `total`, rounded up as the disruption controller does for maxUnavailable. */
export function scaled(v: number | string, total: number, roundUp: boolean): number {
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  if (!m) return Number(v);
  const x = (Number(m[1]) * total) / 100;
  return roundUp ? Math.ceil(x) : Math.floor(x);
}
