// Whether a pod's volumes leave an image stand-in's binds visible: the runner mounts a container's
// volumes over the image's binds, so a bind at or under a volume's mountPath is hidden in the pod.
import { posix } from 'node:path';

interface Bind {
  host: string;
  /** Path inside the container. */
  path: string;
}

interface VolumeMount {
  name: string;
  mountPath: string;
}

/** Throws, naming the bind and the volume, when a volume mount would hide one of `binds`; `where` names the container. */
export function refuseHiddenBinds(where: string, binds: readonly Bind[], mounts: readonly VolumeMount[]): void {
  for (const b of binds) {
    const m = mounts.find((x) => isAtOrUnder(b.path, x.mountPath));
    if (m) {
      throw new Error(
        `${where}: the image binds ${b.host} at ${b.path}, which volume ${m.name} (mountPath ${m.mountPath}) would hide; ` +
          'bind it in the image stand-in (images.ts) at a path no volume of the manifests mounts over',
      );
    }
  }
}

function isAtOrUnder(path: string, dir: string): boolean {
  const withSlash = (p: string): string => {
    const n = posix.normalize(p);
    return n.endsWith('/') ? n : `${n}/`;
  };
  return withSlash(path).startsWith(withSlash(dir));
}
