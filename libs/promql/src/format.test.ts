import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatTimestamp, formatValue, toPrometheusData } from './format.ts';

describe('format', () => {
  it("formats values as Prometheus' API does: Go's 'f' format, 'e' below 1e-6 and from 1e21 on", () => {
    const cases: [number, string][] = [
      [0, '0'],
      [-0, '-0'],
      [1, '1'],
      [-2.5, '-2.5'],
      [0.1, '0.1'],
      [1 / 3, '0.3333333333333333'],
      [1e-6, '0.000001'],
      [9.99e-7, '9.99e-07'],
      [1e21, '1e+21'],
      [1.5e300, '1.5e+300'],
      [1e-7, '1e-07'],
      [-1.234e-10, '-1.234e-10'],
      [1e-128, '1e-128'],
      [5e-324, '5e-324'],
      [123456789012345680000, '123456789012345680000'],
      [NaN, 'NaN'],
      [Infinity, '+Inf'],
      [-Infinity, '-Inf'],
    ];
    for (const [v, s] of cases) assert.equal(formatValue(v), s, String(v));
  });

  it('writes timestamps as seconds with millisecond precision', () => {
    assert.equal(formatTimestamp(1_700_000_000_123), 1700000000.123);
    assert.equal(JSON.stringify(formatTimestamp(1_700_000_000_100)), '1700000000.1');
    assert.equal(formatTimestamp(-1500), -1.5);
  });

  it('builds the API data object, sorting matrix series by labels', () => {
    const data = toPrometheusData({
      resultType: 'matrix',
      result: [
        { metric: [{ name: 'a', value: '2' }], floats: [{ t: 1000, f: 1 }] },
        {
          metric: [{ name: 'a', value: '1' }],
          floats: [
            { t: 1000, f: NaN },
            { t: 2000, f: -Infinity },
          ],
        },
      ],
    });
    assert.equal(
      JSON.stringify(data),
      '{"resultType":"matrix","result":[{"metric":{"a":"1"},"values":[[1,"NaN"],[2,"-Inf"]]},{"metric":{"a":"2"},"values":[[1,"1"]]}]}',
    );
    assert.deepEqual(toPrometheusData({ resultType: 'scalar', result: { t: 1500, f: 2 } }), { resultType: 'scalar', result: [1.5, '2'] });
  });
});
