import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { naturalLess } from './natsort.ts';
import { formatGoG } from './go-compat.ts';
import { keepRatioSample, labelsHash, xxhash64 } from './xxhash.ts';

describe('natural order (sort_by_label)', () => {
  it('compares digit runs as numbers and other runs as strings', () => {
    const sorted = ['4m1000', '4m5', '4m600', 'a10', 'a2', 'b'].sort((a, b) => (naturalLess(a, b) ? -1 : naturalLess(b, a) ? 1 : 0));
    assert.deepEqual(sorted, ['4m5', '4m600', '4m1000', 'a2', 'a10', 'b']);
    assert.ok(naturalLess('1.2.3', '1.11.3'));
    assert.ok(!naturalLess('1.11.3', '1.2.3'));
  });
});

describe('xxhash64 and labels.Hash', () => {
  it('matches the reference xxHash64 values', () => {
    assert.equal(xxhash64(Buffer.from('')).toString(16), 'ef46db3751d8e999');
    assert.equal(xxhash64(Buffer.from('abc')).toString(16), '44bc2cf5ad770999');
    assert.equal(xxhash64(Buffer.from('Nobody inspects the spammish repetition')).toString(16), 'fbcea83c8a378bf1');
  });

  it('hashes the length-prefixed names and values (stringlabels), and ratio sampling splits into complements', () => {
    const ls = [{ name: 'a', value: 'b' }];
    assert.equal(labelsHash(ls), xxhash64(Buffer.from([1, 0x61, 1, 0x62])));
    const long = 'v'.repeat(300);
    assert.equal(labelsHash([{ name: 'a', value: long }]), xxhash64(Buffer.concat([Buffer.from([1, 0x61, 0xff, 300 & 0xff, 300 >> 8, 0]), Buffer.from(long)])));
    for (const offset of [0, 0.2, 0.5, 0.99]) {
      assert.notEqual(keepRatioSample(0.3, offset), keepRatioSample(-0.7, offset));
    }
    assert.ok(keepRatioSample(1, 0.999) && keepRatioSample(-1, 0));
  });
});

describe("Go's %g", () => {
  it('prints like fmt %g', () => {
    assert.equal(formatGoG(1.1), '1.1');
    assert.equal(formatGoG(-1), '-1');
    assert.equal(formatGoG(1e21), '1e+21');
    assert.equal(formatGoG(0.00001), '1e-05');
    assert.equal(formatGoG(123456789), '123456789');
    assert.equal(formatGoG(NaN), 'NaN');
  });
});
