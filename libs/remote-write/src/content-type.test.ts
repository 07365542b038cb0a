import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkContentEncoding, parseContentType, RemoteWriteError } from './index.ts';

function is415(reason: string, re: RegExp) {
  return (err: unknown) => {
    assert.ok(err instanceof RemoteWriteError, String(err));
    assert.equal(err.code, `err-strata-${reason}`);
    assert.equal(err.kind, 'unsupported-media-type');
    assert.match(err.message, re);
    return true;
  };
}

test('remote write 1.0: missing type, bare protobuf, or proto=prometheus.WriteRequest', () => {
  assert.equal(parseContentType(undefined), 'v1');
  assert.equal(parseContentType(''), 'v1');
  assert.equal(parseContentType('application/x-protobuf'), 'v1');
  assert.equal(parseContentType('Application/X-Protobuf ; charset=binary'), 'v1');
  assert.equal(parseContentType('application/x-protobuf;proto=prometheus.WriteRequest'), 'v1');
  assert.equal(parseContentType('application/x-protobuf; proto="prometheus.WriteRequest"'), 'v1');
});

test('remote write 2.0 by its proto parameter', () => {
  assert.equal(parseContentType('application/x-protobuf;proto=io.prometheus.write.v2.Request'), 'v2');
  assert.equal(parseContentType('application/x-protobuf; PROTO = io.prometheus.write.v2.Request'), 'v2');
});

test('other media types and protos are 415', () => {
  assert.throws(
    () => parseContentType('application/json'),
    is415('unsupported-media-type', /unsupported content type "application\/json"; remote write needs application\/x-protobuf/),
  );
  assert.throws(() => parseContentType('text/plain; proto=prometheus.WriteRequest'), is415('unsupported-media-type', /text\/plain/));
  assert.throws(
    () => parseContentType('application/x-protobuf;proto=io.prometheus.write.v3.Request'),
    is415('unsupported-media-type', /unsupported remote write message "io.prometheus.write.v3.Request"/),
  );
  assert.throws(() => parseContentType('application/x-protobuf;proto'), is415('unsupported-media-type', /malformed parameter "proto"/));
});

test('content encoding: snappy or none, anything else 415', () => {
  checkContentEncoding(undefined);
  checkContentEncoding('');
  checkContentEncoding('snappy');
  checkContentEncoding(' Snappy ');
  for (const enc of ['gzip', 'zstd', 'identity', 'snappy, gzip']) {
    assert.throws(() => checkContentEncoding(enc), is415('unsupported-content-encoding', /unsupported content encoding .*Content-Encoding: snappy/));
  }
  assert.equal(parseContentType('application/x-protobuf', 'snappy'), 'v1');
  assert.throws(() => parseContentType('application/x-protobuf', 'gzip'), is415('unsupported-content-encoding', /gzip/));
});
