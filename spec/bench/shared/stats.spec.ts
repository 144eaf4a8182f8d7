import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { latencyStats, mean, median, microStats, pairedRatio, percentile } from '../../../bench/shared/stats.ts';

const p = suite('percentile');
p('should take p in [0, 1] by nearest rank', () => {
  const sorted = Array.from({ length: 100 }, (_, i) => i + 1);
  assert.is(percentile(sorted, 0.5), 50);
  assert.is(percentile(sorted, 0.99), 99);
  assert.is(percentile(sorted, 1), 100);
  assert.is(percentile(sorted, 0), 1);
  assert.is(percentile([4, 8], 0.5), 4);
  assert.ok(Number.isNaN(percentile([], 0.5)));
});
p('should read typed arrays as well', () => {
  assert.is(percentile(Float64Array.from([1, 2, 3]), 0.5), 2);
});
p.run();

const m = suite('median');
m('should average the two middle values of an even count, unlike the nearest-rank p50', () => {
  assert.is(median([3, 1, 2, 10]), 2.5);
  assert.is(median([5, 1, 3]), 3);
  assert.is(mean([1, 2, 3, 6]), 3);
});
m.run();

const s = suite('latencyStats');
s('should keep the samples in milliseconds, and microStats turn them into microseconds', () => {
  const samples = [2, 1, 4, 3];
  assert.equal(latencyStats(samples), { n: 4, p50Ms: 2, p99Ms: 4, meanMs: 2.5 });
  assert.equal(microStats(samples), { n: 4, p50Us: 2000, p99Us: 4000, meanUs: 2500 });
  assert.equal(latencyStats([]).meanMs, 0);
});
s.run();

const r = suite('pairedRatio');
r('should take the nearest-rank median of the per-pair ratios, leaving out a pair that failed', () => {
  assert.is(pairedRatio([2, 6, 4, NaN], [1, 2, 1, 1]), 3);
  assert.is(pairedRatio([10, 20, 30], [10, 10, 10]), 2);
});
r.run();
